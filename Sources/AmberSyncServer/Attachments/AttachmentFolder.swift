import AmberFileFlush
import AmberSyncProtocol
import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Attachments as files in a folder: `users/<user id>/<sha256>`, each written whole under
/// `incoming/<user id>-<sha256>` (flushed to disk) and then renamed into place, so a file under
/// its hash always holds all its bytes.
///
/// An upload's file in `incoming/` stays when its connection is cut or the server is killed: the
/// next `PUT` resumes after its last byte. The request writing it holds an exclusive `flock` on
/// it, which the system releases when the process dies. Beside it, `<user id>-<sha256>.generation`
/// names the upload's bytes (``AttachmentUpload/heldBytesIdentity``), written under the lock. An
/// upload that starts over removes it, and a request that leaves its bytes unfinished writes a
/// new one: an upload sent whole in one request creates one file, not two.
///
/// Several server processes on one machine can share the folder as they share an SQLite file.
/// A file's modification time is when it was last uploaded, asked for, or found named by a live
/// record: what ``pruneAttachments(unreferencedSince:)`` measures.
///
/// ```swift
/// let folder = AttachmentFolder(path: "amber-sync.sqlite.attachments") { userID in
///     try await database.liveRecordTexts(of: userID)
/// }
/// ```
public struct AttachmentFolder: AttachmentStorage {
    /// The folder's path.
    public let path: String
    /// The JSON texts of a user's live records, which may name attachments; read by prune.
    let liveRecords: @Sendable (_ userID: Int64) async throws -> [String]
    /// The users who have a folder of attachments, by id; read by prune.
    var users: [Int64] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: usersPath)) ?? []
        return names.compactMap { Int64($0) }
    }

    /// An upload left in `incoming/` this long is taken as cut off and removed by prune.
    public static let abandonedUploadAge: TimeInterval = 3_600

    /// The folder at `path`, created when first written.
    ///
    /// - Parameters:
    ///   - path: The folder.
    ///   - liveRecords: The JSON texts of a user's live records that may name attachments.
    public init(path: String, liveRecords: @escaping @Sendable (_ userID: Int64) async throws -> [String]) {
        self.path = path
        self.liveRecords = liveRecords
    }

    private var usersPath: String { path + "/users" }
    private func userFolder(_ userID: Int64) -> String { usersPath + "/\(userID)" }
    private func file(_ hash: String, of userID: Int64) -> String { userFolder(userID) + "/" + hash }

    public func attachmentSize(_ hash: String, for user: SyncUser) async throws -> Int64? {
        let file = file(hash, of: user.id)
        return try await Self.blocking {
            var info = stat()
            guard stat(file, &info) == 0 else { return nil }
            // Asked for: the attachment is about to be named by a record, so prune leaves it a while.
            _ = utimes(file, nil)
            return Int64(info.st_size)
        }
    }

    public func readableAttachmentSize(_ hash: String, for user: SyncUser) async throws -> Int64? {
        let file = file(hash, of: user.id)
        return try await Self.blocking {
            var info = stat()
            return stat(file, &info) == 0 ? Int64(info.st_size) : nil
        }
    }

    public func attachmentBytes(for user: SyncUser) async throws -> Int64 {
        let folder = userFolder(user.id)
        return try await Self.blocking {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            var total: Int64 = 0
            for name in names where AttachmentReference.isHash(name) {
                var info = stat()
                if stat(folder + "/" + name, &info) == 0 { total += Int64(info.st_size) }
            }
            return total
        }
    }

    private func staging(_ hash: String, of userID: Int64) -> String { path + "/incoming/\(userID)-\(hash)" }

    public func heldUploadBytes(_ hash: String, for user: SyncUser) async throws -> Int64 {
        let staging = staging(hash, of: user.id)
        return try await Self.blocking {
            var info = stat()
            return stat(staging, &info) == 0 ? Int64(info.st_size) : 0
        }
    }

    public func beginAttachment(_ hash: String, for user: SyncUser, at offset: Int64) async throws
        -> any AttachmentUpload
    {
        let incoming = path + "/incoming"
        let (folder, destination, staging) = (userFolder(user.id), file(hash, of: user.id), staging(hash, of: user.id))
        return try await Self.blocking {
            try FileManager.default.createDirectory(atPath: incoming, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let descriptor = try Self.lockedStaging(staging, hash: hash)
            var info = stat()
            guard fstat(descriptor, &info) == 0 else {
                close(descriptor)
                throw Self.error("cannot read the size of \(staging)")
            }
            let held = Int64(info.st_size)
            let identity: String?
            if offset == 0 {
                // Starting over: the old bytes' name goes with them. The new bytes are named only
                // if this request leaves them unfinished (`suspend()`), which saves most uploads
                // a second file to create and remove.
                guard Self.forgetGeneration(of: staging) else {
                    close(descriptor)
                    throw Self.error("cannot remove \(Self.generationFile(of: staging))")
                }
                identity = nil
                guard ftruncate(descriptor, 0) == 0 else {
                    close(descriptor)
                    throw Self.error("cannot empty \(staging)")
                }
            } else if held != offset {
                close(descriptor)
                throw SyncServerError.uploadOffsetMismatch(hash: hash, held: held, sent: offset)
            } else {
                identity = Self.generation(of: staging)
            }
            return FolderUpload(
                descriptor: descriptor, staging: staging, destination: destination, folder: folder, offset: offset,
                identity: identity)
        }
    }

    /// The file beside an upload's file that names its bytes.
    static func generationFile(of staging: String) -> String { staging + ".generation" }

    /// Gives the upload's bytes a new name; `nil` when it cannot be written, and then no name is
    /// left.
    static func startGeneration(of staging: String) -> String? {
        let file = generationFile(of: staging)
        let name = UUID().uuidString
        let descriptor = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if descriptor >= 0 {
            let bytes = Array(name.utf8)
            let written = write(descriptor, bytes, bytes.count)
            close(descriptor)
            if written == bytes.count { return name }
        }
        unlink(file)
        return nil
    }

    /// Removes the name of the upload's bytes; whether none is left.
    ///
    /// Looked for first: most uploads have none, and `unlink` takes the folder's lock even for a
    /// file that is not there, which the other uploads creating files in it then wait for.
    private static func forgetGeneration(of staging: String) -> Bool {
        let file = generationFile(of: staging)
        guard access(file, F_OK) == 0 else { return errno == ENOENT }
        return unlink(file) == 0 || errno == ENOENT
    }

    /// The name of the upload's bytes, `nil` when it has none.
    private static func generation(of staging: String) -> String? {
        let descriptor = open(generationFile(of: staging), O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = read(descriptor, &bytes, bytes.count)
        guard count > 0 else { return nil }
        return String(decoding: bytes[..<count], as: UTF8.self)
    }

    /// Opens the upload's file in `incoming/`, creating it, with an exclusive lock on it.
    ///
    /// A file that another request renamed into place or removed between the `open` and the
    /// lock is not the upload's any more: it is opened again.
    private static func lockedStaging(_ staging: String, hash: String) throws -> Int32 {
        while true {
            let descriptor = open(staging, O_RDWR | O_CREAT, 0o644)
            guard descriptor >= 0 else { throw Self.error("cannot create \(staging)") }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                close(descriptor)
                throw SyncServerError.uploadInProgress(hash: hash)
            }
            var opened = stat()
            var named = stat()
            if fstat(descriptor, &opened) == 0, stat(staging, &named) == 0, opened.st_ino == named.st_ino,
                opened.st_dev == named.st_dev
            {
                return descriptor
            }
            close(descriptor)
        }
    }

    public func readAttachment(
        _ hash: String, for user: SyncUser, range: Range<Int64>,
        into body: @escaping @Sendable (ByteBuffer) async throws -> Void
    ) async throws {
        let file = file(hash, of: user.id)
        let descriptor = try await Self.blocking {
            let descriptor = open(file, O_RDONLY)
            guard descriptor >= 0 else { throw Self.error("cannot open \(file)") }
            return descriptor
        }
        defer { close(descriptor) }
        var offset = range.lowerBound
        while offset < range.upperBound {
            let count = Int(min(Int64(Self.chunkSize), range.upperBound - offset))
            let chunk = try await Self.blocking { [offset] in
                var buffer = ByteBufferAllocator().buffer(capacity: count)
                var read = 0
                buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
                    read = pread(descriptor, pointer.baseAddress, count, off_t(offset))
                    return max(read, 0)
                }
                guard read > 0 else { throw Self.error("cannot read \(file) at \(offset)") }
                return buffer
            }
            offset += Int64(chunk.readableBytes)
            try await body(chunk)
        }
    }

    public func pruneAttachments(unreferencedSince date: Date) async throws -> Int {
        var removed = 0
        for userID in users {
            let texts = try await liveRecords(userID)
            var named: Set<String> = []
            for text in texts where AttachmentReference.mayOccur(in: text) {
                guard let object = try? JSONObject(jsonBytes: Array(text.utf8)) else { continue }
                for reference in AttachmentReference.all(in: object) { named.insert(reference.sha256) }
            }
            let folder = userFolder(userID)
            let referenced = named
            removed += try await Self.blocking {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
                var removed = 0
                for name in names where AttachmentReference.isHash(name) {
                    let file = folder + "/" + name
                    if referenced.contains(name) {
                        _ = utimes(file, nil)
                    } else if let modified = Self.modificationDate(of: file), modified < date {
                        if unlink(file) == 0 { removed += 1 }
                    }
                }
                return removed
            }
        }
        let incoming = path + "/incoming"
        let abandoned = min(date, Date().addingTimeInterval(-Self.abandonedUploadAge))
        try await Self.blocking {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: incoming)) ?? [] {
                let file = incoming + "/" + name
                if name.hasSuffix(".generation") {
                    // The name of an upload's bytes outlives no upload.
                    if access(String(file.dropLast(".generation".count)), F_OK) != 0 { _ = unlink(file) }
                    continue
                }
                guard let modified = Self.modificationDate(of: file), modified < abandoned else { continue }
                // An upload a request still writes is left alone, however old its last byte.
                let descriptor = open(file, O_RDONLY)
                guard descriptor >= 0 else { continue }
                if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
                    _ = unlink(file)
                    _ = unlink(Self.generationFile(of: file))
                }
                close(descriptor)
            }
        }
        return removed
    }

    /// Bytes read at a time.
    static let chunkSize = 256 * 1_024

    /// Bytes an upload collects before it writes them.
    static let writeSize = 1 << 20

    static func modificationDate(of file: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: file))?[.modificationDate] as? Date
    }

    /// Runs blocking file work on a thread of its own, off the executor that serves requests.
    static func blocking<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Swift.Result { try work() }) }
        }
    }

    static func error(_ sentence: String) -> any Error {
        POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO, userInfo: [NSLocalizedDescriptionKey: sentence])
    }
}

/// One request's part of an upload into an ``AttachmentFolder``: its file in `incoming/`, locked,
/// renamed to its hash when whole.
///
/// The bytes of the body are written a MiB (``AttachmentFolder/writeSize``) at a time, and on
/// Linux each chunk written is handed to the disk at once (`sync_file_range`), so that the flush
/// that ends the upload has little left to wait for.
final class FolderUpload: AttachmentUpload, @unchecked Sendable {
    // @unchecked: one request uses an upload, one call at a time.
    private let descriptor: Int32
    private let staging: String
    private let destination: String
    private let folder: String
    private let offset: Int64
    /// The name of the bytes held: read from the file beside the upload's at the start, or
    /// given by ``suspend()`` to the bytes a request that started over leaves.
    private(set) var heldBytesIdentity: String?
    /// Bytes written to the file.
    private var position: Int64
    /// Bytes received and not yet written, copied out of the request's buffers (which may hold
    /// far more memory than their bytes) into one buffer, allocated once for the upload.
    private let pending = UnsafeMutableRawBufferPointer.allocate(
        byteCount: AttachmentFolder.writeSize, alignment: 16)
    private var pendingBytes = 0
    private var closed = false

    init(descriptor: Int32, staging: String, destination: String, folder: String, offset: Int64, identity: String?) {
        self.descriptor = descriptor
        self.staging = staging
        self.destination = destination
        self.folder = folder
        self.offset = offset
        self.position = offset
        self.heldBytesIdentity = identity
    }

    func readHeld(into body: @escaping @Sendable (ByteBuffer) async throws -> Void) async throws {
        let (descriptor, staging) = (descriptor, staging)
        var offset: Int64 = 0
        while offset < self.offset {
            let count = Int(min(Int64(AttachmentFolder.chunkSize), self.offset - offset))
            let chunk = try await AttachmentFolder.blocking { [offset] in
                var buffer = ByteBufferAllocator().buffer(capacity: count)
                var read = 0
                buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
                    read = pread(descriptor, pointer.baseAddress, count, off_t(offset))
                    return max(read, 0)
                }
                guard read > 0 else { throw AttachmentFolder.error("cannot read \(staging) at \(offset)") }
                return buffer
            }
            offset += Int64(chunk.readableBytes)
            try await body(chunk)
        }
    }

    func write(_ bytes: ByteBuffer) async throws {
        var offset = 0
        while offset < bytes.readableBytes {
            let count = min(AttachmentFolder.writeSize - pendingBytes, bytes.readableBytes - offset)
            bytes.withUnsafeReadableBytes { source in
                UnsafeMutableRawBufferPointer(rebasing: pending[pendingBytes..<(pendingBytes + count)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + count)]))
            }
            pendingBytes += count
            offset += count
            if pendingBytes == AttachmentFolder.writeSize { try await writePending() }
        }
    }

    /// Writes the bytes received so far after those in the file, and starts flushing them.
    private func writePending() async throws {
        guard pendingBytes > 0 else { return }
        // The buffer is not touched by this request while the write runs.
        let (descriptor, staging, position, count) = (descriptor, staging, position, pendingBytes)
        let address = UInt(bitPattern: pending.baseAddress)
        try await AttachmentFolder.blocking {
            let base = UnsafeRawPointer(bitPattern: address)!
            var written = 0
            while written < count {
                let wrote = pwrite(descriptor, base + written, count - written, off_t(position + Int64(written)))
                guard wrote > 0 else { throw AttachmentFolder.error("cannot write \(staging)") }
                written += wrote
            }
            // Starts writing the pages to disk without waiting for them.
            _ = amber_start_flushing(descriptor, position, Int64(count))
        }
        pendingBytes = 0
        self.position += Int64(count)
    }

    func finish() async throws -> Bool {
        try await writePending()
        let (descriptor, staging, destination, folder) = (descriptor, staging, destination, folder)
        // An upload started over in this request has no name beside it (`beginAttachment`).
        let named = heldBytesIdentity != nil
        closed = true
        return try await AttachmentFolder.blocking {
            // Closing last releases the lock: no other request writes the file meanwhile.
            defer { close(descriptor) }
            guard fsync(descriptor) == 0 else { throw AttachmentFolder.error("cannot flush \(staging)") }
            defer { if named { unlink(AttachmentFolder.generationFile(of: staging)) } }
            if access(destination, F_OK) == 0 {
                _ = utimes(destination, nil)
                unlink(staging)
                return false
            }
            guard rename(staging, destination) == 0 else {
                throw AttachmentFolder.error("cannot rename \(staging)")
            }
            let directory = open(folder, O_RDONLY)
            if directory >= 0 {
                fsync(directory)
                close(directory)
            }
            return true
        }
    }

    func suspend() async -> Int64 {
        // The bytes received are kept, as far as they can be written.
        try? await writePending()
        pendingBytes = 0
        if !closed {
            closed = true
            let (descriptor, staging, position, identity) = (descriptor, staging, position, heldBytesIdentity)
            // Named while the lock is held: no other request starts the upload over meanwhile.
            heldBytesIdentity = try? await AttachmentFolder.blocking {
                defer { close(descriptor) }
                if let identity { return identity }
                return position > 0 ? AttachmentFolder.startGeneration(of: staging) : nil
            }
        }
        return position
    }

    func cancel() async {
        pendingBytes = 0
        guard !closed else { return }
        closed = true
        let (descriptor, staging) = (descriptor, staging)
        _ = try? await AttachmentFolder.blocking {
            unlink(staging)
            unlink(AttachmentFolder.generationFile(of: staging))
            close(descriptor)
        }
    }

    deinit {
        // Bytes written stay for a later request to resume.
        if !closed { close(descriptor) }
        pending.deallocate()
    }
}
