import AmberSyncProtocol
import AmberSyncServer
import Foundation
import PostgresNIO

extension PostgresSyncDatabase: AttachmentStorage {
    /// Bytes per row of `amber_sync_attachment_chunks`.
    static let attachmentChunkSize = 1 << 20

    /// An upload older than this is taken as cut off and removed by prune.
    static let abandonedUploadAge: TimeInterval = 3_600

    public func attachmentSize(_ hash: String, for user: SyncUser) async throws -> Int64? {
        // Asked for: the attachment is about to be named by a record, so prune leaves it a while.
        let rows = try await collect(
            """
            UPDATE amber_sync_attachments SET referenced_at = now()
            WHERE user_id = \(user.id) AND sha256 = \(hash) RETURNING size
            """)
        return try rows.first?.decode(Int64.self)
    }

    public func attachmentBytes(for user: SyncUser) async throws -> Int64 {
        let rows = try await collect(
            "SELECT coalesce(sum(size), 0)::int8 FROM amber_sync_attachments WHERE user_id = \(user.id)")
        return try rows.first?.decode(Int64.self) ?? 0
    }

    public func beginAttachment(_ hash: String, for user: SyncUser) async throws -> any AttachmentUpload {
        let id = UUID().uuidString.lowercased()
        _ = try await collect("INSERT INTO amber_sync_attachment_uploads (id, user_id) VALUES (\(id), \(user.id))")
        return PostgresAttachmentUpload(database: self, id: id, hash: hash, userID: user.id)
    }

    public func readAttachment(
        _ hash: String, for user: SyncUser, range: Range<Int64>,
        into body: @escaping @Sendable (ByteBuffer) async throws -> Void
    ) async throws {
        let found = try await collect(
            "SELECT upload_id FROM amber_sync_attachments WHERE user_id = \(user.id) AND sha256 = \(hash)")
        guard let uploadID = try found.first?.decode(String.self) else {
            throw SyncServerError.invalidRequest("The attachment \(hash) was removed while it was read.")
        }
        let size = Int64(Self.attachmentChunkSize)
        var offset = range.lowerBound
        // One chunk per query: a slow client holds no connection between chunks, and one chunk
        // at most is in memory.
        while offset < range.upperBound {
            let chunk = Int32(offset / size)
            let rows = try await collect(
                """
                SELECT data FROM amber_sync_attachment_chunks WHERE upload_id = \(uploadID) AND chunk = \(chunk)
                """)
            guard var data = try rows.first?.decode(ByteBuffer.self) else {
                throw SyncServerError.invalidRequest("The attachment \(hash) lacks its chunk \(chunk).")
            }
            let start = Int(offset - Int64(chunk) * size)
            let end = Int(min(range.upperBound - Int64(chunk) * size, Int64(data.readableBytes)))
            guard start < end, let slice = data.getSlice(at: data.readerIndex + start, length: end - start) else {
                throw SyncServerError.invalidRequest("The attachment \(hash) is shorter than its size.")
            }
            data = slice
            offset += Int64(data.readableBytes)
            try await body(data)
        }
    }

    public func pruneAttachments(unreferencedSince date: Date) async throws -> Int {
        let users = try await collect("SELECT DISTINCT user_id FROM amber_sync_attachments").map {
            try $0.decode(Int64.self)
        }
        var removed = 0
        for userID in users {
            let texts = try await collect(
                """
                SELECT value FROM amber_sync_records
                WHERE user_id = \(userID) AND value IS NOT NULL AND value LIKE '%"sha256"%'
                """
            ).map { try $0.decode(String.self) }
            var named: Set<String> = []
            for text in texts {
                guard let object = try? JSONObject(jsonBytes: Array(text.utf8)) else { continue }
                for reference in AttachmentReference.all(in: object) { named.insert(reference.sha256) }
            }
            let hashes = Array(named)
            let logger = self.logger
            removed += try await transaction { connection in
                try await connection.query(
                    """
                    UPDATE amber_sync_attachments SET referenced_at = now()
                    WHERE user_id = \(userID) AND sha256 = ANY(\(hashes))
                    """, logger: logger)
                let gone = try await connection.query(
                    """
                    DELETE FROM amber_sync_attachments
                    WHERE user_id = \(userID) AND referenced_at < \(date) AND NOT (sha256 = ANY(\(hashes)))
                    RETURNING upload_id
                    """, logger: logger
                ).collect().map { try $0.decode(String.self) }
                try await connection.query(
                    "DELETE FROM amber_sync_attachment_chunks WHERE upload_id = ANY(\(gone))", logger: logger)
                return gone.count
            }
        }
        let abandoned = min(date, Date().addingTimeInterval(-Self.abandonedUploadAge))
        let logger = self.logger
        try await transaction { connection in
            let uploads = try await connection.query(
                "DELETE FROM amber_sync_attachment_uploads WHERE started_at < \(abandoned) RETURNING id", logger: logger
            ).collect().map { try $0.decode(String.self) }
            try await connection.query(
                "DELETE FROM amber_sync_attachment_chunks WHERE upload_id = ANY(\(uploads))", logger: logger)
        }
        return removed
    }
}

/// One upload into PostgreSQL: chunks under a fresh upload id, made visible by one row at the end.
final class PostgresAttachmentUpload: AttachmentUpload, @unchecked Sendable {
    // @unchecked: one request uses an upload, one call at a time.
    private let database: PostgresSyncDatabase
    private let id: String
    private let hash: String
    private let userID: Int64
    private var pending = ByteBuffer()
    private var chunk: Int32 = 0
    private var size: Int64 = 0

    init(database: PostgresSyncDatabase, id: String, hash: String, userID: Int64) {
        self.database = database
        self.id = id
        self.hash = hash
        self.userID = userID
    }

    func write(_ bytes: ByteBuffer) async throws {
        var bytes = bytes
        size += Int64(bytes.readableBytes)
        while bytes.readableBytes > 0 {
            let room = PostgresSyncDatabase.attachmentChunkSize - pending.readableBytes
            var part = bytes.readSlice(length: min(room, bytes.readableBytes))!
            pending.writeBuffer(&part)
            if pending.readableBytes == PostgresSyncDatabase.attachmentChunkSize {
                try await flush()
            }
        }
    }

    private func flush() async throws {
        let (data, chunk, id) = (pending, chunk, id)
        _ = try await database.collect(
            "INSERT INTO amber_sync_attachment_chunks (upload_id, chunk, data) VALUES (\(id), \(chunk), \(data))")
        self.chunk += 1
        pending = ByteBuffer()
    }

    func finish() async throws -> Bool {
        if pending.readableBytes > 0 { try await flush() }
        let (id, hash, userID, size) = (id, hash, userID, size)
        let logger = database.logger
        return try await database.transaction { connection in
            // A prune that took the upload for abandoned removed its chunks: nothing to make visible.
            let ours = try await connection.query(
                "DELETE FROM amber_sync_attachment_uploads WHERE id = \(id) RETURNING id", logger: logger
            ).collect()
            guard !ours.isEmpty else {
                throw SyncServerError.invalidRequest(
                    "The upload of \(hash) took too long and was dropped; upload it again.")
            }
            let inserted = try await connection.query(
                """
                INSERT INTO amber_sync_attachments (user_id, sha256, size, upload_id)
                VALUES (\(userID), \(hash), \(size), \(id))
                ON CONFLICT (user_id, sha256) DO NOTHING RETURNING size
                """, logger: logger
            ).collect()
            if inserted.isEmpty {
                try await connection.query(
                    "DELETE FROM amber_sync_attachment_chunks WHERE upload_id = \(id)", logger: logger)
            }
            return !inserted.isEmpty
        }
    }

    func cancel() async {
        let id = id
        _ = try? await database.transaction { [logger = database.logger] connection in
            try await connection.query(
                "DELETE FROM amber_sync_attachment_chunks WHERE upload_id = \(id)", logger: logger)
            try await connection.query("DELETE FROM amber_sync_attachment_uploads WHERE id = \(id)", logger: logger)
        }
    }
}
