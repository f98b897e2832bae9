import AmberLock
import Foundation
import OrderedCollections

/// Keeps each store as one JSON file, `<key>.json`, in a directory.
///
/// ```swift
/// let storage = FileStorage(directory: appSupport.appendingPathComponent("Stores"))
/// let people = try IdentityStore<Person>(key: "people", storage: storage)
/// ```
///
/// Every write replaces the whole file atomically (a new file renamed over the old one), so a
/// crash leaves either the old or the new file, never a torn one. The cost of a write grows with
/// the size of the store: prefer `SQLiteStorage` beyond a few thousand values.
///
/// Writes through another `FileStorage` on the same directory, in this process or another, are
/// noticed by polling the file twice a second and arrive as changes of origin `.otherProcess`.
/// Writers take an exclusive `flock` on `<key>.json.lock` and apply their batch to the file as
/// it is on disk, so two writers never overwrite each other's records.
public struct FileStorage: StoreStorage {
    /// The directory holding the files; created on first write.
    public let directory: URL

    /// Creates a storage in `directory`.
    public init(directory: URL) {
        self.directory = directory
    }

    /// Opens the file of `key`.
    ///
    /// - Throws: ``StoreError/unreadableStorage(path:reason:)`` when the file exists but is not a
    ///   record file this library can read; the file is not changed.
    public func open(key: String) throws -> any StorageKeyHandle {
        precondition(!key.isEmpty && !key.contains("/"), "A FileStorage key must be a non-empty file name without '/'")
        return try FileStorageKey(url: directory.appendingPathComponent("\(key).json"), key: key)
    }
}

/// The file of one key.
final class FileStorageKey: StorageKeyHandle, StoragePlace, Sendable {
    private let url: URL
    private let key: String
    private let state: LockedValue<State>

    private struct State {
        var records: OrderedDictionary<String, Data>
        /// The file's identity after our last read or write, to tell other writers' changes apart.
        var knownVersion: FileVersion?
        var timer: DispatchSourceTimer?
    }

    init(url: URL, key: String) throws {
        self.url = url
        self.key = key
        let (records, knownVersion) = try Self.read(url)
        state = LockedValue(State(records: records, knownVersion: knownVersion))
    }

    var place: String { url.path }

    func load() throws -> [StoredRecord] {
        state.withLock { $0.records.records }
    }

    func write(_ body: (ExternalChange?) throws -> StorageBatch) throws {
        guard !WriterThreads.isWriting(url.path) else {
            throw StoreError.writeFailed(path: url.path, key: key, reason: WriterThreads.nestedWriteReason)
        }
        try state.withLock { state in
            do {
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            } catch {
                throw StoreError.writeFailed(
                    path: url.path, key: key, reason: .init(error.localizedDescription, underlyingError: error))
            }
            try withFileLock {
                try WriterThreads.writing(url.path) {
                    // Under the file lock no other writer can replace the file: take in what the
                    // others wrote since we last looked, then write on top of it.
                    var external: ExternalChange?
                    if FileVersion(url) != state.knownVersion {
                        let fresh: OrderedDictionary<String, Data>
                        do {
                            (fresh, state.knownVersion) = try Self.read(url)
                        } catch {
                            throw StoreError.writeFailed(
                                path: url.path, key: key, reason: .init("\(error)", underlyingError: error))
                        }
                        external = state.records.changes(to: fresh)
                        state.records = fresh
                    }
                    let batch = try body(external)
                    guard !batch.isEmpty else { return }
                    var updated = state.records
                    updated.apply(batch)
                    do {
                        try RecordDocument.encode(updated).write(to: url, options: .atomic)
                    } catch {
                        throw StoreError.writeFailed(
                            path: url.path, key: key, reason: .init(error.localizedDescription, underlyingError: error))
                    }
                    state.records = updated
                    state.knownVersion = FileVersion(url)
                }
            }
        }
    }

    /// Runs `body` holding an exclusive lock on `<key>.json.lock`, shared by every process.
    private func withFileLock<R>(_ body: () throws -> R) throws -> R {
        let path = url.path + ".lock"
        let descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw StoreError.writeFailed(path: path, key: key, reason: .init(String(cString: strerror(errno))))
        }
        defer { close(descriptor) }
        var result = flock(descriptor, LOCK_EX)
        while result != 0 && errno == EINTR { result = flock(descriptor, LOCK_EX) }
        guard result == 0 else {
            throw StoreError.writeFailed(
                path: path, key: key, reason: "cannot lock the file: \(String(cString: strerror(errno)))")
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    func startWatching(_ signal: @escaping @Sendable () -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "amber.file-storage.\(key)"))
        timer.schedule(deadline: .now() + .milliseconds(500), repeating: .milliseconds(500))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            if self.state.withLock({ FileVersion(self.url) != $0.knownVersion }) { signal() }
        }
        state.withLock { $0.timer = timer }
        timer.resume()
    }

    func stopWatching() {
        state.withLock { state in
            state.timer?.cancel()
            state.timer = nil
        }
    }

    /// The file's records when another writer replaced it since we last looked.
    func externalChanges() throws -> ExternalChange? {
        state.withLock { state in
            let version = FileVersion(url)
            guard version != state.knownVersion else { return nil }
            // A file being replaced or unreadable now is looked at again on the next tick.
            guard let (fresh, freshVersion) = try? Self.read(url) else { return nil }
            let change = state.records.changes(to: fresh)
            state.records = fresh
            state.knownVersion = freshVersion
            return change
        }
    }

    private static func read(_ url: URL) throws -> (OrderedDictionary<String, Data>, FileVersion?) {
        let version = FileVersion(url)
        guard FileManager.default.fileExists(atPath: url.path) else { return ([:], nil) }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw StoreError.unreadableStorage(
                path: url.path, reason: .init(error.localizedDescription, underlyingError: error))
        }
        do {
            return (try RecordDocument.decode(data), version)
        } catch {
            throw StoreError.unreadableStorage(path: url.path, reason: .init(error.reason))
        }
    }
}

/// What identifies one version of a file: replacing it atomically changes its inode.
struct FileVersion: Equatable {
    let inode: UInt64
    let size: UInt64
    let modified: Date

    init?(_ url: URL) {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return nil }
        inode = (attributes[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0
        size = (attributes[.size] as? NSNumber)?.uint64Value ?? 0
        modified = attributes[.modificationDate] as? Date ?? .distantPast
    }
}
