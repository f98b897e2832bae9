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
/// `incoming/` (flushed to disk) and then renamed into place, so a file under its hash always
/// holds all its bytes.
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

    public func beginAttachment(_ hash: String, for user: SyncUser) async throws -> any AttachmentUpload {
        let incoming = path + "/incoming"
        let (folder, destination) = (userFolder(user.id), file(hash, of: user.id))
        return try await Self.blocking {
            try FileManager.default.createDirectory(atPath: incoming, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let temporary = incoming + "/" + UUID().uuidString
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o644)
            guard descriptor >= 0 else { throw Self.error("cannot create \(temporary)") }
            return FolderUpload(descriptor: descriptor, temporary: temporary, destination: destination, folder: folder)
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
                if let modified = Self.modificationDate(of: file), modified < abandoned { _ = unlink(file) }
            }
        }
        return removed
    }

    /// Bytes read at a time.
    static let chunkSize = 256 * 1_024

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

/// One upload into an ``AttachmentFolder``: a file in `incoming/`, renamed to its hash when whole.
final class FolderUpload: AttachmentUpload, @unchecked Sendable {
    // @unchecked: one request uses an upload, one call at a time.
    private let descriptor: Int32
    private let temporary: String
    private let destination: String
    private let folder: String
    private var closed = false

    init(descriptor: Int32, temporary: String, destination: String, folder: String) {
        self.descriptor = descriptor
        self.temporary = temporary
        self.destination = destination
        self.folder = folder
    }

    func write(_ bytes: ByteBuffer) async throws {
        let (descriptor, temporary) = (self.descriptor, self.temporary)
        try await AttachmentFolder.blocking {
            try bytes.withUnsafeReadableBytes { pointer in
                var written = 0
                while written < pointer.count {
                    let count = posixWrite(descriptor, pointer.baseAddress! + written, pointer.count - written)
                    guard count > 0 else { throw AttachmentFolder.error("cannot write \(temporary)") }
                    written += count
                }
            }
        }
    }

    func finish() async throws -> Bool {
        let (descriptor, temporary, destination, folder) = (descriptor, temporary, destination, folder)
        closed = true
        return try await AttachmentFolder.blocking {
            defer { unlink(temporary) }
            guard fsync(descriptor) == 0 else {
                close(descriptor)
                throw AttachmentFolder.error("cannot flush \(temporary)")
            }
            close(descriptor)
            if access(destination, F_OK) == 0 {
                _ = utimes(destination, nil)
                return false
            }
            guard rename(temporary, destination) == 0 else {
                throw AttachmentFolder.error("cannot rename \(temporary)")
            }
            let directory = open(folder, O_RDONLY)
            if directory >= 0 {
                fsync(directory)
                close(directory)
            }
            return true
        }
    }

    func cancel() async {
        guard !closed else { return }
        closed = true
        let (descriptor, temporary) = (descriptor, temporary)
        _ = try? await AttachmentFolder.blocking {
            close(descriptor)
            unlink(temporary)
        }
    }

    deinit {
        if !closed {
            close(descriptor)
            unlink(temporary)
        }
    }
}

/// POSIX `write`, named apart from the upload's own `write(_:)`.
private func posixWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
