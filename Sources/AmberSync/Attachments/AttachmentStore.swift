import Amber
import AmberSQLite
import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The bytes of attachments, content-addressed in a folder beside an SQLite file: one file per
/// content, named by its SHA-256.
///
/// Adding writes a temporary file, flushes it to disk, and renames it into place before it
/// returns the `Attachment`: a crash leaves either the whole file or none, never part of one
/// under its name. Adding the same bytes twice keeps one copy.
///
/// ```swift
/// let storage = try SQLiteStorage(path: "notes.sqlite")
/// let attachments = AttachmentStore(storage: storage)       // notes.sqlite.attachments/
/// let photo = try attachments.add(contentsOf: pictureURL, mediaType: "image/jpeg")
/// attachments.fileURL(for: photo)                            // the file, while its bytes are here
/// ```
///
/// A ``SyncClient`` on the same storage uploads the attachments its pending records name, and
/// brings the ones pulled records name by its ``AttachmentDownloadPolicy``; ask it for bytes that
/// are not here with ``SyncClient/data(for:)``.
public struct AttachmentStore: Sendable {
    /// The folder that holds the files.
    public let folder: URL

    /// The store beside `storage`'s SQLite file: the folder named like the file with
    /// `.attachments` appended.
    ///
    /// - Parameter storage: The SQLite storage whose records name the attachments.
    public init(storage: SQLiteStorage) {
        self.init(folder: URL(fileURLWithPath: storage.path + ".attachments"))
    }

    /// The store in `folder`, created when first written.
    ///
    /// - Parameter folder: The folder that holds the files.
    public init(folder: URL) {
        self.folder = folder
    }

    /// Stores `data` and describes it.
    ///
    /// - Parameters:
    ///   - data: The bytes.
    ///   - mediaType: Their media type, such as `image/png`.
    ///   - fileName: A name to save them under again, if any.
    /// - Returns: The attachment, its bytes on disk under their hash.
    /// - Throws: ``SyncError`` of kind ``SyncError/Kind/storage`` when the folder cannot be written.
    public func add(_ data: Data, mediaType: String, fileName: String? = nil) throws -> Attachment {
        let hash = SHA256.hash(data: data).hexDigest
        let attachment = Attachment(sha256: hash, size: Int64(data.count), mediaType: mediaType, fileName: fileName)
        if contains(attachment) {
            // Added again: a new grace period before it may be removed unreferenced.
            _ = utimes(file(for: hash).path, nil)
            return attachment
        }
        let temporary = try newIncomingFile()
        do {
            try data.write(to: temporary)
            try Self.flush(temporary)
            try moveIntoPlace(temporary, as: hash)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw SyncError(.storage, "cannot store an attachment in \(folder.path): \(error)", underlyingError: error)
        }
        return attachment
    }

    /// Copies the file at `file` into the store, hashing it as it goes, and describes it.
    ///
    /// - Parameters:
    ///   - file: The file to copy; read in chunks, so its size does not matter.
    ///   - mediaType: Its media type, such as `image/jpeg`.
    ///   - fileName: A name to save it under again; `file`'s own name unless given.
    /// - Returns: The attachment, its bytes on disk under their hash.
    /// - Throws: ``SyncError`` of kind ``SyncError/Kind/storage`` when the file cannot be read or
    ///   the folder written.
    public func add(contentsOf file: URL, mediaType: String, fileName: String? = nil) throws -> Attachment {
        let temporary = try newIncomingFile()
        do {
            try Self.createEmpty(temporary)
            let input = try FileHandle(forReadingFrom: file)
            defer { try? input.close() }
            let output = try FileHandle(forWritingTo: temporary)
            var hasher = SHA256()
            var size: Int64 = 0
            do {
                while let chunk = try input.read(upToCount: Self.chunkSize), !chunk.isEmpty {
                    hasher.update(data: chunk)
                    size += Int64(chunk.count)
                    try output.write(contentsOf: chunk)
                }
                try output.synchronize()
                try output.close()
            } catch {
                try? output.close()
                throw error
            }
            let attachment = Attachment(
                sha256: hasher.finalize().hexDigest, size: size, mediaType: mediaType,
                fileName: fileName ?? file.lastPathComponent)
            try moveIntoPlace(temporary, as: attachment.sha256)
            return attachment
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw SyncError(.storage, "cannot add \(file.path) as an attachment: \(error)", underlyingError: error)
        }
    }

    /// Whether the attachment's bytes are here.
    ///
    /// - Parameter attachment: The attachment.
    /// - Returns: `true` when its file is in the folder.
    public func contains(_ attachment: Attachment) -> Bool {
        FileManager.default.fileExists(atPath: file(for: attachment.sha256).path)
    }

    /// The file holding the attachment's bytes, when they are here.
    ///
    /// Read it, never write it: the name is the hash of its bytes.
    ///
    /// - Parameter attachment: The attachment.
    /// - Returns: The file's URL, or `nil` while the bytes are not here (not yet downloaded).
    public func fileURL(for attachment: Attachment) -> URL? {
        contains(attachment) ? file(for: attachment.sha256) : nil
    }

    /// The hashes of the attachments whose bytes are here.
    public var storedHashes: Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return Set(names.filter { $0.utf8.count == 64 && Attachment.isValidHash($0) })
    }

    // MARK: Internal

    /// Bytes read or written at a time.
    static let chunkSize = 1 << 20

    /// Where the bytes of `hash` are kept once whole.
    func file(for hash: String) -> URL {
        folder.appendingPathComponent(hash, isDirectory: false)
    }

    /// Where a download of `hash` collects its bytes until they are whole and checked; kept
    /// across restarts, so a download resumes where it stopped.
    func partialDownload(for hash: String) throws -> URL {
        let downloads = folder.appendingPathComponent("downloads", isDirectory: true)
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        return downloads.appendingPathComponent(hash + ".part", isDirectory: false)
    }

    /// A new, unique name in the folder for incoming bytes.
    private func newIncomingFile() throws -> URL {
        let incoming = folder.appendingPathComponent("incoming", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: incoming, withIntermediateDirectories: true)
        } catch {
            throw SyncError(.storage, "cannot create \(incoming.path): \(error)", underlyingError: error)
        }
        return incoming.appendingPathComponent(UUID().uuidString, isDirectory: false)
    }

    /// Checks that `partial` holds exactly the bytes of `attachment`, flushes it, and renames it
    /// into place. Bytes that do not match are removed.
    ///
    /// - Parameter written: The SHA-256 and size of the file's bytes, hashed as they were
    ///   written; the file is read to hash it when `nil`.
    /// - Throws: ``SyncError`` of kind ``SyncError/Kind/protocolViolation`` when the bytes are not
    ///   the attachment's (removed), or of kind ``SyncError/Kind/storage``.
    func keep(_ partial: URL, as attachment: Attachment, written: (hash: String, size: Int64)? = nil)
        throws(SyncError)
    {
        let hash: String
        let size: Int64
        do {
            (hash, size) = try written ?? Self.hash(of: partial)
        } catch {
            throw SyncError(.storage, "cannot read \(partial.path): \(error)", underlyingError: error)
        }
        guard hash == attachment.sha256, size == attachment.size else {
            try? FileManager.default.removeItem(at: partial)
            throw SyncError(
                .protocolViolation,
                "the bytes received for attachment \(attachment.sha256) have the SHA-256 \(hash) (\(size) bytes); they were not kept"
            )
        }
        do {
            try Self.flush(partial)
            try moveIntoPlace(partial, as: hash)
        } catch {
            throw SyncError(
                .storage, "cannot keep attachment \(hash) in \(folder.path): \(error)", underlyingError: error)
        }
    }

    /// The SHA-256 state after the first `count` bytes of a file, read in chunks.
    static func hasher(of file: URL, count: Int) throws -> SHA256 {
        let input = try FileHandle(forReadingFrom: file)
        defer { try? input.close() }
        var hasher = SHA256()
        var left = count
        while left > 0, let chunk = try input.read(upToCount: min(chunkSize, left)), !chunk.isEmpty {
            hasher.update(data: chunk)
            left -= chunk.count
        }
        guard left == 0 else { throw CocoaError(.fileReadCorruptFile) }
        return hasher
    }

    /// The SHA-256 and size of a file, read in chunks.
    static func hash(of file: URL) throws -> (hash: String, size: Int64) {
        let input = try FileHandle(forReadingFrom: file)
        defer { try? input.close() }
        var hasher = SHA256()
        var size: Int64 = 0
        while let chunk = try input.read(upToCount: chunkSize), !chunk.isEmpty {
            hasher.update(data: chunk)
            size += Int64(chunk.count)
        }
        return (hasher.finalize().hexDigest, size)
    }

    /// Renames a whole, flushed file to its hash, and flushes the folder so the name survives a
    /// power loss. A file already there has the same bytes: the new one is dropped.
    private func moveIntoPlace(_ temporary: URL, as hash: String) throws {
        let destination = file(for: hash)
        if FileManager.default.fileExists(atPath: destination.path) {
            try? FileManager.default.removeItem(at: temporary)
            _ = utimes(destination.path, nil)
            return
        }
        guard rename(temporary.path, destination.path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: destination.path])
        }
        Self.flushFolder(folder)
    }

    /// Creates `file` empty, or empties the file there.
    ///
    /// One file is created: `FileManager.createFile(atPath:contents:attributes:)` writes another
    /// and renames it over, which doubles the cost of a small attachment on some file systems.
    static func createEmpty(_ file: URL) throws {
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [
                    NSFilePathErrorKey: file.path,
                    NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO),
                ])
        }
        close(descriptor)
    }

    /// Flushes a file's bytes to disk.
    static func flush(_ file: URL) throws {
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try handle.synchronize()
    }

    /// Flushes a folder's entries to disk, so a rename in it survives a power loss.
    static func flushFolder(_ folder: URL) {
        let descriptor = open(folder.path, O_RDONLY)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        _ = close(descriptor)
    }
}

extension SHA256.Digest {
    /// The digest as lowercase hexadecimal digits.
    var hexDigest: String {
        map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xf)]], as: UTF8.self)
        }.joined()
    }
}
