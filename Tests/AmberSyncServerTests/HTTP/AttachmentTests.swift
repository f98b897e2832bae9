import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// `PUT`, `HEAD` and `GET /v1/attachments/{sha256}`, on every backend.
@Suite("Attachments over HTTP")
struct AttachmentTests {
    static func hash(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    /// Bytes that span several chunks of either backend (1 MiB on PostgreSQL, 256 KiB read in a folder).
    static let large = (0..<(2 * 1_048_576 + 12_345)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }

    func withServer(
        _ backend: Backend, limits: SyncServerLimits = SyncServerLimits(),
        _ body: @Sendable (Harness) async throws -> Void
    ) async throws {
        try await backend.withDatabase { test in
            var logger = Logger(label: "amber-sync-tests")
            logger.logLevel = .critical
            let server = SyncServer(database: test.database, logger: logger, limits: limits)
            try await server.makeApplication().test(.router) { client in
                try await body(Harness(client: client, database: test.database))
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func anUploadIsKeptOnceAndReadWholeOrByRange(backend: Backend) async throws {
        try await withServer(backend) { harness in
            let token = try await harness.addUser("ann")
            let bytes = Self.large
            let path = "/v1/attachments/\(Self.hash(bytes))"
            #expect(try await harness.send(.head, path, token: token).status == .notFound)
            let put = try await harness.send(.put, path, token: token, body: bytes)
            #expect(put.status == .created, "\(put.text)")
            // Idempotent: the same bytes again change nothing.
            #expect(try await harness.send(.put, path, token: token, body: bytes).status == .ok)
            let head = try await harness.send(.head, path, token: token)
            #expect(head.status == .ok)
            #expect(head.headers[.contentLength] == String(bytes.count))
            // Streamed as they are, even to a client that accepts gzip.
            let get = try await harness.send(.get, path, token: token, headers: [.acceptEncoding: "gzip"])
            #expect(get.status == .ok)
            #expect(get.headers[.contentEncoding] == nil)
            #expect(Array(get.body.readableBytesView) == bytes)
            // A resumed download: from a byte across a chunk boundary to the end.
            let from = 1_048_576 - 100
            let tail = try await harness.send(.get, path, token: token, headers: [.range: "bytes=\(from)-"])
            #expect(tail.status == .partialContent)
            #expect(tail.headers[.contentRange] == "bytes \(from)-\(bytes.count - 1)/\(bytes.count)")
            #expect(Array(tail.body.readableBytesView) == Array(bytes[from...]))
            let middle = try await harness.send(.get, path, token: token, headers: [.range: "bytes=10-19"])
            #expect(Array(middle.body.readableBytesView) == Array(bytes[10...19]))
            let suffix = try await harness.send(.get, path, token: token, headers: [.range: "bytes=-5"])
            #expect(Array(suffix.body.readableBytesView) == Array(bytes.suffix(5)))
            let past = try await harness.send(.get, path, token: token, headers: [.range: "bytes=\(bytes.count)-"])
            #expect(past.status == .rangeNotSatisfiable)
            #expect(past.headers[.contentRange] == "bytes */\(bytes.count)")
        }
    }

    @Test(arguments: Backend.allCases)
    func badInputIsRefusedAndNothingIsKept(backend: Backend) async throws {
        var limits = SyncServerLimits()
        limits.maximumAttachmentSize = 1_000
        limits.attachmentQuota = 1_500
        try await withServer(backend, limits: limits) { harness in
            let token = try await harness.addUser("ann")
            // A malformed hash.
            for bad in ["abc", String(repeating: "g", count: 64), String(repeating: "A", count: 64)] {
                for method in [HTTPRequest.Method.put, .get] {
                    let response = try await harness.send(method, "/v1/attachments/\(bad)", token: token, body: [1])
                    #expect(response.status == .badRequest, "\(method) \(bad)")
                    #expect(try response.errorBody().error.contains("SHA-256"))
                }
            }
            // Bytes that do not match the hash.
            let bytes: [UInt8] = Array("hello".utf8)
            let other = Self.hash(Array("world".utf8))
            let wrong = try await harness.send(.put, "/v1/attachments/\(other)", token: token, body: bytes)
            #expect(wrong.status == .badRequest)
            #expect(try wrong.errorBody().error.contains("nothing was kept"))
            #expect(try await harness.send(.head, "/v1/attachments/\(other)", token: token).status == .notFound)
            // Too large for the server's limit.
            let big = [UInt8](repeating: 7, count: 1_001)
            let tooLarge = try await harness.send(.put, "/v1/attachments/\(Self.hash(big))", token: token, body: big)
            #expect(tooLarge.status == .contentTooLarge)
            #expect(try tooLarge.errorBody().error.contains("1000 bytes"))
            #expect(
                try await harness.send(.head, "/v1/attachments/\(Self.hash(big))", token: token).status == .notFound)
            // Past the user's quota: 1,000 bytes kept, 600 more refused.
            let first = [UInt8](repeating: 1, count: 1_000)
            #expect(
                try await harness.send(.put, "/v1/attachments/\(Self.hash(first))", token: token, body: first).status
                    == .created)
            let second = [UInt8](repeating: 2, count: 600)
            let over = try await harness.send(.put, "/v1/attachments/\(Self.hash(second))", token: token, body: second)
            #expect(over.status == .contentTooLarge)
            #expect(try over.errorBody().error.contains("quota"))
            #expect(
                try await harness.send(.head, "/v1/attachments/\(Self.hash(second))", token: token).status == .notFound)
            // Without a token.
            #expect(
                try await harness.send(.get, "/v1/attachments/\(Self.hash(first))", token: nil).status == .unauthorized)
        }
    }

    @Test(arguments: Backend.allCases)
    func anotherUsersAttachmentIsNotFoundUntilTheyUploadTheBytes(backend: Backend) async throws {
        try await withServer(backend) { harness in
            let ann = try await harness.addUser("ann")
            let bob = try await harness.addUser("bob")
            let bytes = Array("ann's photo".utf8)
            let path = "/v1/attachments/\(Self.hash(bytes))"
            #expect(try await harness.send(.put, path, token: ann, body: bytes).status == .created)
            #expect(try await harness.send(.head, path, token: bob).status == .notFound)
            let get = try await harness.send(.get, path, token: bob)
            #expect(get.status == .notFound)
            #expect(try !get.errorBody().error.contains("ann"))
            // Bob proves he has the bytes by sending them: now they are his too.
            #expect(try await harness.send(.put, path, token: bob, body: bytes).status == .created)
            #expect(Array(try await harness.send(.get, path, token: bob).body.readableBytesView) == bytes)
        }
    }

    @Test(arguments: Backend.allCases)
    func anUploadNotFinishedIsNeverPresent(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let storage = try #require(test.database as? any AttachmentStorage)
            let token = try await test.database.addUser(named: "ann")
            let user = try #require(try await test.database.user(forToken: token))
            let hash = Self.hash([1, 2, 3])
            let cut = try await storage.beginAttachment(hash, for: user)
            try await cut.write(ByteBuffer(bytes: [1, 2]))
            // The connection is cut here: no finish.
            #expect(try await storage.attachmentSize(hash, for: user) == nil)
            await cut.cancel()
            #expect(try await storage.attachmentSize(hash, for: user) == nil)
            let whole = try await storage.beginAttachment(hash, for: user)
            try await whole.write(ByteBuffer(bytes: [1, 2, 3]))
            #expect(try await whole.finish())
            #expect(try await storage.attachmentSize(hash, for: user) == 3)
        }
    }

    @Test(arguments: Backend.allCases)
    func pruneRemovesAttachmentsNoLiveRecordNames(backend: Backend) async throws {
        try await withServer(backend) { harness in
            let token = try await harness.addUser("ann")
            let kept = Array("kept".utf8)
            let dropped = Array("dropped".utf8)
            for bytes in [kept, dropped] {
                #expect(
                    try await harness.send(.put, "/v1/attachments/\(Self.hash(bytes))", token: token, body: bytes)
                        .status == .created)
            }
            let reference: JSONValue = .object([
                "sha256": .string(Self.hash(kept)), "size": .integer(Int64(kept.count)),
                "mediaType": .string("text/plain"),
            ])
            _ = try await harness.push(
                [Mutation(mutationID: 1, collection: "notes", id: "1", baseVersion: nil, value: ["photo": reference])],
                token: token)
            let storage = try #require(harness.database as? any AttachmentStorage)
            // Everything unnamed since before a moment from now: the unnamed one goes.
            #expect(try await storage.pruneAttachments(unreferencedSince: Date().addingTimeInterval(60)) == 1)
            #expect(try await harness.send(.head, "/v1/attachments/\(Self.hash(kept))", token: token).status == .ok)
            #expect(
                try await harness.send(.head, "/v1/attachments/\(Self.hash(dropped))", token: token).status == .notFound
            )
            // Once the record is deleted, the other goes too.
            _ = try await harness.push(
                [Mutation(mutationID: 2, collection: "notes", id: "1", baseVersion: 1, value: nil)], token: token)
            #expect(try await storage.pruneAttachments(unreferencedSince: Date().addingTimeInterval(60)) == 1)
            #expect(
                try await harness.send(.head, "/v1/attachments/\(Self.hash(kept))", token: token).status == .notFound)
        }
    }
}
