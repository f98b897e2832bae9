import Amber
import AmberSQLite
import AmberSync
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Testing

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
}
