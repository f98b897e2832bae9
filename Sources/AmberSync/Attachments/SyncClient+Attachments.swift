import Amber
import AmberLock
import AmberSyncProtocol
import Foundation
import GRDB

extension SyncClient {
    /// The attachments beside this client's SQLite file: add files here, then name them in records.
    ///
    /// ```swift
    /// let photo = try sync.attachments.add(contentsOf: pictureURL, mediaType: "image/jpeg")
    /// try notes.add(note.with(photo: photo))
    /// try await sync.sync()     // uploads the photo, then pushes the note
    /// ```
    public var attachments: AttachmentStore {
        transfers.store
    }

    /// Which attachments a sync fetches after pulling records that name them; ``AttachmentDownloadPolicy/all`` by default.
    ///
    /// The others are fetched when asked for, by ``data(for:)`` or ``fileURL(for:)``.
    public var attachmentDownloads: AttachmentDownloadPolicy {
        get { attachmentPolicy.withLock { $0 } }
        set { attachmentPolicy.withLock { $0 = newValue } }
    }

    /// The file holding an attachment's bytes, fetched from the server first when they are not here.
    ///
    /// A fetch cut off resumes where it stopped on the next call; the bytes are checked against
    /// the attachment's hash before the file appears.
    ///
    /// - Parameter attachment: An attachment a record names.
    /// - Returns: The file's URL; read it, never write it.
    /// - Throws: ``SyncError``: the server is unreachable (``SyncError/Kind/offline``), does not have
    ///   the attachment (``SyncError/Kind/server(status:)`` 404), or sent other bytes.
    public func fileURL(for attachment: Attachment) async throws(SyncError) -> URL {
        if let url = attachments.fileURL(for: attachment) { return url }
        try await transfers.download(attachment)
        guard let url = attachments.fileURL(for: attachment) else {
            throw SyncError(
                .storage, "attachment \(attachment.sha256) was fetched but is not in \(attachments.folder.path)")
        }
        return url
    }

    /// An attachment's bytes, fetched from the server first when they are not here.
    ///
    /// - Parameter attachment: An attachment a record names.
    /// - Returns: The bytes, read whole into memory: for a large file, read ``fileURL(for:)`` in parts.
    /// - Throws: ``SyncError`` as ``fileURL(for:)`` does, or of kind ``SyncError/Kind/storage``.
    public func data(for attachment: Attachment) async throws(SyncError) -> Data {
        let url = try await fileURL(for: attachment)
        do {
            return try Data(contentsOf: url)
        } catch {
            throw SyncError(.storage, "cannot read \(url.path): \(error)", underlyingError: error)
        }
    }

    /// Removes the local files of attachments no record of this storage file names, when they
    /// were added or fetched longer than `gracePeriod` ago.
    ///
    /// Every record of the file counts, synced or not, pending or not: a file a pending record
    /// names is never removed, and neither is one a record named by an unanswered push. The grace
    /// period keeps a file just added and not yet named by a record.
    ///
    /// - Parameter gracePeriod: Seconds a file is kept after it was added or fetched; one day by default.
    /// - Returns: How many files were removed.
    /// - Throws: ``SyncError`` of kind ``SyncError/Kind/storage`` when the file cannot be read.
    @discardableResult
    public func removeUnreferencedAttachments(gracePeriod: TimeInterval = 86_400) throws(SyncError) -> Int {
        let texts: [String]
        do {
            texts = try storage.database.read { db in
                let records = try String.fetchAll(
                    db, sql: "SELECT value FROM amber_records WHERE value LIKE '%\"sha256\"%'")
                let outbox = try String.fetchAll(
                    db, sql: "SELECT body FROM amber_sync_outbox WHERE body LIKE '%\"sha256\"%'")
                return records + outbox
            }
        } catch {
            throw SyncError(.storage, "\(storage.path): \(error)", underlyingError: error)
        }
        var named: Set<String> = []
        for text in texts {
            guard let value = try? JSONValue(jsonBytes: Array(text.utf8)) else { continue }
            for reference in AttachmentReference.all(in: value) { named.insert(reference.sha256) }
        }
        let store = attachments
        let cutoff = Date().addingTimeInterval(-gracePeriod)
        var removed = 0
        for hash in store.storedHashes where !named.contains(hash) {
            let file = store.file(for: hash)
            let modified = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.modificationDate] as? Date
            if let modified, modified < cutoff, (try? FileManager.default.removeItem(at: file)) != nil {
                removed += 1
            }
        }
        return removed
    }
}
