import Amber
import AmberSQLite
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Testing

@testable import AmberSync

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A device whose notes carry attachments.
final class AttachmentDevice: Sendable {
    let storage: SQLiteStorage
    let notes: IdentityStore<AttachedNote>
    let client: SyncClient

    init(server: URL, token: String) throws {
        storage = try SQLiteStorage(path: temporaryDirectory().appendingPathComponent("device.sqlite").path)
        notes = try IdentityStore(key: "notes", storage: storage)
        client = try SyncClient(storage: storage, server: server, token: token)
        try client.add(notes)
    }
}

extension AttachmentDevice {
    /// Adds a note carrying a new attachment of `size` bytes of a generator (`seed` varies them);
    /// the bytes and the attachment.
    func addNote(_ text: String, withFileOf size: Int, seed: Int) throws -> (bytes: Data, attachment: Attachment) {
        let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* seed &+ $0 >> 11 &+ 1) })
        let attachment = try client.attachments.add(bytes, mediaType: "application/octet-stream")
        try notes.add(AttachedNote(id: UUID(), text: text, photo: attachment, files: []))
        return (bytes, attachment)
    }
}

@Suite("Attachments through sync", .boundedConcurrency)
struct AttachmentSyncTests {
    static let photo = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })

    @Test(arguments: Backend.allCases)
    func anAttachmentGoesUpBeforeItsRecordAndComesDownAfterThePull(backend: Backend) async throws {
        let server = try await TestServer.start(backend)
        let token = try await server.addUser()
        let day = try AttachmentDevice(server: server.url, token: token)
        let night = try AttachmentDevice(server: server.url, token: token)
        let photo = try day.client.attachments.add(Self.photo, mediaType: "image/jpeg", fileName: "ice-cream.jpg")
        let note = AttachedNote(id: UUID(), text: "ice cream", photo: photo, files: [])
        try day.notes.add(note)
        let dayEvents = Collected(day.client.events())
        try await day.client.sync()
        // The server has the bytes under the user's namespace.
        let storage = try #require(server.database as? any AttachmentStorage)
        let user = try #require(try await server.database.user(forToken: token))
        #expect(try await storage.attachmentSize(photo.sha256, for: user) == Int64(Self.photo.count))
        // Events reach a subscriber asynchronously, maybe after `sync()` returned.
        #expect(
            await eventually {
                dayEvents.values.contains {
                    if case .progress(let p) = $0 { p.phase == .uploadingAttachments } else { false }
                }
            })

        let nightEvents = Collected(night.client.events())
        try await night.client.sync()
        #expect(night.notes[id: note.id] == note)
        let url = try #require(night.client.attachments.fileURL(for: photo))
        #expect(bytesDiffer(try Data(contentsOf: url), Self.photo) == nil)
        #expect(
            await eventually {
                nightEvents.values.contains {
                    if case .progress(let p) = $0 { p.phase == .downloadingAttachments } else { false }
                }
            })

        // An edit of the text sends no attachment again.
        dayEvents.cancel()
        let again = Collected(day.client.events())
        try day.notes.add(note.with(text: "ice cream!"))
        try await day.client.sync()
        #expect(
            !again.values.contains { if case .progress(let p) = $0 { p.phase == .uploadingAttachments } else { false } }
        )
        again.cancel()
        nightEvents.cancel()
        await server.stop()
    }

    @Test func aPolicyLeavesAttachmentsToBeFetchedOnDemand() async throws {
        let server = try await TestServer.start()
        let token = try await server.addUser()
        let day = try AttachmentDevice(server: server.url, token: token)
        let small = try day.client.attachments.add(Data("small".utf8), mediaType: "text/plain", fileName: "a.txt")
        let large = try day.client.attachments.add(Self.photo, mediaType: "image/jpeg", fileName: "b.jpg")
        try day.notes.add(AttachedNote(id: UUID(), text: "two", photo: nil, files: [small, large]))
        try await day.client.sync()

        let night = try AttachmentDevice(server: server.url, token: token)
        night.client.attachmentDownloads = .when { $0.size < 1_000 }
        try await night.client.sync()
        #expect(night.client.attachments.contains(small))
        #expect(!night.client.attachments.contains(large))
        // Asked for, it is fetched.
        #expect(try await night.client.data(for: large) == Self.photo)

        let other = try AttachmentDevice(server: server.url, token: token)
        other.client.attachmentDownloads = .onDemand
        try await other.client.sync()
        #expect(other.client.attachments.storedHashes.isEmpty)
        #expect(try await other.client.data(for: small) == Data("small".utf8))
        await server.stop()
    }

    @Test func aCutDownloadResumesAndBadBytesAreNeverKept() async throws {
        let server = try await TestServer.start()
        let token = try await server.addUser()
        let day = try AttachmentDevice(server: server.url, token: token)
        let photo = try day.client.attachments.add(Self.photo, mediaType: "image/jpeg")
        try day.notes.add(AttachedNote(id: UUID(), text: "photo", photo: photo, files: []))
        try await day.client.sync()

        let night = try AttachmentDevice(server: server.url, token: token)
        night.client.attachmentDownloads = .onDemand
        try await night.client.sync()
        // A download cut off after 100,000 bytes left them in its partial file.
        let downloads = night.client.attachments.folder.appendingPathComponent("downloads")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        let partial = downloads.appendingPathComponent(photo.sha256 + ".part")
        try Self.photo.prefix(100_000).write(to: partial)
        #expect(try await night.client.data(for: photo) == Self.photo)
        #expect(!FileManager.default.fileExists(atPath: partial.path))

        // A partial file whose bytes are wrong: the whole is refused, and nothing is kept under the hash.
        let third = try AttachmentDevice(server: server.url, token: token)
        third.client.attachmentDownloads = .onDemand
        try await third.client.sync()
        let thirdDownloads = third.client.attachments.folder.appendingPathComponent("downloads")
        try FileManager.default.createDirectory(at: thirdDownloads, withIntermediateDirectories: true)
        try Data(repeating: 0, count: 100_000).write(to: thirdDownloads.appendingPathComponent(photo.sha256 + ".part"))
        await #expect(throws: SyncError.self) { try await third.client.data(for: photo) }
        #expect(!third.client.attachments.contains(photo))
        // The next try starts over and succeeds.
        #expect(try await third.client.data(for: photo) == Self.photo)
        await server.stop()
    }

    @Test func anAttachmentTheServerDoesNotHaveIsA404() async throws {
        let server = try await TestServer.start()
        let token = try await server.addUser()
        let device = try AttachmentDevice(server: server.url, token: token)
        let missing = Attachment(sha256: String(repeating: "ab", count: 32), size: 3, mediaType: "text/plain")
        await #expect { try await device.client.data(for: missing) } throws: {
            ($0 as? SyncError)?.kind == .server(status: 404)
        }
        await server.stop()
    }

    @Test func unreferencedLocalFilesGoAfterTheGracePeriodButNeverAPendingRecordsFile() async throws {
        let device = try AttachmentDevice(server: URL(string: "http://127.0.0.1:9")!, token: "unused")
        let named = try device.client.attachments.add(Data("named".utf8), mediaType: "text/plain")
        let unnamed = try device.client.attachments.add(Data("unnamed".utf8), mediaType: "text/plain")
        // Pending: never synced.
        try device.notes.add(AttachedNote(id: UUID(), text: "pending", photo: named, files: []))
        // Within the grace period nothing goes.
        #expect(try device.client.removeUnreferencedAttachments(gracePeriod: 3_600) == 0)
        #expect(try device.client.removeUnreferencedAttachments(gracePeriod: -1) == 1)
        #expect(device.client.attachments.contains(named))
        #expect(!device.client.attachments.contains(unnamed))
    }

    /// A file of several parts (``AttachmentTransfers/partSize``) goes up in one `PUT` on Linux,
    /// read from the file as the connection takes it, and in a `PUT` per part elsewhere; either
    /// way it arrives whole, every byte received once.
    @Test(arguments: Backend.allCases)
    func aFileOfSeveralPartsGoesUpInOneRequestOnLinux(backend: Backend) async throws {
        let server = try await TestServer.start(backend)
        let token = try await server.addUser()
        let day = try AttachmentDevice(server: server.url, token: token)
        let size = 2 * AttachmentTransfers.partSize + 12_345
        let (bytes, file) = try day.addNote("large", withFileOf: size, seed: 7)
        try await day.client.sync()

        let metrics = try await AttachmentResumeTests.metrics(at: server.url)
        #expect(
            try await AttachmentResumeTests.metric("amber_sync_attachment_bytes_received_total", at: server.url)
                == Double(size))
        // Each answered PUT: `201` for the one that ends the file, `202` for a part before it.
        let puts = metrics.split(separator: "\n").filter {
            $0.hasPrefix("amber_sync_requests_total{") && $0.contains("attachments/") && !$0.contains("missing")
                && ($0.contains("\"201\"") || $0.contains("\"202\""))
        }
        let count = puts.reduce(0) { $0 + (Double($1.split(separator: " ").last ?? "") ?? 0) }
        #if os(Linux)
            #expect(count == 1, "one request for the whole file: \(puts)")
        #else
            #expect(count == 3, "a request per part: \(puts)")
        #endif

        let night = try AttachmentDevice(server: server.url, token: token)
        try await night.client.sync()
        let url = try #require(night.client.attachments.fileURL(for: file))
        #expect(bytesDiffer(try Data(contentsOf: url), bytes) == nil)
        await server.stop()
    }

    /// A stored file that no longer holds its bytes (cut short behind the store's back) fails the
    /// sync with a storage error naming the file; the server keeps nothing under the hash, and
    /// the record that names it is not pushed.
    @Test func aStoredFileCutShortFailsTheUploadAndTheRecordStays() async throws {
        let server = try await TestServer.start()
        let token = try await server.addUser()
        let day = try AttachmentDevice(server: server.url, token: token)
        let (bytes, file) = try day.addNote("cut", withFileOf: 3 << 20, seed: 13)
        let stored = try #require(day.client.attachments.fileURL(for: file))
        let handle = try FileHandle(forWritingTo: stored)
        try handle.truncate(atOffset: UInt64(bytes.count - 1_000))
        try handle.close()

        await #expect {
            try await day.client.sync()
        } throws: { error in
            guard let error = error as? SyncError else { return false }
            return error.kind == .storage && error.description.contains(stored.lastPathComponent)
        }
        let storage = try #require(server.database as? any AttachmentStorage)
        let user = try #require(try await server.database.user(forToken: token))
        #expect(try await storage.attachmentSize(file.sha256, for: user) == nil)
        #expect(try await server.database.pull(for: user, after: 0, limit: 10).changes.isEmpty)
        await server.stop()
    }

    /// An upload the server holds part of (a part sent by an earlier request) is finished from
    /// where the server's bytes end: the client sends only the rest, in one request on Linux.
    @Test(arguments: Backend.allCases)
    func anUploadTheServerHoldsPartOfIsFinishedFromWhereItStopped(backend: Backend) async throws {
        let server = try await TestServer.start(backend)
        let token = try await server.addUser()
        let day = try AttachmentDevice(server: server.url, token: token)
        let size = 3 * AttachmentTransfers.partSize + 777
        let (bytes, file) = try day.addNote("resumed", withFileOf: size, seed: 5)

        // The first part, sent by hand: the server keeps it and answers 202.
        let held = AttachmentTransfers.partSize
        var request = URLRequest(url: server.url.appendingPathComponent("v1/attachments/\(file.sha256)"))
        request.httpMethod = "PUT"
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("bytes 0-\(held - 1)/\(size)", forHTTPHeaderField: "Content-Range")
        request.httpBody = bytes.prefix(held)
        let (_, response) = try await AttachmentResumeTests.load(request)
        #expect(response.statusCode == 202)

        try await day.client.sync()
        #expect(
            try await AttachmentResumeTests.metric("amber_sync_attachment_bytes_received_total", at: server.url)
                == Double(size), "the client sent only the bytes after the \(held) held")
        let night = try AttachmentDevice(server: server.url, token: token)
        try await night.client.sync()
        let url = try #require(night.client.attachments.fileURL(for: file))
        #expect(bytesDiffer(try Data(contentsOf: url), bytes) == nil)
        await server.stop()
    }

    /// A `PUT` the server refuses before reading its body (`413`: over `--max-attachment`) fails
    /// the sync, and leaves the stored file open in no descriptor of the process, however often
    /// it is tried: the request closes what it read the body from.
    @Test func anUploadRefusedBeforeItsBodyLeavesNoFileOpen() async throws {
        let database = try SQLiteSyncDatabase(path: temporaryDirectory().appendingPathComponent("server.sqlite").path)
        let token = try await database.addUser(named: "ann")
        var limits = SyncServerLimits()
        limits.maximumAttachmentSize = 1 << 20
        let running = try await SyncServer(database: database, port: 0, limits: limits).start()
        let device = try AttachmentDevice(server: URL(string: "http://127.0.0.1:\(running.port)")!, token: token)
        let (_, file) = try device.addNote("too large", withFileOf: 3 << 20, seed: 3)
        let stored = try #require(device.client.attachments.fileURL(for: file)).resolvingSymlinksInPath().path

        for _ in 0..<5 {
            await #expect {
                try await device.client.sync()
            } throws: { ($0 as? SyncError)?.kind == .server(status: 413) }
        }
        #if os(Linux)
            let open = await eventually(within: 5) { Self.descriptors(openOn: stored) == 0 }
            #expect(open, "\(Self.descriptors(openOn: stored)) descriptors still hold \(stored)")
        #endif
        await running.stop()
    }

    /// How many of this process's file descriptors are open on `path` (Linux's `/proc/self/fd`).
    static func descriptors(openOn path: String) -> Int {
        let folder = "/proc/self/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)")) == path }
            .count
    }
}
