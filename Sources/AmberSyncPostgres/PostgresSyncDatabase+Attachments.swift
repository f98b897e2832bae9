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

    public func readableAttachmentSize(_ hash: String, for user: SyncUser) async throws -> Int64? {
        let rows = try await collect(
            "SELECT size FROM amber_sync_attachments WHERE user_id = \(user.id) AND sha256 = \(hash)")
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
        if offset == 0 {
            // The usual start, with no upload of the hash held: one statement. One held (or a
            // start that committed first) leaves this to the transaction below, which starts it over.
            let id = UUID().uuidString.lowercased()
            let inserted = try await collect(
                """
                INSERT INTO amber_sync_attachment_uploads (id, user_id, sha256, writer)
                VALUES (\(id), \(user.id), \(hash), \(writer))
                ON CONFLICT (user_id, sha256) DO NOTHING RETURNING id
                """)
            if !inserted.isEmpty {
                return PostgresAttachmentUpload(
                    database: self, id: id, writer: writer, hash: hash, userID: user.id, offset: 0)
            }
        }
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
        let size = Int64(Self.attachmentChunkSize)
        let first = Int32(range.lowerBound / size)
        let last = Int32(max(range.upperBound - 1, range.lowerBound) / size)
        // The attachment's upload and its first chunk in one statement.
        let found = try await collect(
            """
            SELECT a.upload_id, c.data FROM amber_sync_attachments a
            LEFT JOIN amber_sync_attachment_chunks c ON c.upload_id = a.upload_id AND c.chunk = \(first)
            WHERE a.user_id = \(user.id) AND a.sha256 = \(hash)
            """)
        guard let (uploadID, firstData) = try found.first?.decode((String, ByteBuffer?).self) else {
            throw SyncServerError.invalidRequest("The attachment \(hash) was removed while it was read.")
        }
        guard !range.isEmpty else { return }
        try await readChunks(of: uploadID, first...last, firstRead: .some(firstData)) { chunk, data in
            guard let data else {
                throw SyncServerError.invalidRequest("The attachment \(hash) lacks its chunk \(chunk).")
            }
            let start = max(range.lowerBound - Int64(chunk) * size, 0)
            let end = min(range.upperBound - Int64(chunk) * size, Int64(data.readableBytes))
            guard start < end, let slice = data.getSlice(at: data.readerIndex + Int(start), length: Int(end - start))
            else {
                throw SyncServerError.invalidRequest("The attachment \(hash) is shorter than its size.")
            }
            try await body(slice)
        }
    }

    /// Reads the chunks `chunks` of an upload in order, handing each to `body` (`nil` for one
    /// that is not there), the next one read while `body` takes the one before.
    ///
    /// One chunk per query: a slow reader holds no connection between chunks, and two chunks at
    /// most are in memory. `firstRead`, when given, is the first chunk as the caller read it.
    func readChunks(
        of uploadID: String, _ chunks: ClosedRange<Int32>, firstRead: ByteBuffer?? = nil,
        into body: (_ chunk: Int32, _ data: ByteBuffer?) async throws -> Void
    ) async throws {
        func fetch(_ chunk: Int32) -> Task<ByteBuffer?, any Error> {
            Task { [self] in
                let rows = try await collect(
                    "SELECT data FROM amber_sync_attachment_chunks WHERE upload_id = \(uploadID) AND chunk = \(chunk)")
                return try rows.first?.decode(ByteBuffer.self)
            }
        }
        var next: Task<ByteBuffer?, any Error>? = firstRead.map { data in Task { data } } ?? fetch(chunks.lowerBound)
        defer { next?.cancel() }
        for chunk in chunks {
            guard let current = next else { break }
            next = chunk < chunks.upperBound ? fetch(chunk + 1) : nil
            try await body(chunk, try await current.value)
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
/// Every batch of chunks is written by one statement, on the condition that the row still names
/// this request as its writer and holds the bytes before it: a request that another one took
/// over (a client that resumed after a cut the server had not noticed yet) stops instead of
/// writing over it. A batch is written while the request reads the next chunks of its body, so
/// the body and the database move at once; at most ``queueLimit`` chunks wait behind it.
final class PostgresAttachmentUpload: AttachmentUpload, @unchecked Sendable {
    // @unchecked: one request uses an upload, one call at a time; the task writing a batch
    // touches none of its state, only what it was handed.
    private let database: PostgresSyncDatabase
    private let id: String
    private let writer: String
    private let hash: String
    private let userID: Int64
    private let offset: Int64
    /// Bytes received after the last whole chunk.
    private var pending = ByteBuffer()
    /// Whole chunks not yet handed to a batch.
    private var queued: [ByteBuffer] = []
    /// The batch being written, which returns its bytes.
    private var writing: Task<Int64, any Error>?
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

    /// Whole chunks that may wait while a batch is written; also the most one batch holds.
    static let queueLimit = 2

    /// The upload's id: a new one whenever an upload starts over, and its held chunks are only
    /// ever added to, so the id and the bytes held name the same bytes.
    var heldBytesIdentity: String? { id }

    func readHeld(into body: @escaping @Sendable (ByteBuffer) async throws -> Void) async throws {
        let chunks = Int32(offset / Int64(Self.chunkSize))
        guard chunks > 0 else { return }
        let hash = hash
        try await database.readChunks(of: id, 0...(chunks - 1)) { chunk, data in
            guard let data, data.readableBytes == Self.chunkSize else {
                throw SyncServerError.invalidRequest(
                    "The upload of \(hash) lacks its chunk \(chunk); send the whole file again.")
            }
            try await body(data)
        }
    }

    func write(_ bytes: ByteBuffer) async throws {
        var bytes = bytes
        while bytes.readableBytes > 0 {
            if pending.readableBytes == 0 && bytes.readableBytes >= Self.chunkSize {
                // A whole chunk in the body's own buffer: no copy.
                queued.append(bytes.readSlice(length: Self.chunkSize)!)
            } else {
                if pending.capacity == 0 { pending.reserveCapacity(Self.chunkSize) }
                let room = Self.chunkSize - pending.readableBytes
                var part = bytes.readSlice(length: min(room, bytes.readableBytes))!
                pending.writeBuffer(&part)
                guard pending.readableBytes == Self.chunkSize else { continue }
                queued.append(pending)
                pending = ByteBuffer()
            }
            try await pump(draining: false)
        }
    }

    /// Starts writing the queued chunks when no batch is being written. Waits for the batch under
    /// way first when the queue is full, or, `draining`, until every queued chunk is written.
    private func pump(draining: Bool) async throws {
        while true {
            if let batch = writing {
                guard draining || queued.count >= Self.queueLimit else { return }
                writing = nil
                held += try await batch.value
                continue
            }
            guard !queued.isEmpty else { return }
            let chunks = Array(queued.prefix(Self.queueLimit))
            queued.removeFirst(chunks.count)
            let (database, id, writer, held, hash) = (database, id, writer, held, hash)
            writing = Task {
                try await Self.append(chunks, id: id, writer: writer, held: held, hash: hash, database: database)
            }
        }
    }

    /// Writes `chunks`, the next after the `held` bytes, in one statement; returns their bytes.
    private static func append(
        _ chunks: [ByteBuffer], id: String, writer: String, held: Int64, hash: String,
        database: PostgresSyncDatabase
    ) async throws -> Int64 {
        let (query, size) = appending(chunks, id: id, writer: writer, held: held)
        let written = try await run(query, database: database, genericPlan: true)
        guard written.count == chunks.count else { throw SyncServerError.uploadInProgress(hash: hash) }
        return size
    }

    /// Bytes of a chunk from which its statement is planned for any parameters (see
    /// ``run(_:database:genericPlan:)``).
    static let genericPlanBytes = 64 << 10

    /// Runs `query` on its own and returns its rows; with `genericPlan`, planned once for any
    /// parameters.
    ///
    /// A plan for the given parameters (PostgreSQL's choice for a statement sent once) holds each
    /// parameter as a constant, which the planner copies, twice: for a statement carrying a MiB
    /// chunk, a sixth of the database's time in an upload. The statements that write chunks have
    /// one plan whatever their parameters. The plan setting lasts for a transaction: BEGIN, the
    /// setting, the statement and COMMIT go out at once, and a statement that fails makes the
    /// COMMIT behind it a rollback.
    private static func run(_ query: PostgresQuery, database: PostgresSyncDatabase, genericPlan: Bool)
        async throws -> [PostgresRow]
    {
        guard genericPlan else { return try await database.collect(query) }
        let (logger, location) = (database.logger, database.location)
        return try await database.withConnection { connection in
            let begin: EventLoopFuture<PostgresQueryResult> = connection.query("BEGIN", logger: logger)
            let generic: EventLoopFuture<PostgresQueryResult> = connection.query(
                "SET LOCAL plan_cache_mode = force_generic_plan", logger: logger)
            let rows: EventLoopFuture<PostgresQueryResult> = connection.query(query, logger: logger)
            let commit: EventLoopFuture<PostgresQueryResult> = connection.query("COMMIT", logger: logger)
            do {
                _ = try await begin.get()
                _ = try await generic.get()
                let result = try await rows.get().rows
                let committed = try await commit.get()
                guard committed.metadata.command == "COMMIT" else {
                    throw SyncServerError.databaseUnavailable(
                        location: location, reason: "a chunk's transaction ended with \(committed.metadata.command)")
                }
                return result
            } catch {
                _ = try? await commit.get()
                throw error
            }
        }
    }

    /// The statement that writes `chunks`, the next after the `held` bytes, on the condition
    /// that the upload's row names `writer` and holds `held` bytes; and the bytes it writes. It
    /// returns a row for each chunk written: none when the condition fails.
    private static func appending(
        _ chunks: [ByteBuffer], id: String, writer: String, held: Int64
    ) -> (PostgresQuery, Int64) {
        let size = chunks.reduce(Int64(0)) { $0 + Int64($1.readableBytes) }
        let first = Int32(held / Int64(chunkSize))
        var binds = PostgresBindings(capacity: 4 + chunks.count)
        binds.append(id)
        binds.append(writer)
        binds.append(held)
        binds.append(size)
        var rows: [String] = []
        for (index, data) in chunks.enumerated() {
            binds.append(data)
            rows.append("(\(Int(first) + index), $\(5 + index)::bytea)")
        }
        // The row's condition and the chunks in one statement: both or neither.
        let query = PostgresQuery(
            unsafeSQL: """
                WITH ours AS (
                    UPDATE amber_sync_attachment_uploads SET size = size + $4, written_at = now()
                    WHERE id = $1 AND writer = $2 AND size = $3 RETURNING id
                )
                INSERT INTO amber_sync_attachment_chunks (upload_id, chunk, data)
                SELECT ours.id, given.chunk, given.data FROM ours, (VALUES \(rows.joined(separator: ", ")))
                    AS given (chunk, data)
                RETURNING chunk
                """, binds: binds)
        return (query, size)
    }

    func finish() async throws -> Bool {
        try await pump(draining: true)
        let (data, id, writer, held, hash, userID) = (pending, id, writer, held, hash, userID)
        let size = held + Int64(data.readableBytes)
        let first = Int32(held / Int64(Self.chunkSize))
        // In one statement: the upload's row goes (on the condition that it names this request
        // as its writer and holds `held` bytes: otherwise nothing changes), and the attachment's
        // row is written with the last chunk. An attachment already there (another upload of the
        // same bytes finished first) keeps its row, and this upload's chunks go.
        var binds = PostgresBindings(capacity: 8)
        binds.append(id)
        binds.append(writer)
        binds.append(held)
        binds.append(userID)
        binds.append(hash)
        binds.append(size)
        binds.append(first)
        binds.append(data)
        let query = PostgresQuery(
            unsafeSQL: """
                WITH ours AS (
                    DELETE FROM amber_sync_attachment_uploads WHERE id = $1 AND writer = $2 AND size = $3
                    RETURNING id
                ), kept AS (
                    INSERT INTO amber_sync_attachments (user_id, sha256, size, upload_id)
                    SELECT $4, $5, $6, id FROM ours
                    ON CONFLICT (user_id, sha256) DO NOTHING RETURNING upload_id
                ), last_chunk AS (
                    INSERT INTO amber_sync_attachment_chunks (upload_id, chunk, data)
                    SELECT upload_id, $7, $8::bytea FROM kept WHERE length($8::bytea) > 0
                ), dropped AS (
                    DELETE FROM amber_sync_attachment_chunks
                    WHERE upload_id = $1 AND EXISTS (SELECT 1 FROM ours) AND NOT EXISTS (SELECT 1 FROM kept)
                )
                SELECT (SELECT count(*) FROM ours), (SELECT count(*) FROM kept)
                """, binds: binds)
        let rows = try await Self.run(
            query, database: database, genericPlan: data.readableBytes >= Self.genericPlanBytes)
        guard let (ours, kept) = try rows.first?.decode((Int64, Int64).self), ours == 1 else {
            // Gone when prune took the upload for abandoned, or another request took it over.
            throw SyncServerError.uploadInProgress(hash: hash)
        }
        return kept == 1
    }

    func suspend() async -> Int64 {
        // What is queued is written; the pending bytes, less than a chunk, are dropped: the next
        // request resends them.
        try? await pump(draining: true)
        queued = []
        pending = ByteBuffer()
        return held
    }

    func cancel() async {
        if let batch = writing {
            writing = nil
            _ = try? await batch.value
        }
        queued = []
        pending = ByteBuffer()
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
