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

    public func missingAttachments(_ hashes: [String], for user: SyncUser) async throws -> [MissingAttachment] {
        let present = Set(
            try await collect(
                """
                UPDATE amber_sync_attachments SET referenced_at = now()
                WHERE user_id = \(user.id) AND sha256 = ANY(\(hashes)) RETURNING sha256
                """
            ).map { try $0.decode(String.self) })
        let absent = hashes.filter { !present.contains($0) }
        guard !absent.isEmpty else { return [] }
        let held = Dictionary(
            try await collect(
                """
                SELECT sha256, size FROM amber_sync_attachment_uploads
                WHERE user_id = \(user.id) AND sha256 = ANY(\(absent))
                """
            ).map { try $0.decode((String, Int64).self) }, uniquingKeysWith: { first, _ in first })
        return absent.map { MissingAttachment(sha256: $0, uploadOffset: held[$0] ?? 0) }
    }

    public func attachmentBytes(for user: SyncUser) async throws -> Int64 {
        let rows = try await collect(
            "SELECT coalesce(sum(size), 0)::int8 FROM amber_sync_attachments WHERE user_id = \(user.id)")
        return try rows.first?.decode(Int64.self) ?? 0
    }

    public func heldUploadBytes(_ hash: String, for user: SyncUser) async throws -> Int64 {
        let rows = try await collect(
            "SELECT size FROM amber_sync_attachment_uploads WHERE user_id = \(user.id) AND sha256 = \(hash)")
        return try rows.first?.decode(Int64.self) ?? 0
    }

    public func beginAttachment(_ hash: String, for user: SyncUser, at offset: Int64) async throws
        -> any AttachmentUpload
    {
        let writer = UUID().uuidString.lowercased()
        let logger = self.logger
        let id = try await transaction { connection -> String in
            let found = try await connection.query(
                """
                SELECT id, size FROM amber_sync_attachment_uploads
                WHERE user_id = \(user.id) AND sha256 = \(hash) FOR UPDATE
                """, logger: logger
            ).collect().first.map { try $0.decode((String, Int64).self) }
            if offset == 0 {
                // Starting over: a request still writing the old upload stops at its next chunk.
                if let old = found?.0 {
                    try await connection.query(
                        "DELETE FROM amber_sync_attachment_chunks WHERE upload_id = \(old)", logger: logger)
                    try await connection.query(
                        "DELETE FROM amber_sync_attachment_uploads WHERE id = \(old)", logger: logger)
                }
                let id = UUID().uuidString.lowercased()
                // A concurrent start of the same upload that committed first makes this one fail
                // on the unique index: it is answered as an upload in progress.
                let inserted = try await connection.query(
                    """
                    INSERT INTO amber_sync_attachment_uploads (id, user_id, sha256, writer)
                    VALUES (\(id), \(user.id), \(hash), \(writer))
                    ON CONFLICT (user_id, sha256) DO NOTHING RETURNING id
                    """, logger: logger
                ).collect()
                guard !inserted.isEmpty else { throw SyncServerError.uploadInProgress(hash: hash) }
                return id
            }
            guard let id = found?.0, found?.1 == offset else {
                throw SyncServerError.uploadOffsetMismatch(hash: hash, held: found?.1 ?? 0, sent: offset)
            }
            try await connection.query(
                "UPDATE amber_sync_attachment_uploads SET writer = \(writer), written_at = now() WHERE id = \(id)",
                logger: logger)
            return id
        }
        return PostgresAttachmentUpload(
            database: self, id: id, writer: writer, hash: hash, userID: user.id, offset: offset)
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
                "DELETE FROM amber_sync_attachment_uploads WHERE written_at < \(abandoned) RETURNING id",
                logger: logger
            ).collect().map { try $0.decode(String.self) }
            try await connection.query(
                "DELETE FROM amber_sync_attachment_chunks WHERE upload_id = ANY(\(uploads))", logger: logger)
        }
        return removed
    }
}

/// One request's part of an upload into PostgreSQL: whole chunks under the upload's id, each
/// counted in its row as it is written, made visible by one row at the end.
///
/// Every chunk is written on the condition that the row still names this request as its writer
/// and holds the bytes before it: a request that another one took over (a client that resumed
/// after a cut the server had not noticed yet) stops instead of writing over it.
final class PostgresAttachmentUpload: AttachmentUpload, @unchecked Sendable {
    // @unchecked: one request uses an upload, one call at a time.
    private let database: PostgresSyncDatabase
    private let id: String
    private let writer: String
    private let hash: String
    private let userID: Int64
    private let offset: Int64
    private var pending = ByteBuffer()
    /// Bytes in whole chunks in the database.
    private var held: Int64

    init(database: PostgresSyncDatabase, id: String, writer: String, hash: String, userID: Int64, offset: Int64) {
        self.database = database
        self.id = id
        self.writer = writer
        self.hash = hash
        self.userID = userID
        self.offset = offset
        self.held = offset
    }

    private static var chunkSize: Int { PostgresSyncDatabase.attachmentChunkSize }

    func readHeld(into body: @escaping @Sendable (ByteBuffer) async throws -> Void) async throws {
        let chunks = Int32(offset / Int64(Self.chunkSize))
        for chunk in 0..<chunks {
            let id = id
            let rows = try await database.collect(
                "SELECT data FROM amber_sync_attachment_chunks WHERE upload_id = \(id) AND chunk = \(chunk)")
            guard let data = try rows.first?.decode(ByteBuffer.self), data.readableBytes == Self.chunkSize else {
                throw SyncServerError.invalidRequest(
                    "The upload of \(hash) lacks its chunk \(chunk); send the whole file again.")
            }
            try await body(data)
        }
    }

    func write(_ bytes: ByteBuffer) async throws {
        var bytes = bytes
        while bytes.readableBytes > 0 {
            let room = Self.chunkSize - pending.readableBytes
            var part = bytes.readSlice(length: min(room, bytes.readableBytes))!
            pending.writeBuffer(&part)
            if pending.readableBytes == Self.chunkSize {
                try await flush()
            }
        }
    }

    /// Writes the pending bytes as the next chunk, if this request is still the upload's writer.
    private func flush() async throws {
        let (data, id, writer, held, hash) = (pending, id, writer, held, hash)
        let chunk = Int32(held / Int64(Self.chunkSize))
        let size = Int64(data.readableBytes)
        let logger = database.logger
        try await database.transaction { connection in
            try await Self.append(
                data, chunk: chunk, size: size, id: id, writer: writer, held: held, hash: hash,
                connection: connection, logger: logger)
        }
        self.held += size
        pending = ByteBuffer()
    }

    private static func append(
        _ data: ByteBuffer, chunk: Int32, size: Int64, id: String, writer: String, held: Int64, hash: String,
        connection: PostgresConnection, logger: Logger
    ) async throws {
        let ours = try await connection.query(
            """
            UPDATE amber_sync_attachment_uploads SET size = size + \(size), written_at = now()
            WHERE id = \(id) AND writer = \(writer) AND size = \(held) RETURNING size
            """, logger: logger
        ).collect()
        guard !ours.isEmpty else { throw SyncServerError.uploadInProgress(hash: hash) }
        try await connection.query(
            "INSERT INTO amber_sync_attachment_chunks (upload_id, chunk, data) VALUES (\(id), \(chunk), \(data))",
            logger: logger)
    }

    func finish() async throws -> Bool {
        let (data, id, writer, held, hash, userID) = (pending, id, writer, held, hash, userID)
        let chunk = Int32(held / Int64(Self.chunkSize))
        let size = held + Int64(data.readableBytes)
        let logger = database.logger
        return try await database.transaction { connection in
            if data.readableBytes > 0 {
                try await Self.append(
                    data, chunk: chunk, size: Int64(data.readableBytes), id: id, writer: writer,
                    held: held, hash: hash, connection: connection, logger: logger)
            }
            // Gone when prune took the upload for abandoned, or another request took it over.
            let ours = try await connection.query(
                "DELETE FROM amber_sync_attachment_uploads WHERE id = \(id) AND writer = \(writer) RETURNING id",
                logger: logger
            ).collect()
            guard !ours.isEmpty else { throw SyncServerError.uploadInProgress(hash: hash) }
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

    func suspend() async -> Int64 {
        // The pending bytes, less than a chunk, are dropped: the next request resends them.
        pending = ByteBuffer()
        return held
    }

    func cancel() async {
        let (id, writer) = (id, writer)
        _ = try? await database.transaction { [logger = database.logger] connection in
            let ours = try await connection.query(
                "DELETE FROM amber_sync_attachment_uploads WHERE id = \(id) AND writer = \(writer) RETURNING id",
                logger: logger
            ).collect()
            if !ours.isEmpty {
                try await connection.query(
                    "DELETE FROM amber_sync_attachment_chunks WHERE upload_id = \(id)", logger: logger)
            }
        }
    }
}
