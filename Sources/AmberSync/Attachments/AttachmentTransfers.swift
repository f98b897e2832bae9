import Amber
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
/// fetched. A fetch collects its bytes in a partial file and resumes with `Range` after a cut.
final class AttachmentTransfers: Sendable {
    let store: AttachmentStore
    let storage: SQLiteStorage
    let server: URL
    let tokens: SyncTokenSource
    let policy: LockedValue<AttachmentDownloadPolicy>
    let progress: @Sendable (SyncProgress) -> Void
    private let session: URLSession
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
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 90
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
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
        var done = SyncProgress(phase: .uploadingAttachments, completed: 0, total: toSend.count, bytes: 0)
        for reference in toSend {
            let (status, databaseID) = try await send(method: "HEAD", reference.sha256)
            if status == 404 {
                let file = store.file(for: reference.sha256)
                let (uploaded, _) = try await send(method: "PUT", reference.sha256, file: file)
                guard uploaded == 200 || uploaded == 201 else {
                    throw SyncError(
                        .server(status: uploaded), "the server refused attachment \(reference.sha256) (\(uploaded))")
                }
                done.bytes += Int(reference.size)
            } else if status != 200 {
                throw SyncError(
                    .server(status: status), "the server answered \(status) to HEAD of attachment \(reference.sha256)")
            }
            try database { db in
                try db.execute(
                    sql: "INSERT OR REPLACE INTO amber_sync_attachment_remote (sha256, database_id) VALUES (?, ?)",
                    arguments: [reference.sha256, try databaseID ?? SyncSchema.databaseID(db) ?? ""])
            }
            done.completed += 1
            progress(done)
        }
    }

    /// Sends a `HEAD` or a `PUT` of a file; the answer's status and `Amber-Database-ID`.
    private func send(method: String, _ hash: String, file: URL? = nil) async throws(SyncError) -> (Int, String?) {
        var request = URLRequest(url: url(of: hash))
        request.httpMethod = method
        if file != nil { request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type") }
        var token = try await tokens.token()
        var (status, response, body) = try await perform(request, token: token, file: file)
        if status == 401, let fresh = try await tokens.token(replacing: token) {
            token = fresh
            (status, response, body) = try await perform(request, token: token, file: file)
        }
        if status == 401 { throw SyncError(.unauthorized, Self.sentence(in: body)) }
        if status >= 400 && status != 404 {
            throw SyncError(.server(status: status), Self.sentence(in: body))
        }
        return (status, response?.value(forHTTPHeaderField: SyncHeader.databaseID))
    }

    private func perform(_ request: URLRequest, token: String, file: URL?) async throws(SyncError)
        -> (Int, HTTPURLResponse?, Data)
    {
        var request = request
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let session = self.session
        let result: Result<(Data, URLResponse), any Error> = await withCheckedContinuation { continuation in
            let handler: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, response, error in
                if let response {
                    continuation.resume(returning: .success((data ?? Data(), response)))
                } else {
                    continuation.resume(returning: .failure(error ?? URLError(.badServerResponse)))
                }
            }
            let task: URLSessionTask
            if let file {
                task = session.uploadTask(with: request, fromFile: file, completionHandler: handler)
            } else {
                task = session.dataTask(with: request, completionHandler: handler)
            }
            task.resume()
        }
        switch result {
        case .success(let (data, response)):
            let http = response as? HTTPURLResponse
            return (http?.statusCode ?? 0, http, data)
        case .failure(let error):
            throw SyncError(.offline, (error as NSError).localizedDescription, underlyingError: error)
        }
    }

    private static func sentence(in body: Data) -> String {
        (try? ErrorResponse(jsonBytes: body))?.error ?? String(decoding: body.prefix(200), as: UTF8.self)
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
        var done = SyncProgress(phase: .downloadingAttachments, completed: 0, total: wanted.count, bytes: 0)
        for attachment in wanted {
            if !store.contains(attachment) {
                try await download(attachment) { [done] bytes in
                    var now = done
                    now.bytes += bytes
                    self.progress(now)
                }
            }
            try database { db in
                try db.execute(
                    sql: "DELETE FROM amber_sync_attachment_wanted WHERE sha256 = ?", arguments: [attachment.sha256])
            }
            done.completed += 1
            done.bytes += Int(attachment.size)
            progress(done)
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
            try store.keep(partial, as: attachment)
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
