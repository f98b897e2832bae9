import AmberSyncProtocol
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
/// let upload = try await storage.beginAttachment(hash, for: user, at: 0)
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

    /// The size of the user's attachment for reading its bytes (`GET`), or `nil` when the user
    /// has no attachment with this hash.
    ///
    /// Unlike ``attachmentSize(_:for:)``, looking does not count as the attachment being asked
    /// for: a download comes from a record that names it already, and changes nothing.
    ///
    /// - Parameters:
    ///   - hash: The SHA-256 of the bytes, 64 lowercase hexadecimal digits.
    ///   - user: The user whose attachments to look in.
    /// - Returns: The size in bytes, or `nil`.
    func readableAttachmentSize(_ hash: String, for user: SyncUser) async throws -> Int64?

    /// Which of `hashes` the user lacks, each with the bytes held of its unfinished upload, in
    /// the order given; the ones present count as asked for, as with ``attachmentSize(_:for:)``.
    ///
    /// - Parameters:
    ///   - hashes: SHA-256s, already checked to be ones by the caller.
    ///   - user: The user whose attachments to look in.
    /// - Returns: The attachments missing.
    func missingAttachments(_ hashes: [String], for user: SyncUser) async throws -> [MissingAttachment]

    /// The bytes of all the user's attachments together, counted against a quota.
    ///
    /// - Parameter user: The user.
    /// - Returns: The total size in bytes.
    func attachmentBytes(for user: SyncUser) async throws -> Int64

    /// The bytes held of the user's unfinished upload of an attachment: where its next `PUT` may
    /// resume. They never count as the attachment being present.
    ///
    /// - Parameters:
    ///   - hash: The attachment's SHA-256.
    ///   - user: The user whose upload it is.
    /// - Returns: The bytes held, `0` when there is no upload under way or left over.
    func heldUploadBytes(_ hash: String, for user: SyncUser) async throws -> Int64

    /// Starts or resumes keeping the bytes of an attachment; they are not visible until
    /// ``AttachmentUpload/finish()``.
    ///
    /// Each user has at most one upload of a hash, kept across requests, cut connections and
    /// restarts of the server until it is finished, dropped, or removed by prune. An `offset` of
    /// `0` starts it over, dropping any bytes held; another offset resumes it and must equal
    /// ``heldUploadBytes(_:for:)``.
    ///
    /// - Parameters:
    ///   - hash: The SHA-256 the bytes have, already checked to be one by the caller.
    ///   - user: The user whose attachment it is.
    ///   - offset: The byte of the file the upload's next ``AttachmentUpload/write(_:)`` holds.
    /// - Returns: The upload to write the bytes to.
    /// - Throws: ``SyncServerError/uploadOffsetMismatch(hash:held:sent:)`` when the bytes held
    ///   differ from `offset`; ``SyncServerError/uploadInProgress(hash:)`` when another request
    ///   writes the upload.
    func beginAttachment(_ hash: String, for user: SyncUser, at offset: Int64) async throws -> any AttachmentUpload

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
    /// and unfinished uploads nothing was written to since then (and for an hour at least).
    ///
    /// An attachment's time is when it was uploaded, asked for (`HEAD`, `PUT` again), or found
    /// named by a live record in a prune: a prune run daily removes an attachment some `days`
    /// after its last record stopped naming it.
    ///
    /// - Parameter date: Attachments unnamed since before this moment are removed.
    /// - Returns: How many attachments were removed.
    func pruneAttachments(unreferencedSince date: Date) async throws -> Int
}

extension AttachmentStorage {
    /// Asks ``attachmentSize(_:for:)``, for a storage that reads no other way.
    public func readableAttachmentSize(_ hash: String, for user: SyncUser) async throws -> Int64? {
        try await attachmentSize(hash, for: user)
    }

    /// Asks ``attachmentSize(_:for:)`` and ``heldUploadBytes(_:for:)`` of each hash in turn.
    public func missingAttachments(_ hashes: [String], for user: SyncUser) async throws -> [MissingAttachment] {
        var missing: [MissingAttachment] = []
        for hash in hashes {
            guard try await attachmentSize(hash, for: user) == nil else { continue }
            missing.append(MissingAttachment(sha256: hash, uploadOffset: try await heldUploadBytes(hash, for: user)))
        }
        return missing
    }
}

/// The bytes of one attachment on their way in, from the offset it was begun at.
public protocol AttachmentUpload: Sendable {
    /// Reads the bytes held before the upload's offset, in order: a resumed upload's earlier
    /// bytes, for the caller to hash the whole file.
    ///
    /// - Parameter body: Takes each chunk read; waited for before the next is read.
    func readHeld(into body: @escaping @Sendable (ByteBuffer) async throws -> Void) async throws
    /// Keeps the next bytes.
    func write(_ bytes: ByteBuffer) async throws
    /// Makes the attachment visible, all its bytes kept.
    ///
    /// - Returns: `true` when it is new, `false` when the user had it already (a concurrent upload of the same bytes).
    func finish() async throws -> Bool
    /// Ends this request's part, keeping the bytes written for a later request to resume: the
    /// connection was cut, or the client sent a part of the file.
    ///
    /// - Returns: The bytes held now, which a storage may round down to the units it keeps.
    func suspend() async -> Int64
    /// Drops every byte held: the upload is too large, or its bytes have another hash.
    func cancel() async
    /// Names the bytes held before the upload's offset, or `nil` when the storage cannot tell;
    /// after ``suspend()``, the bytes it leaves.
    ///
    /// Two uploads of a hash with the same identity and the same offset hold the same bytes
    /// before it, whichever server process wrote them: an upload that starts over takes a new
    /// identity, or none until ``suspend()`` gives it one. The server then continues the SHA-256
    /// it computed over those bytes as an earlier request wrote them, instead of reading them
    /// again (``readHeld(into:)``).
    var heldBytesIdentity: String? { get }
}

extension AttachmentUpload {
    /// `nil`: the bytes held are read again to check the hash of the whole file.
    public var heldBytesIdentity: String? { nil }
}
