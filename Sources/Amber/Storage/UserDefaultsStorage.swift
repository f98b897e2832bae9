import AmberLock
import Foundation
import OrderedCollections

/// Keeps each store in `UserDefaults`, as the seed article's persistent `IdentityStore` did:
/// the whole store is one value, read back and written again on every write.
///
/// Kept for compatibility with apps that already store their values this way. Every write
/// re-encodes and rewrites every record of the key, so a write costs time proportional to the
/// size of the store. Prefer `SQLiteStorage` for anything beyond a few hundred small values.
///
/// Each key is stored under `amber.<key>` as the same JSON document as ``FileStorage``'s.
///
/// ## What it guarantees
///
/// - **Within one process**, any number of stores and storage instances may open the same suite
///   and key. Their writes are serialized and each applies to the newest document, so every
///   acknowledged write is kept; each store hears the others' writes at once, as changes of
///   origin `.otherProcess`.
/// - **Between processes** `UserDefaults` offers no atomic read-modify-write, so two processes
///   writing one key would drop each other's records. A key is therefore owned by one process
///   at a time: opening it while another live process has it open throws
///   ``StoreError/storageInUse(path:reason:)``. The process gives it up when its last store on
///   the key goes away (or when it ends). To share stores between an app and its extensions,
///   use `SQLiteStorage` in the app group's container.
/// - **Durability**: a write is handed to `UserDefaults` before the store's method returns. On
///   Apple platforms the system persists it; elsewhere it is written to disk (`synchronize()`)
///   before the method returns.
public struct UserDefaultsStorage: StoreStorage {
    /// The suite, or `nil` for `UserDefaults.standard`.
    public let suiteName: String?

    /// Creates a storage in the standard defaults, or in a suite.
    public init(suiteName: String? = nil) {
        self.suiteName = suiteName
    }

    /// Opens the defaults value of `key`.
    ///
    /// - Throws: ``StoreError/unreadableStorage(path:reason:)`` when the value is not a record
    ///   document; ``StoreError/storageInUse(path:reason:)`` when another process has the key open.
    public func open(key: String) throws -> any StorageKeyHandle {
        try UserDefaultsStorageKey(document: UserDefaultsDocument.open(suiteName: suiteName, key: key))
    }
}

/// The records of one suite and key, shared by every storage key of this process that opens them.
final class UserDefaultsDocument: @unchecked Sendable {
    // @unchecked: `UserDefaults` is thread safe; the mutable state is in `contents`.
    private static let openDocuments = LockedValue<[String: WeakDocument]>([:])

    private struct WeakDocument {
        weak var document: UserDefaultsDocument?
    }

    let location: String
    private let defaults: UserDefaults
    let defaultsKey: String
    private let ownerKey: String
    private let contents: LockedValue<Contents>

    /// What the document holds, under its lock.
    struct Contents {
        /// The records as last written or read; this process's writes all go through here.
        fileprivate(set) var records: OrderedDictionary<String, Data>
        /// Counts writes, so each storage key can tell whether others wrote since it looked.
        fileprivate(set) var generation = 0
        fileprivate var signals: [ObjectIdentifier: @Sendable () -> Void] = [:]
    }

    /// The document of `key` in `suiteName`, opened once per process.
    static func open(suiteName: String?, key: String) throws -> UserDefaultsDocument {
        try openDocuments.withLock { open in
            let name = "\(suiteName ?? "")\u{0}\(key)"
            if let document = open[name]?.document { return document }
            let document = try UserDefaultsDocument(suiteName: suiteName, key: key)
            open[name] = WeakDocument(document: document)
            return document
        }
    }

    private init(suiteName: String?, key: String) throws {
        defaultsKey = "amber.\(key)"
        ownerKey = "amber.\(key).owner"
        location = "UserDefaults\(suiteName.map { " suite \($0)" } ?? "") key \(defaultsKey)"
        guard let defaults = suiteName.map({ UserDefaults(suiteName: $0) }) ?? UserDefaults.standard else {
            throw StoreError.unreadableStorage(path: location, reason: "the suite cannot be opened")
        }
        self.defaults = defaults
        Self.refresh(defaults)
        contents = LockedValue(Contents(records: try Self.read(defaults, key: defaultsKey, location: location)))
        try claim()
    }

    deinit {
        Self.refresh(defaults)
        if defaults.object(forKey: ownerKey) as? Int == Int(getpid()) {
            defaults.removeObject(forKey: ownerKey)
            Self.persist(defaults)
        }
    }

    /// Makes this process the key's one writer, unless another live process is.
    private func claim() throws {
        let me = Int(getpid())
        if let owner = defaults.object(forKey: ownerKey) as? Int, owner != me, Self.isRunning(owner) {
            throw StoreError.storageInUse(
                path: location,
                reason: .init(
                    "process \(owner) has it open, and UserDefaults cannot keep two processes' writes; "
                        + "share stores between processes with SQLiteStorage"))
        }
        defaults.set(me, forKey: ownerKey)
        Self.persist(defaults)
    }

    private static func isRunning(_ pid: Int) -> Bool {
        kill(pid_t(pid), 0) == 0 || errno == EPERM
    }

    /// Runs `body` holding the document's lock.
    func withContents<R>(_ body: (inout Contents) throws -> R) rethrows -> R {
        try contents.withLock(body)
    }

    /// Writes a batch on top of the newest records, inside ``withContents(_:)``.
    func write(_ batch: StorageBatch, to contents: inout Contents, signalling writer: ObjectIdentifier) throws {
        var updated = contents.records
        updated.apply(batch)
        defaults.set(RecordDocument.encode(updated), forKey: defaultsKey)
        Self.persist(defaults)
        contents.records = updated
        contents.generation += 1
        for (key, signal) in contents.signals where key != writer { signal() }
    }

    func setSignal(_ signal: (@Sendable () -> Void)?, for key: ObjectIdentifier) {
        contents.withLock { $0.signals[key] = signal }
    }

    private static func read(_ defaults: UserDefaults, key: String, location: String) throws -> OrderedDictionary<
        String, Data
    > {
        guard let object = defaults.object(forKey: key) else { return [:] }
        guard let data = object as? Data else {
            throw StoreError.unreadableStorage(path: location, reason: "the value is not data")
        }
        do {
            return try RecordDocument.decode(data)
        } catch {
            throw StoreError.unreadableStorage(path: location, reason: .init(error.reason))
        }
    }

    /// Reads what other processes wrote to the suite; Apple's defaults are always current.
    private static func refresh(_ defaults: UserDefaults) {
        #if !canImport(Darwin)
            defaults.synchronize()
        #endif
    }

    /// Puts the suite on disk; Apple's defaults persist by themselves.
    private static func persist(_ defaults: UserDefaults) {
        #if !canImport(Darwin)
            defaults.synchronize()
        #endif
    }
}

/// One store's view of a ``UserDefaultsDocument``.
final class UserDefaultsStorageKey: StorageKeyHandle, StoragePlace, Sendable {
    private let document: UserDefaultsDocument
    /// The document's records and generation when this key last looked; taken only inside the
    /// document's lock.
    private let known = LockedValue<(records: OrderedDictionary<String, Data>, generation: Int)>(([:], 0))

    init(document: UserDefaultsDocument) {
        self.document = document
    }

    deinit {
        document.setSignal(nil, for: ObjectIdentifier(self))
    }

    var place: String { document.location }

    func load() throws -> [StoredRecord] {
        document.withContents { contents in
            known.withLock { $0 = (contents.records, contents.generation) }
            return contents.records.records
        }
    }

    func write(_ body: (ExternalChange?) throws -> StorageBatch) throws {
        guard !WriterThreads.isWriting(document.location) else {
            throw StoreError.writeFailed(
                path: document.location, key: document.defaultsKey, reason: WriterThreads.nestedWriteReason)
        }
        try document.withContents { contents in
            try WriterThreads.writing(document.location) {
                let batch = try body(takeChanges(of: contents))
                guard !batch.isEmpty else { return }
                try document.write(batch, to: &contents, signalling: ObjectIdentifier(self))
                known.withLock { $0 = (contents.records, contents.generation) }
            }
        }
    }

    func startWatching(_ signal: @escaping @Sendable () -> Void) {
        // The other writers are in this process: they signal at once, on a queue of their own.
        let queue = DispatchQueue(label: "amber.user-defaults-storage")
        document.setSignal({ queue.async(execute: signal) }, for: ObjectIdentifier(self))
    }

    func stopWatching() {
        document.setSignal(nil, for: ObjectIdentifier(self))
    }

    func externalChanges() throws -> ExternalChange? {
        document.withContents { takeChanges(of: $0) }
    }

    /// What other writers changed since this key last looked, inside the document's lock.
    private func takeChanges(of contents: UserDefaultsDocument.Contents) -> ExternalChange? {
        known.withLock { known in
            guard known.generation != contents.generation else { return nil }
            let change = known.records.changes(to: contents.records)
            known = (contents.records, contents.generation)
            return change
        }
    }
}
