import Amber
import AmberLock
import AmberSQLite
import AmberSyncProtocol
import Foundation
import GRDB

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Moves attachments between a client's ``AttachmentStore`` and the server: uploads the ones
/// a push names before the push, and fetches the ones pulled records name.
///
/// Its state lives in the client's SQLite file, so it survives a kill: which attachments the
/// server is known to have (for the server database it was seen on) and which are still to be
/// fetched. A fetch collects its bytes in a partial file and resumes with `Range` after a cut; an
/// upload asks the server how many bytes it holds (`HEAD`) and sends the rest with `Content-Range`.
final class AttachmentTransfers: Sendable {
    let store: AttachmentStore
    let storage: SQLiteStorage
    let server: URL
    let tokens: SyncTokenSource
    let policy: LockedValue<AttachmentDownloadPolicy>
    let progress: @Sendable (SyncProgress) -> Void
    private let uploads: UploadSession
    private let downloads: DownloadSession

    init(
        storage: SQLiteStorage, server: URL, tokens: SyncTokenSource, policy: LockedValue<AttachmentDownloadPolicy>,
        progress: @escaping @Sendable (SyncProgress) -> Void
    ) throws {
        self.storage = storage
        self.store = AttachmentStore(storage: storage)
        self.server = server
        self.tokens = tokens
        self.policy = policy
        self.progress = progress
        uploads = UploadSession()
        downloads = DownloadSession()
        try storage.database.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS amber_sync_attachment_remote (
                        sha256 TEXT NOT NULL PRIMARY KEY,
                        database_id TEXT NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE IF NOT EXISTS amber_sync_attachment_wanted (
                        sha256 TEXT NOT NULL PRIMARY KEY,
                        size INTEGER NOT NULL,
                        media_type TEXT NOT NULL,
                        file_name TEXT
                    ) WITHOUT ROWID;
                    """)
        }
    }

    // MARK: Uploads

    /// Uploads every attachment `mutations` name that the server lacks, before they are pushed.
    ///
    /// An edit that sends `fields` is read for those fields only: an attachment the record
    /// already had went up with the record's earlier push. An attachment whose bytes are not here
    /// (a record pulled from another device) is the server's already, or no one's to send.
    func upload(referencedBy mutations: [Mutation]) async throws(SyncError) {
        var wanted: [String: AttachmentReference] = [:]
        for mutation in mutations {
            // Most records name no attachment: a look at the text spares reading them.
            guard let record = mutation.record, AttachmentReference.mayOccur(in: record.text) else { continue }
            let value = record.object
            let scanned: [JSONValue] =
                mutation.fields.map { fields in fields.compactMap { value[$0] } } ?? [.object(value)]
            for part in scanned {
                for reference in AttachmentReference.all(in: part) where wanted[reference.sha256] == nil {
                    wanted[reference.sha256] = reference
                }
            }
        }
        guard !wanted.isEmpty else { return }
        let known = try database { db -> Set<String> in
            let databaseID = try SyncSchema.databaseID(db) ?? ""
            return Set(
                try String.fetchAll(
                    db, sql: "SELECT sha256 FROM amber_sync_attachment_remote WHERE database_id = ?",
                    arguments: [databaseID]))
        }
        let toSend = wanted.values.filter { !known.contains($0.sha256) && store.contains(attachment($0)) }
            .sorted { $0.sha256 < $1.sha256 }
        guard !toSend.isEmpty else { return }
        let missing = try await missingOnServer(toSend.map(\.sha256))
        let tally = TransferTally(phase: .uploadingAttachments, total: toSend.count, report: progress)
        let present = NotesInBatches<(sha256: String, databaseID: String?)> { notes throws(SyncError) in
            try self.database { db in
                let fallback = try SyncSchema.databaseID(db) ?? ""
                for note in notes {
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO amber_sync_attachment_remote (sha256, database_id) VALUES (?, ?)",
                        arguments: [note.sha256, note.databaseID ?? fallback])
                }
            }
        }
        try await present.writing { () async throws(SyncError) in
            try await Self.forEach(toSend, size: \.size) { reference throws(SyncError) in
                try await self.upload(reference, missing: missing, tally: tally, present: present)
            }
        }
    }

    /// Uploads one attachment, unless the server has it, and notes that the server has it.
    ///
    /// - Parameter missing: The attachments the server lacks, with the bytes it holds of each;
    ///   `nil` when it is to be asked with `HEAD`.
    private func upload(
        _ reference: AttachmentReference, missing: (held: [String: Int64], databaseID: String?)?,
        tally: TransferTally, present: NotesInBatches<(sha256: String, databaseID: String?)>
    ) async throws(SyncError) {
        var databaseID = missing?.databaseID
        // The bytes the server holds of an attachment it lacks; `nil` when it has it.
        let held: Int64?
        if let missing {
            held = missing.held[reference.sha256]
        } else {
            let head = try await send(method: "HEAD", reference.sha256)
            databaseID = head.databaseID
            switch head.status {
            case 200: held = nil
            case 404: held = head.uploadOffset ?? 0
            default:
                throw SyncError(
                    .server(status: head.status),
                    "the server answered \(head.status) to HEAD of attachment \(reference.sha256)")
            }
        }
        var sent = 0
        if let held {
            let hash = reference.sha256
            let (count, answer) = try await put(reference, held: held) { bytes in tally.moving(hash, bytes: bytes) }
            sent = count
            databaseID = answer.databaseID ?? databaseID
        }
        try present.add((reference.sha256, databaseID))
        tally.finished(reference.sha256, bytes: sent)
    }

    /// Attachments moved at once at most. A small file's transfer is mostly waiting (a round
    /// trip, and a flush to disk on each side), so several go together.
    static let concurrentTransfers = 8

    /// The bytes the transfers under way hold in memory together at most: each holds its file's
    /// size or ``partSize``, whichever is less. Four large files go at once, eight small ones.
    static let bytesInFlight = 4 * partSize

    /// Runs `transfer` for each of `items`, as many at a time as ``concurrentTransfers`` and
    /// ``bytesInFlight`` allow (one at least), an item's bytes given by `size`; the first error
    /// cancels the others and is thrown.
    static func forEach<Item: Sendable>(
        _ items: [Item], size: @escaping (Item) -> Int64,
        _ transfer: @escaping @Sendable (Item) async throws(SyncError) -> Void
    ) async throws(SyncError) {
        if items.count == 1, let item = items.first { return try await transfer(item) }
        func held(_ item: Item) -> Int { Int(clamping: min(size(item), Int64(partSize))) }
        do {
            try await withThrowingTaskGroup(of: Int.self) { group in
                var next = 0
                var (running, holding) = (0, 0)
                func start() {
                    while next < items.count, running < concurrentTransfers,
                        running == 0 || holding + held(items[next]) <= bytesInFlight
                    {
                        let (item, bytes) = (items[next], held(items[next]))
                        group.addTask {
                            try await transfer(item)
                            return bytes
                        }
                        (next, running, holding) = (next + 1, running + 1, holding + bytes)
                    }
                }
                start()
                while let bytes = try await group.next() {
                    (running, holding) = (running - 1, holding - bytes)
                    start()
                }
            }
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.offline, "an attachment transfer was cancelled: \(error)", underlyingError: error)
        }
    }

    /// Which of `hashes` the server lacks, with the bytes it holds of each (`POST
    /// /v1/attachments/missing`, in requests of 1,000), and the database that answered; `nil`
    /// from a server without that request, to be asked `HEAD` by `HEAD`.
    private func missingOnServer(_ hashes: [String]) async throws(SyncError) -> (
        held: [String: Int64], databaseID: String?
    )? {
        var held: [String: Int64] = [:]
        var databaseID: String?
        var start = 0
        while start < hashes.count {
            let part = Array(hashes[start..<min(start + MissingAttachmentsRequest.maximumCount, hashes.count)])
            start += part.count
            var request = URLRequest(url: server.appendingPathComponent("v1/attachments/missing"))
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(JSONWriter.bytes(of: MissingAttachmentsRequest(sha256: part)))
            let answer = try await authorized(request, body: nil)
            if answer.status == 404 || answer.status == 405 { return nil }
            guard answer.status == 200 else {
                throw SyncError(
                    .server(status: answer.status), "cannot ask which attachments the server lacks: \(answer.sentence)")
            }
            let response: MissingAttachmentsResponse
            do {
                response = try MissingAttachmentsResponse(jsonBytes: answer.body)
            } catch {
                throw SyncError(.protocolViolation, "the server's list of missing attachments is not valid: \(error)")
            }
            for attachment in response.missing { held[attachment.sha256] = attachment.uploadOffset }
            databaseID = answer.databaseID ?? databaseID
        }
        return (held, databaseID)
    }

    /// Sends the bytes of an attachment the server lacks: those after the `held` bytes of an
    /// earlier, cut upload, in requests of ``requestSize`` at most (`Content-Range`), the server
    /// keeping the bytes as they arrive.
    ///
    /// A server that holds other bytes than expected (`409`) is sent the rest after those it
    /// names; a resumed upload whose whole file does not check out on the server (`400`: its held
    /// bytes were damaged) is sent again whole, once.
    ///
    /// - Parameter progress: Told the bytes sent so far by this call, as each chunk goes out.
    /// - Returns: The bytes sent, and the server's last answer.
    private func put(
        _ reference: AttachmentReference, held: Int64, progress: @escaping @Sendable (Int) -> Void
    ) async throws(SyncError) -> (sent: Int, answer: UploadSession.Outcome) {
        let size = reference.size
        var offset = (0..<size).contains(held) ? held : 0
        var sent = 0
        var resentWhole = false
        var moved = 0
        while true {
            let end = offset + min(Self.requestSize, size - offset)
            var request = URLRequest(url: url(of: reference.sha256))
            request.httpMethod = "PUT"
            request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
            if size > 0 {
                request.setValue("bytes \(offset)-\(end - 1)/\(size)", forHTTPHeaderField: "Content-Range")
            }
            let part = UploadBody(file: store.file(for: reference.sha256), range: offset..<end)
            let before = sent
            let answer = try await authorized(request, body: part) { bytes in progress(before + bytes) }
            sent += Int(part.range.count)
            switch answer.status {
            case 200, 201:
                return (sent, answer)
            case 202 where answer.uploadOffset.map({ (offset + 1...end).contains($0) }) == true:
                offset = answer.uploadOffset ?? end
            case 409 where answer.uploadOffset.map({ (0..<size).contains($0) }) == true:
                // Bytes the server did not take are sent again: count them once.
                sent = before
                moved += 1
                guard moved < 3 else {
                    throw SyncError(
                        .server(status: 409),
                        "the server kept moving the offset of the upload of attachment \(reference.sha256)")
                }
                offset = answer.uploadOffset ?? 0
            case 400 where offset > 0 && !resentWhole:
                resentWhole = true
                offset = 0
            default:
                throw SyncError(
                    .server(status: answer.status),
                    "the server refused attachment \(reference.sha256) (\(answer.status)): \(answer.sentence)")
            }
        }
    }

    /// The bytes a transfer holds in memory at most: 8 MiB, a whole number of PostgreSQL's
    /// chunks, so that a request of this size ends where the server's held bytes end.
    static let partSize = 8 << 20

    #if os(Linux)
        /// The bytes of one `PUT` at most: on Linux the rest of the file, read from it as the
        /// connection takes the bytes. Each further request would cost a round trip and, on
        /// PostgreSQL, the server's writes drained before it answers: a 100 MiB upload to
        /// PostgreSQL in parts of 8 MiB took about a fifth longer (Benchmarks/README).
        static let requestSize = Int64.max
    #else
        /// The bytes of one `PUT` at most: `URLSession` is handed them in memory.
        static let requestSize = Int64(partSize)
    #endif

    /// Sends a `HEAD` of an attachment; the answer.
    ///
    /// An error other than `404` is thrown.
    private func send(method: String, _ hash: String) async throws(SyncError) -> UploadSession.Outcome {
        var request = URLRequest(url: url(of: hash))
        request.httpMethod = method
        let answer = try await authorized(request, body: nil)
        if answer.status >= 400 && answer.status != 404 {
            throw SyncError(.server(status: answer.status), answer.sentence)
        }
        return answer
    }

    /// Sends `request` with the user's token, once more with a fresh token after a `401`.
    ///
    /// - Throws: ``SyncError`` of kind `unauthorized` when the token is refused again.
    private func authorized(
        _ request: URLRequest, body: UploadBody?, progress: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws(SyncError) -> UploadSession.Outcome {
        var request = request
        var token = try await tokens.token()
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        var answer = try await uploads.send(request, body: body, progress: progress)
        if answer.status == 401, let fresh = try await tokens.token(replacing: token) {
            token = fresh
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            answer = try await uploads.send(request, body: body, progress: progress)
        }
        if answer.status == 401 { throw SyncError(.unauthorized, answer.sentence) }
        return answer
    }

    func url(of hash: String) -> URL {
        server.appendingPathComponent("v1/attachments/\(hash)")
    }

    // MARK: Downloads

    /// Notes the attachments pulled records name, for ``downloadWanted()`` to fetch by the policy.
    func noteWanted(in changes: [RecordChange]) throws(SyncError) {
        let policy = policy.withLock { $0 }
        if case .onDemand = policy { return }
        var wanted: [AttachmentReference] = []
        for change in changes {
            guard let record = change.record, AttachmentReference.mayOccur(in: record.text) else { continue }
            for reference in AttachmentReference.all(in: record.object) where policy.fetches(attachment(reference)) {
                wanted.append(reference)
            }
        }
        guard !wanted.isEmpty else { return }
        let store = self.store
        try database { db in
            let databaseID = try SyncSchema.databaseID(db) ?? ""
            for reference in wanted {
                // The server has what it lists: nothing to upload later.
                try db.execute(
                    sql: "INSERT OR REPLACE INTO amber_sync_attachment_remote (sha256, database_id) VALUES (?, ?)",
                    arguments: [reference.sha256, databaseID])
                guard !store.contains(attachment(reference)) else { continue }
                try db.execute(
                    sql: """
                        INSERT OR IGNORE INTO amber_sync_attachment_wanted (sha256, size, media_type, file_name)
                        VALUES (?, ?, ?, ?)
                        """,
                    arguments: [reference.sha256, reference.size, reference.mediaType, reference.fileName])
            }
        }
    }

    /// Fetches the attachments noted as wanted, each resuming where an earlier try stopped.
    func downloadWanted() async throws(SyncError) {
        let wanted = try database { db in
            try Row.fetchAll(db, sql: "SELECT sha256, size, media_type, file_name FROM amber_sync_attachment_wanted")
                .map { row in
                    let (hash, size, mediaType, fileName): (String, Int64, String, String?) = (
                        row[0], row[1], row[2], row[3]
                    )
                    return Attachment(sha256: hash, size: size, mediaType: mediaType, fileName: fileName)
                }
        }
        guard !wanted.isEmpty else { return }
        let tally = TransferTally(phase: .downloadingAttachments, total: wanted.count, report: progress)
        let fetched = NotesInBatches<String> { hashes throws(SyncError) in
            try self.database { db in
                for hash in hashes {
                    try db.execute(sql: "DELETE FROM amber_sync_attachment_wanted WHERE sha256 = ?", arguments: [hash])
                }
            }
        }
        try await fetched.writing { () async throws(SyncError) in
            try await Self.forEach(wanted, size: \.size) { attachment throws(SyncError) in
                if !self.store.contains(attachment) {
                    let hash = attachment.sha256
                    try await self.download(attachment) { bytes in tally.moving(hash, bytes: bytes) }
                }
                try fetched.add(attachment.sha256)
                tally.finished(attachment.sha256, bytes: Int(attachment.size))
            }
        }
    }

    /// Fetches one attachment into the store: into its partial file from where that file ends,
    /// then checked against its hash and renamed into place.
    func download(_ attachment: Attachment, progress: @escaping @Sendable (Int) -> Void = { _ in })
        async throws(SyncError)
    {
        let partial: URL
        do {
            partial = try store.partialDownload(for: attachment.sha256)
        } catch {
            throw SyncError(
                .storage, "cannot prepare the download of \(attachment.sha256): \(error)", underlyingError: error)
        }
        var token = try await tokens.token()
        var outcome = try await downloads.fetch(
            url(of: attachment.sha256), token: token, into: partial, progress: progress)
        if outcome.status == 401, let fresh = try await tokens.token(replacing: token) {
            token = fresh
            outcome = try await downloads.fetch(
                url(of: attachment.sha256), token: token, into: partial, progress: progress)
        }
        switch outcome.status {
        case 200, 206:
            try store.keep(partial, as: attachment, written: outcome.written)
        case 401:
            throw SyncError(.unauthorized, outcome.sentence)
        case 416:
            // The partial file is as long as the attachment, or longer: check what it holds.
            try store.keep(partial, as: attachment)
        default:
            throw SyncError(
                .server(status: outcome.status), "cannot fetch attachment \(attachment.sha256): \(outcome.sentence)")
        }
    }

    // MARK: Support

    private func attachment(_ reference: AttachmentReference) -> Attachment {
        Attachment(
            sha256: reference.sha256, size: reference.size, mediaType: reference.mediaType, fileName: reference.fileName
        )
    }

    private func database<R>(_ body: (Database) throws -> R) throws(SyncError) -> R {
        try storage.syncWrite(body)
    }
}

/// Notes of finished transfers, written to the sync tables a batch at a time rather than in a
/// transaction each: each transaction is a flush to disk, as long as a small file's transfer.
///
/// What they note is safe to lose in a crash. The attachments a server has (uploads) are asked
/// for again, and an attachment still noted as wanted whose file is here (downloads) is only
/// checked and dropped by the next download.
final class NotesInBatches<Note: Sendable>: Sendable {
    /// Notes written together.
    static var batchSize: Int { 100 }

    private let pending = LockedValue<[Note]>([])
    private let write: @Sendable ([Note]) throws(SyncError) -> Void

    /// Notes that `write` writes, in one transaction a batch.
    init(write: @escaping @Sendable ([Note]) throws(SyncError) -> Void) {
        self.write = write
    }

    /// Adds a note, and writes the batch it fills.
    func add(_ note: Note) throws(SyncError) {
        let full = pending.withLock { pending -> [Note] in
            pending.append(note)
            guard pending.count >= Self.batchSize else { return [] }
            defer { pending = [] }
            return pending
        }
        if !full.isEmpty { try write(full) }
    }

    /// Runs `transfers`, then writes the notes left, whether the transfers succeeded or not.
    func writing(_ transfers: () async throws(SyncError) -> Void) async throws(SyncError) {
        do {
            try await transfers()
        } catch {
            try? flush()
            throw error
        }
        try flush()
    }

    private func flush() throws(SyncError) {
        let rest = pending.withLock { pending -> [Note] in
            defer { pending = [] }
            return pending
        }
        if !rest.isEmpty { try write(rest) }
    }
}

/// The progress of transfers that run together: the attachments done, and the bytes of those
/// done and of those under way. Each report is made holding the lock, so they arrive in order
/// and their counts never go down.
final class TransferTally: Sendable {
    private struct State {
        var done: SyncProgress
        /// The bytes moved so far by each transfer under way, by hash.
        var moving: [String: Int] = [:]

        var now: SyncProgress {
            var now = done
            now.bytes += moving.values.reduce(0, +)
            return now
        }
    }

    private let state: LockedValue<State>
    private let report: @Sendable (SyncProgress) -> Void

    init(phase: SyncProgress.Phase, total: Int, report: @escaping @Sendable (SyncProgress) -> Void) {
        state = LockedValue(State(done: SyncProgress(phase: phase, completed: 0, total: total, bytes: 0)))
        self.report = report
    }

    /// Notes that the transfer of `hash` has moved `bytes` so far.
    func moving(_ hash: String, bytes: Int) {
        state.withLock { state in
            state.moving[hash] = bytes
            report(state.now)
        }
    }

    /// Notes that the transfer of `hash` is done, having moved `bytes`.
    func finished(_ hash: String, bytes: Int) {
        state.withLock { state in
            state.moving[hash] = nil
            state.done.completed += 1
            state.done.bytes += bytes
            report(state.now)
        }
    }
}
