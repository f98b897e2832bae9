import AmberLock
import AmberSyncProtocol
import AmberSyncTestSupport
import AmberTestSupport
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import AmberSyncServer

/// An upload sent in parts (`Content-Range`) is hashed as its parts arrive, on every backend:
/// the part that ends it does not read the held bytes again, unless they were written where
/// this server could not hash them.
@Suite("Attachments in parts", .boundedConcurrency)
struct AttachmentPartsTests {
    /// 5 MiB and a little: more chunks than a PostgreSQL upload writes in one statement.
    static let bytes = (0..<(5 * 1_048_576 + 4_321)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 9) }

    func withServer(_ backend: Backend, _ body: @Sendable (Harness, SyncServer) async throws -> Void) async throws {
        try await backend.withDatabase { test in
            let logger = Logger.quietTests
            let server = SyncServer(database: test.database, logger: logger)
            try await server.makeApplication().test(.router) { client in
                try await body(Harness(client: client, database: test.database), server)
            }
        }
    }

    /// Sends bytes `range` of `bytes` as a part of the upload of `hash`.
    static func part(
        _ harness: Harness, _ bytes: [UInt8], _ range: Range<Int>, hash: String, token: String
    ) async throws -> TestResponse {
        try await harness.send(
            .put, "/v1/attachments/\(hash)", token: token, body: Array(bytes[range]),
            headers: [.contentRange: "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(bytes.count)"])
    }

    @Test(arguments: Backend.allCases)
    func partsSentOneAfterAnotherAreCheckedWithoutReadingTheHeldBytesAgain(backend: Backend) async throws {
        try await withServer(backend) { harness, server in
            let token = try await harness.addUser("ann")
            let bytes = Self.bytes
            let hash = AttachmentTests.hash(bytes)
            let ends = [0, 2 * 1_048_576, 4 * 1_048_576, bytes.count]
            for index in 1..<ends.count {
                let response = try await Self.part(
                    harness, bytes, ends[index - 1]..<ends[index], hash: hash, token: token)
                let expected: HTTPResponse.Status = index == ends.count - 1 ? .created : .accepted
                #expect(response.status == expected, "\(response.text)")
            }
            #expect(server.uploadHashes.heldBytesRead == 0)
            #expect(server.uploadHashes.count == 0, "an upload's hash is forgotten once it is used")
            let read = try await harness.send(.get, "/v1/attachments/\(hash)", token: token).body
            #expect(bytesDiffer(read.readableBytesView, bytes) == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func heldBytesThisServerDidNotHashAreReadAgainByThePartThatEndsTheFile(backend: Backend) async throws {
        try await withServer(backend) { harness, server in
            let (token, user, storage) = try await AttachmentTests.ann(in: harness.database)
            let bytes = Self.bytes
            let hash = AttachmentTests.hash(bytes)
            // Written by another server process, say: this one never saw the bytes.
            let elsewhere = try await storage.beginAttachment(hash, for: user, at: 0)
            try await elsewhere.write(ByteBuffer(bytes: bytes[..<(2 * 1_048_576)]))
            #expect(await elsewhere.suspend() == 2 * 1_048_576)
            let response = try await Self.part(harness, bytes, (2 * 1_048_576)..<bytes.count, hash: hash, token: token)
            #expect(response.status == .created, "\(response.text)")
            #expect(server.uploadHashes.heldBytesRead == 2 * 1_048_576)
        }
    }

    /// Another server process starts the upload over with other bytes of the same length after
    /// this one hashed a part, and its request ends with the bytes unfinished, or its process is
    /// killed first: the hash this one remembers is not taken for the new bytes. (A folder names
    /// an upload's bytes only when a request leaves them unfinished, so starting over must still
    /// drop the old name; on PostgreSQL an upload's identity is its id, new whenever it starts
    /// over, and a killed request's last chunks are not written, hence SQLite only there.)
    @Test(arguments: [(Backend.sqlite, false), (.postgres, false), (.sqlite, true)])
    func anUploadStartedOverElsewhereIsNotCheckedWithTheHashOfItsOldBytes(backend: Backend, killed: Bool)
        async throws
    {
        try await withServer(backend) { harness, server in
            let (token, user, storage) = try await AttachmentTests.ann(in: harness.database)
            let bytes = Self.bytes
            let hash = AttachmentTests.hash(bytes)
            let split = 2 * 1_048_576
            let first = try await Self.part(harness, bytes, 0..<split, hash: hash, token: token)
            #expect(first.status == .accepted)
            #expect(server.uploadHashes.count == 1)
            do {
                let other = try await storage.beginAttachment(hash, for: user, at: 0)
                try await other.write(ByteBuffer(repeating: 9, count: split))
                // Killed: neither suspended nor finished, dropped as a killed process drops it.
                if !killed { #expect(await other.suspend() == Int64(split)) }
            }
            #expect(try await storage.heldUploadBytes(hash, for: user) == Int64(split))

            let rest = try await Self.part(harness, bytes, split..<bytes.count, hash: hash, token: token)
            #expect(rest.status == .badRequest, "\(rest.text)")
            #expect(try rest.errorBody().error.contains("nothing was kept"))
            #expect(try await harness.send(.head, "/v1/attachments/\(hash)", token: token).status == .notFound)
            #expect(server.uploadHashes.heldBytesRead == Int64(split))
        }
    }

    /// An upload sent whole in one request leaves nothing behind in the folder's `incoming/`,
    /// and creates no file there but its own while it runs.
    @Test
    func aWholeUploadCreatesOneFileInTheFolder() async throws {
        try await Backend.sqlite.withDatabase { test in
            let (_, user, storage) = try await AttachmentTests.ann(in: test.database)
            let incoming = try #require(test.database as? SQLiteSyncDatabase).attachments.path + "/incoming"
            let bytes = Self.bytes
            let upload = try await storage.beginAttachment(AttachmentTests.hash(bytes), for: user, at: 0)
            try await upload.write(ByteBuffer(bytes: bytes))
            #expect(try FileManager.default.contentsOfDirectory(atPath: incoming).count == 1)
            #expect(upload.heldBytesIdentity == nil)
            #expect(try await upload.finish())
            #expect(try FileManager.default.contentsOfDirectory(atPath: incoming).isEmpty)
        }
    }

    /// An upload that starts over but cannot remove the old name of its bytes (here a folder
    /// stands in its place) is refused: a stale name could make the server take a remembered
    /// hash for other bytes.
    @Test func anUploadWhoseOldNameCannotBeRemovedDoesNotStart() async throws {
        try await Backend.sqlite.withDatabase { test in
            let (_, user, storage) = try await AttachmentTests.ann(in: test.database)
            let folder = try #require(test.database as? SQLiteSyncDatabase).attachments.path
            let hash = AttachmentTests.hash(Self.bytes)
            let name = folder + "/incoming/\(user.id)-\(hash).generation"
            try FileManager.default.createDirectory(atPath: name, withIntermediateDirectories: true)
            await #expect(throws: (any Error).self) { try await storage.beginAttachment(hash, for: user, at: 0) }
            #expect(try await storage.heldUploadBytes(hash, for: user) == 0)
            try FileManager.default.removeItem(atPath: name)
            let upload = try await storage.beginAttachment(hash, for: user, at: 0)
            try await upload.write(ByteBuffer(bytes: Self.bytes))
            #expect(try await upload.finish())
        }
    }

    /// An upload of bytes the user already has (begun before the first one ended, say) finishes
    /// as not new: the attachment keeps its bytes, and the second upload leaves nothing behind.
    @Test(arguments: Backend.allCases)
    func anUploadOfBytesAlreadyKeptFinishesAsNotNewAndLeavesNothing(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let (_, user, storage) = try await AttachmentTests.ann(in: test.database)
            let bytes = Self.bytes
            let hash = AttachmentTests.hash(bytes)
            let first = try await storage.beginAttachment(hash, for: user, at: 0)
            try await first.write(ByteBuffer(bytes: bytes))
            #expect(try await first.finish())
            let second = try await storage.beginAttachment(hash, for: user, at: 0)
            try await second.write(ByteBuffer(bytes: bytes))
            #expect(try await second.finish() == false)
            let read = try await storage.readAll(hash, for: user, range: 0..<Int64(bytes.count))
            #expect(bytesDiffer(read, bytes) == nil)
            #expect(try await storage.heldUploadBytes(hash, for: user) == 0)
            if backend == .postgres, let url = test.location {
                let chunks = try PostgresTestServer.psql(url, "SELECT count(*) FROM amber_sync_attachment_chunks")
                #expect(chunks.trimmingCharacters(in: .whitespacesAndNewlines) == "6", "the first upload's 6 chunks")
                let uploads = try PostgresTestServer.psql(url, "SELECT count(*) FROM amber_sync_attachment_uploads")
                #expect(uploads.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
            }
        }
    }

    /// An upload written in small pieces keeps its whole chunks in order, however the pieces
    /// fall across the chunks and the statements that write them.
    @Test(arguments: Backend.allCases)
    func anUploadWrittenInSmallPiecesHoldsEveryByteInOrder(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let (_, user, storage) = try await AttachmentTests.ann(in: test.database)
            let bytes = Self.bytes
            let hash = AttachmentTests.hash(bytes)
            let upload = try await storage.beginAttachment(hash, for: user, at: 0)
            var start = 0
            while start < bytes.count {
                let end = min(start + 65_000, bytes.count)
                try await upload.write(ByteBuffer(bytes: bytes[start..<end]))
                start = end
            }
            #expect(try await upload.finish())
            let read = try await storage.readAll(hash, for: user, range: 1_000..<Int64(bytes.count))
            #expect(bytesDiffer(read, bytes[1_000...]) == nil)
        }
    }
}
