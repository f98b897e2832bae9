import Foundation

/// Where an ``IdentityStore`` keeps its values between launches.
///
/// A storage holds several stores side by side, told apart by `key`. Amber ships
/// ``FileStorage``, ``UserDefaultsStorage`` and, in the `AmberSQLite` module, `SQLiteStorage`.
/// A storage deals in records: a value's identity as a string and its JSON encoding.
///
/// Conforming types must write every batch atomically (all of it or none of it) and
/// must never change or drop a record they cannot interpret.
public protocol StoreStorage: Sendable {
    /// Opens the records of one key.
    ///
    /// - Throws: ``StoreError`` when the storage cannot be read; the storage is left as it was.
    func open(key: String) throws -> any StorageKeyHandle
}

/// An open handle on the records of one key in a ``StoreStorage``: what ``StoreStorage/open(key:)``
/// returns, and what a store reads and writes through while it is open.
///
/// A key may have other writers: other processes, or other storage instances on the same
/// location. The store never computes a write from values it has not checked against them:
/// ``write(_:)`` hands it what they committed, under the storage's write lock, before it
/// resolves its own write.
public protocol StorageKeyHandle: AnyObject, Sendable {
    /// Every record of the key, in store order (the order identities were first added).
    func load() throws -> [StoredRecord]

    /// Runs one write, atomically with respect to every other writer of the key.
    ///
    /// Holding the storage's write lock (an SQLite write transaction, a file lock), the storage
    /// calls `body` once with what other writers committed since this key last looked (`nil`
    /// when nothing), then writes the batch `body` returns, if not empty. No other writer can
    /// commit between the two, so a write computed from the values `body` sees overwrites nothing
    /// it has not seen. On return the batch is on disk.
    ///
    /// Deletions apply first, then upserts. An upserted record keeps its position when it exists
    /// and goes last when it is new, so deleting and upserting one identity moves it last.
    ///
    /// - Throws: What `body` throws, unchanged (then nothing is written, but the change handed to
    ///   `body` counts as seen); or ``StoreError`` when writing fails (then nothing of the batch is
    ///   on disk).
    func write(_ body: (ExternalChange?) throws -> StorageBatch) throws

    /// Starts signalling that other writers may have changed this key, until ``stopWatching()``.
    ///
    /// The signal runs on a background thread. The store answers it by calling
    /// ``externalChanges()`` while it holds its write lock, so that what it reads from the
    /// storage and its own writes cannot interleave.
    func startWatching(_ signal: @escaping @Sendable () -> Void)

    /// Stops the signals started by ``startWatching(_:)``.
    func stopWatching()

    /// What other writers changed since the last ``load()``, ``write(_:)`` or call of this
    /// method, or `nil` when nothing did. Called with the store's write lock held.
    func externalChanges() throws -> ExternalChange?
}

/// The former name of ``StorageKeyHandle``.
@available(*, deprecated, renamed: "StorageKeyHandle")
public typealias StoreStorageKey = StorageKeyHandle

extension StorageKeyHandle {
    /// Storages that cannot be shared signal nothing.
    public func startWatching(_ signal: @escaping @Sendable () -> Void) {}
    /// Storages that cannot be shared signal nothing.
    public func stopWatching() {}
    /// Storages that cannot be shared see no other writer.
    public func externalChanges() throws -> ExternalChange? { nil }
}

/// One stored value: its identity as a string and its JSON encoding.
public struct StoredRecord: Sendable, Equatable {
    /// The identity, as ``IdentityStore`` encodes it: a `String` id as is, a `UUID` as its
    /// `uuidString`, other ids as their description or their JSON encoding.
    public let id: String
    /// The value's JSON encoding.
    public let data: Data

    /// Creates a record.
    public init(id: String, data: Data) {
        self.id = id
        self.data = data
    }
}

/// The records one store write changes, written atomically.
public struct StorageBatch: Sendable, Equatable {
    /// Records to insert or replace, new ones in the order they were added.
    public var upserts: [StoredRecord]
    /// Identities of records to delete.
    public var deletions: [String]

    /// Creates a batch.
    public init(upserts: [StoredRecord] = [], deletions: [String] = []) {
        self.upserts = upserts
        self.deletions = deletions
    }

    /// Whether the batch writes nothing.
    public var isEmpty: Bool { upserts.isEmpty && deletions.isEmpty }
}

/// What other writers changed in a key since a store last looked.
///
/// Several transactions of other writers may arrive as one change.
public enum ExternalChange: Sendable, Equatable {
    /// These identities were deleted and these records inserted or replaced, in store order.
    ///
    /// An identity listed in both was deleted and inserted again: it moved last, among the
    /// other new records, in the order of `upserts`. Every other upserted identity the store
    /// already holds keeps its position.
    case records(upserts: [StoredRecord], deletions: [String])
    /// The key now holds exactly these records, in store order.
    case snapshot([StoredRecord])
}
