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
    func open(key: String) throws -> any StoreStorageKey
}

/// The records of one key in a ``StoreStorage``, as an open store uses them.
public protocol StoreStorageKey: AnyObject, Sendable {
    /// Every record of the key, in store order (the order identities were first added).
    func load() throws -> [StoredRecord]

    /// Writes a batch atomically: on return it is on disk; on throw nothing of it is.
    ///
    /// Deletions apply first, then upserts. An upserted record keeps its position when it exists
    /// and goes last when it is new, so deleting and upserting one identity moves it last.
    func write(_ batch: StorageBatch) throws

    /// Starts reporting changes that other writers (other processes, or other storage
    /// instances on the same location) make to this key, until ``stopWatching()``.
    ///
    /// The handler runs on a background thread, at most once at a time.
    func startWatching(_ handler: @escaping @Sendable (ExternalChange) -> Void)

    /// Stops the reports started by ``startWatching(_:)``.
    func stopWatching()
}

extension StoreStorageKey {
    /// Storages that cannot be shared report nothing.
    public func startWatching(_ handler: @escaping @Sendable (ExternalChange) -> Void) {}
    /// Storages that cannot be shared report nothing.
    public func stopWatching() {}
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

/// What another writer changed in a key.
public enum ExternalChange: Sendable, Equatable {
    /// These records were inserted or replaced and these identities deleted.
    case records(upserts: [StoredRecord], deletions: [String])
    /// The key now holds exactly these records, in store order.
    case snapshot([StoredRecord])
}
