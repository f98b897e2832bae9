import AmberLock
import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// `Amber-Upload-Offset`.
private let uploadOffset = HTTPField.Name(SyncHeader.uploadOffset)!

/// `PUT`, `HEAD` and `GET /v1/attachments/{sha256}`, on every backend.
@Suite("Attachments over HTTP", .boundedConcurrency)
struct AttachmentTests {
    static func hash(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    /// A new user "ann" of `database`, with its token and the database's attachment storage.
    static func ann(in database: any SyncDatabase) async throws -> (
        token: String, user: SyncUser, storage: any AttachmentStorage
    ) {
        let storage = try #require(database as? any AttachmentStorage)
        let token = try await database.addUser(named: "ann")
        return (token, try #require(try await database.user(forToken: token)), storage)
    }

    /// Bytes that span several chunks of either backend (1 MiB on PostgreSQL, 256 KiB read in a folder).
    static let large = (0..<(2 * 1_048_576 + 12_345)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }

    func withServer(
        _ backend: Backend, limits: SyncServerLimits = SyncServerLimits(),
        _ body: @Sendable (Harness) async throws -> Void
    ) async throws {
        try await backend.withDatabase { test in
            let logger = Logger.quietTests
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
            #expect(bytesDiffer(get.body.readableBytesView, bytes) == nil)
            // A resumed download: from a byte across a chunk boundary to the end.
            let from = 1_048_576 - 100
            let tail = try await harness.send(.get, path, token: token, headers: [.range: "bytes=\(from)-"])
            #expect(tail.status == .partialContent)
            #expect(tail.headers[.contentRange] == "bytes \(from)-\(bytes.count - 1)/\(bytes.count)")
            #expect(bytesDiffer(tail.body.readableBytesView, bytes[from...]) == nil)
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
            #expect(bytesDiffer(try await harness.send(.get, path, token: bob).body.readableBytesView, bytes) == nil)
        }
    }

    /// The bytes a backend holds of a cut upload of `written` bytes: PostgreSQL keeps whole chunks of 1 MiB.
    static func held(_ written: Int, on backend: Backend) -> Int64 {
        switch backend {
        case .sqlite: Int64(written)
        case .postgres: Int64(written / 1_048_576 * 1_048_576)
        }
    }

    @Test(arguments: Backend.allCases)
    func anUploadNotFinishedIsNeverPresentAndResumesWhereItsBytesEnd(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let (_, user, storage) = try await AttachmentTests.ann(in: test.database)
            let bytes = Self.large
            let hash = Self.hash(bytes)
            let cut = try await storage.beginAttachment(hash, for: user, at: 0)
            try await cut.write(ByteBuffer(bytes: bytes[..<1_500_000]))
            // The connection is cut here: no finish.
            let held = await cut.suspend()
            #expect(held == Self.held(1_500_000, on: backend))
            #expect(try await storage.attachmentSize(hash, for: user) == nil)
            #expect(try await storage.heldUploadBytes(hash, for: user) == held)
            // Resuming elsewhere than where the bytes held end is refused, and changes nothing.
            await #expect(throws: SyncServerError.uploadOffsetMismatch(hash: hash, held: held, sent: 10)) {
                try await storage.beginAttachment(hash, for: user, at: 10)
            }
            #expect(try await storage.heldUploadBytes(hash, for: user) == held)

            let resumed = try await storage.beginAttachment(hash, for: user, at: held)
            let before = LockedValue<[UInt8]>([])
            try await resumed.readHeld { chunk in before.withLock { $0 += chunk.readableBytesView } }
            #expect(bytesDiffer(before.withLock { $0 }, bytes[..<Int(held)]) == nil)
            try await resumed.write(ByteBuffer(bytes: bytes[Int(held)...]))
            #expect(try await resumed.finish())
            #expect(try await storage.attachmentSize(hash, for: user) == Int64(bytes.count))
            #expect(try await storage.heldUploadBytes(hash, for: user) == 0)
            let read = try await storage.readAll(hash, for: user, range: 0..<Int64(bytes.count))
            #expect(bytesDiffer(read, bytes) == nil)

            // A dropped upload holds nothing.
            let other = Self.hash([1, 2, 3])
            let dropped = try await storage.beginAttachment(other, for: user, at: 0)
            try await dropped.write(ByteBuffer(bytes: [1, 2]))
            await dropped.cancel()
            #expect(try await storage.heldUploadBytes(other, for: user) == 0)
            #expect(try await storage.attachmentSize(other, for: user) == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func aPutWithContentRangeContinuesTheUploadTheServerHolds(backend: Backend) async throws {
        try await withServer(backend) { harness in
            let token = try await harness.addUser("ann")
            let bytes = Self.large
            let path = "/v1/attachments/\(Self.hash(bytes))"
            let size = bytes.count
            // A part of the file is held, and not present.
            let first = 1_048_576 + 1_000
            let part = try await harness.send(
                .put, path, token: token, body: Array(bytes[..<first]),
                headers: [.contentRange: "bytes 0-\(first - 1)/\(size)"])
            #expect(part.status == .accepted, "\(part.text)")
            let held = Self.held(first, on: backend)
            #expect(part.headers[uploadOffset] == String(held))
            let head = try await harness.send(.head, path, token: token)
            #expect(head.status == .notFound)
            #expect(head.headers[uploadOffset] == String(held))
            #expect(try await harness.send(.get, path, token: token).status == .notFound)

            // Elsewhere than where the bytes held end: 409, naming them, and nothing is written.
            let wrong = try await harness.send(
                .put, path, token: token, body: Array(bytes[5...]),
                headers: [.contentRange: "bytes 5-\(size - 1)/\(size)"])
            #expect(wrong.status == .conflict)
            #expect(wrong.headers[uploadOffset] == String(held))
            #expect(try wrong.errorBody().error.contains("holds \(held) bytes"))
            // A Content-Range that is not one range within the file: 400.
            for bad in ["bytes 5-4/10", "bytes */10", "items 0-1/2", "bytes 0-9/9", "bytes -1-3/10", "bytes 0-1"] {
                let response = try await harness.send(
                    .put, path, token: token, body: [1, 2], headers: [.contentRange: bad])
                #expect(response.status == .badRequest, "\(bad)")
                #expect(try response.errorBody().error.contains("Content-Range"), "\(bad)")
            }
            // A body longer than its range: 400.
            let long = try await harness.send(
                .put, path, token: token, body: Array(bytes[Int(held)...]),
                headers: [.contentRange: "bytes \(held)-\(held)/\(size)"])
            #expect(long.status == .badRequest)
            // Larger than the server's limit.
            let huge = try await harness.send(
                .put, path, token: token, body: [1], headers: [.contentRange: "bytes 0-0/\(Int64(1) << 40)"])
            #expect(huge.status == .contentTooLarge)
            #expect(try await harness.send(.head, path, token: token).headers[uploadOffset] == String(held))

            // The rest: kept, checked over the whole file, and present.
            let rest = try await harness.send(
                .put, path, token: token, body: Array(bytes[Int(held)...]),
                headers: [.contentRange: "bytes \(held)-\(size - 1)/\(size)"])
            #expect(rest.status == .created, "\(rest.text)")
            #expect(bytesDiffer(try await harness.send(.get, path, token: token).body.readableBytesView, bytes) == nil)
            let metrics = try await harness.metrics()
            #expect(metrics["amber_sync_attachment_bytes_received_total"] == Double(first + size - Int(held)))
        }
    }

    @Test(arguments: Backend.allCases)
    func oneRequestTellsWhichAttachmentsAreMissing(backend: Backend) async throws {
        try await withServer(backend) { harness in
            let ann = try await harness.addUser("ann")
            let bob = try await harness.addUser("bob")
            let present = Array("present".utf8)
            #expect(
                try await harness.send(.put, "/v1/attachments/\(Self.hash(present))", token: ann, body: present).status
                    == .created)
            let partial = Self.large
            let first = 1_048_576 + 5
            let part = try await harness.send(
                .put, "/v1/attachments/\(Self.hash(partial))", token: ann, body: Array(partial[..<first]),
                headers: [.contentRange: "bytes 0-\(first - 1)/\(partial.count)"])
            #expect(part.status == .accepted)
            let absent = Self.hash(Array("absent".utf8))
            let asked = [Self.hash(partial), Self.hash(present), absent]
            func missing(_ hashes: [String], token: String) async throws -> (HTTPResponse.Status, [MissingAttachment]) {
                let body = #"{"sha256":[\#(hashes.map { "\"\($0)\"" }.joined(separator: ","))]}"#
                let response = try await harness.send(
                    .post, "/v1/attachments/missing", token: token, body: Array(body.utf8),
                    headers: [.contentType: "application/json"])
                guard response.status == .ok else { return (response.status, []) }
                let answer = try JSONDecoder().decode(
                    MissingAttachmentsResponse.self, from: Data(response.body.readableBytesView))
                return (response.status, answer.missing)
            }
            let (status, found) = try await missing(asked, token: ann)
            #expect(status == .ok)
            #expect(
                found == [
                    MissingAttachment(sha256: Self.hash(partial), uploadOffset: Self.held(first, on: backend)),
                    MissingAttachment(sha256: absent, uploadOffset: 0),
                ])
            // Another user's attachments are not theirs.
            #expect(try await missing([Self.hash(present)], token: bob).1.map(\.sha256) == [Self.hash(present)])
            // Bad lists: 400 with a sentence; no token: 401.
            let bad = [
                #"{"sha256":[]}"#, #"{"sha256":["abc"]}"#, #"{"sha256":"\#(absent)"}"#, #"{}"#, "not json",
                #"{"sha256":[\#(Array(repeating: "\"\(absent)\"", count: 1_001).joined(separator: ","))]}"#,
            ]
            for body in bad {
                let response = try await harness.send(
                    .post, "/v1/attachments/missing", token: ann, body: Array(body.utf8),
                    headers: [.contentType: "application/json"])
                #expect(response.status == .badRequest, "\(body.prefix(40))")
                #expect(try response.errorBody().error.contains("sha256") || body == "not json", "\(body.prefix(40))")
            }
            #expect(try await missing([absent], token: "nobody").0 == .unauthorized)
        }
    }

    @Test(arguments: Backend.allCases)
    func aResumedUploadWhoseHeldBytesAreDamagedIsRefusedWhole(backend: Backend) async throws {
        try await withServer(backend) { harness in
            let (token, user, storage) = try await AttachmentTests.ann(in: harness.database)
            let bytes = Self.large
            let hash = Self.hash(bytes)
            let damaged = try await storage.beginAttachment(hash, for: user, at: 0)
            try await damaged.write(ByteBuffer(repeating: 0, count: 1_048_576))
            let held = await damaged.suspend()
            #expect(held == 1_048_576)
            let path = "/v1/attachments/\(hash)"
            let rest = try await harness.send(
                .put, path, token: token, body: Array(bytes[Int(held)...]),
                headers: [.contentRange: "bytes \(held)-\(bytes.count - 1)/\(bytes.count)"])
            #expect(rest.status == .badRequest)
            #expect(try rest.errorBody().error.contains("nothing was kept"))
            let head = try await harness.send(.head, path, token: token)
            #expect(head.status == .notFound)
            #expect(head.headers[uploadOffset] == "0")
            #expect(try await harness.send(.put, path, token: token, body: bytes).status == .created)
        }
    }

    @Test(arguments: Backend.allCases)
    func pruneRemovesUploadsAbandonedForAnHour(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let (_, user, storage) = try await AttachmentTests.ann(in: test.database)
            let hash = Self.hash(Self.large)
            let upload = try await storage.beginAttachment(hash, for: user, at: 0)
            try await upload.write(ByteBuffer(bytes: Self.large[..<1_048_576]))
            _ = await upload.suspend()
            // Written a moment ago: kept, whatever the days asked for.
            _ = try await storage.pruneAttachments(unreferencedSince: Date())
            #expect(try await storage.heldUploadBytes(hash, for: user) == 1_048_576)
            // Two hours untouched.
            switch backend {
            case .sqlite:
                let database = try #require(test.database as? SQLiteSyncDatabase)
                let file = database.attachments.path + "/incoming/\(user.id)-\(hash)"
                let old = Date().addingTimeInterval(-7_200)
                try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: file)
            case .postgres:
                _ = try PostgresTestServer.psql(
                    try #require(test.location),
                    "UPDATE amber_sync_attachment_uploads SET written_at = now() - interval '2 hours'")
            }
            _ = try await storage.pruneAttachments(unreferencedSince: Date())
            #expect(try await storage.heldUploadBytes(hash, for: user) == 0)
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

    /// A download reads and changes nothing: unlike `HEAD` or `PUT`, it does not count as the
    /// attachment being asked for, so prune's time for it stays as it was.
    @Test(arguments: Backend.allCases)
    func aDownloadDoesNotCountAsAskingFor(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let server = SyncServer(database: test.database, logger: Logger.quietTests)
            try await server.makeApplication().test(.router) { client in
                let harness = Harness(client: client, database: test.database)
                let token = try await harness.addUser("ann")
                let user = try #require(try await test.database.user(forToken: token))
                let (read, looked) = (Array("read".utf8), Array("looked at".utf8))
                for bytes in [read, looked] {
                    let put = try await harness.send(
                        .put, "/v1/attachments/\(Self.hash(bytes))", token: token, body: bytes)
                    #expect(put.status == .created)
                }
                // Both last asked for two days ago.
                let old = Date().addingTimeInterval(-2 * 86_400)
                switch backend {
                case .sqlite:
                    let database = try #require(test.database as? SQLiteSyncDatabase)
                    for bytes in [read, looked] {
                        let file = database.attachments.path + "/users/\(user.id)/\(Self.hash(bytes))"
                        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: file)
                    }
                case .postgres:
                    _ = try PostgresTestServer.psql(
                        try #require(test.location),
                        "UPDATE amber_sync_attachments SET referenced_at = now() - interval '2 days'")
                }
                let get = try await harness.send(.get, "/v1/attachments/\(Self.hash(read))", token: token)
                #expect(get.status == .ok)
                #expect(Array(get.body.readableBytesView) == read)
                #expect(
                    try await harness.send(.head, "/v1/attachments/\(Self.hash(looked))", token: token).status == .ok)
                // Unnamed for a day: the one only read goes, the one asked for with HEAD stays.
                let storage = try #require(test.database as? any AttachmentStorage)
                #expect(try await storage.pruneAttachments(unreferencedSince: Date().addingTimeInterval(-86_400)) == 1)
                #expect(try await storage.readableAttachmentSize(Self.hash(read), for: user) == nil)
                #expect(try await storage.readableAttachmentSize(Self.hash(looked), for: user) == Int64(looked.count))
            }
        }
    }
}

extension AttachmentStorage {
    /// The bytes `range` of the user's attachment `hash`, read whole.
    func readAll(_ hash: String, for user: SyncUser, range: Range<Int64>) async throws -> [UInt8] {
        let read = LockedValue<[UInt8]>([])
        try await readAttachment(hash, for: user, range: range) { chunk in
            read.withLock { $0 += chunk.readableBytesView }
        }
        return read.withLock { $0 }
    }
}
