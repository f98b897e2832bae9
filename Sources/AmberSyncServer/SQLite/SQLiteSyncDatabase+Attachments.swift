import AmberSyncProtocol
import Foundation
import GRDB
import NIOCore

extension SQLiteSyncDatabase: AttachmentStorage {
    /// The folder of attachments beside the database file: its path with `.attachments` appended.
    public var attachments: AttachmentFolder {
        let pool = self.pool
        return AttachmentFolder(path: path + ".attachments") { userID in
            try await pool.read { db in
                try String.fetchAll(
                    db,
                    sql: "SELECT value FROM amber_sync_records WHERE user_id = ? AND value LIKE '%\"sha256\"%'",
                    arguments: [userID])
            }
        }
    }

    public func attachmentSize(_ hash: String, for user: SyncUser) async throws -> Int64? {
        try await attachments.attachmentSize(hash, for: user)
    }

    public func readableAttachmentSize(_ hash: String, for user: SyncUser) async throws -> Int64? {
        try await attachments.readableAttachmentSize(hash, for: user)
    }

    public func attachmentBytes(for user: SyncUser) async throws -> Int64 {
        try await attachments.attachmentBytes(for: user)
    }

    public func heldUploadBytes(_ hash: String, for user: SyncUser) async throws -> Int64 {
        try await attachments.heldUploadBytes(hash, for: user)
    }

    public func beginAttachment(_ hash: String, for user: SyncUser, at offset: Int64) async throws
        -> any AttachmentUpload
    {
        try await attachments.beginAttachment(hash, for: user, at: offset)
    }

    public func readAttachment(
        _ hash: String, for user: SyncUser, range: Range<Int64>,
        into body: @escaping @Sendable (ByteBuffer) async throws -> Void
    ) async throws {
        try await attachments.readAttachment(hash, for: user, range: range, into: body)
    }

    public func pruneAttachments(unreferencedSince date: Date) async throws -> Int {
        try await attachments.pruneAttachments(unreferencedSince: date)
    }
}
