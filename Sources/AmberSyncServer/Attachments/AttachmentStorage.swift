import Foundation
import NIOCore

/// Where a sync server keeps attachments: each user's files by SHA-256, apart from other users'.
///
/// The HTTP layer checks the hash, the size limits and the bytes; a storage keeps what it is
/// given, and makes an attachment visible only once all its bytes are kept: a cut upload or a
/// killed server never leaves one that answers as present. ``SQLiteSyncDatabase`` keeps them in a
/// folder beside its file; `PostgresSyncDatabase` in chunked rows, so that every server process
/// on the database reads them.
///
/// ```swift
/// let upload = try await storage.beginAttachment(hash, for: user)
/// for try await bytes in body { try await upload.write(bytes) }
/// let created = try await upload.finish()
/// ```
public protocol AttachmentStorage: Sendable {
    /// The size of the user's attachment, or `nil` when the user has no attachment with this hash.
    ///
    /// - Parameters:
    ///   - hash: The SHA-256 of the bytes, 64 lowercase hexadecimal digits.
    ///   - user: The user whose attachments to look in.
    /// - Returns: The size in bytes, or `nil`.
    func attachmentSize(_ hash: String, for user: SyncUser) async throws -> Int64?

    /// The bytes of all the user's attachments together, counted against a quota.
    ///
    /// - Parameter user: The user.
    /// - Returns: The total size in bytes.
    func attachmentBytes(for user: SyncUser) async throws -> Int64

    /// Starts keeping the bytes of an attachment; they are not visible until ``AttachmentUpload/finish()``.
    ///
    /// - Parameters:
    ///   - hash: The SHA-256 the bytes have, already checked to be one by the caller.
    ///   - user: The user whose attachment it is.
    /// - Returns: The upload to write the bytes to.
    func beginAttachment(_ hash: String, for user: SyncUser) async throws -> any AttachmentUpload

    /// Reads bytes of the user's attachment, handing them to `body` in order.
    ///
    /// Bytes are read as `body` takes them, so the memory a read takes does not grow with the file.
    ///
    /// - Parameters:
    ///   - hash: The attachment's SHA-256.
    ///   - user: The user whose attachment it is.
    ///   - range: The bytes to read, within the attachment's size.
    ///   - body: Takes each chunk read; waited for before the next is read.
    /// - Throws: When the attachment is gone or cannot be read.
    func readAttachment(
        _ hash: String, for user: SyncUser, range: Range<Int64>,
        into body: @escaping @Sendable (ByteBuffer) async throws -> Void
    ) async throws

    /// Removes each user's attachments that no live record of that user has named since `date`,
    /// and uploads cut off long ago.
    ///
    /// An attachment's time is when it was uploaded, asked for (`HEAD`, `PUT` again), or found
    /// named by a live record in a prune: a prune run daily removes an attachment some `days`
    /// after its last record stopped naming it.
    ///
    /// - Parameter date: Attachments unnamed since before this moment are removed.
    /// - Returns: How many attachments were removed.
    func pruneAttachments(unreferencedSince date: Date) async throws -> Int
}

/// The bytes of one attachment on their way in.
public protocol AttachmentUpload: Sendable {
    /// Keeps the next bytes.
    func write(_ bytes: ByteBuffer) async throws
    /// Makes the attachment visible, all its bytes kept.
    ///
    /// - Returns: `true` when it is new, `false` when the user had it already (a concurrent upload of the same bytes).
    func finish() async throws -> Bool
    /// Drops what was written: the upload was cut off, too large, or its bytes have another hash.
    func cancel() async
}
