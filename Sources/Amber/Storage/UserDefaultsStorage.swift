import Foundation
import OrderedCollections

/// Keeps each store in `UserDefaults`, as the seed article's persistent `IdentityStore` did:
/// the whole store is one value, read back and written again on every write.
///
/// Kept for compatibility with apps that already store their values this way. Every write
/// re-encodes and rewrites every value of the key, so a write costs time proportional to the
/// size of the store (about 28 ms per add at 2,000 values in the seed's design), and
/// `UserDefaults` gives no atomicity across processes nor change reports. Prefer
/// `SQLiteStorage` for anything beyond a few hundred small values.
///
/// Each key is stored under `amber.<key>` as the same JSON document as ``FileStorage``'s.
public struct UserDefaultsStorage: StoreStorage {
    /// The suite, or `nil` for `UserDefaults.standard`.
    public let suiteName: String?

    /// Creates a storage in the standard defaults, or in a suite (an app group shared with extensions).
    public init(suiteName: String? = nil) {
        self.suiteName = suiteName
    }

    /// Opens the defaults value of `key`.
    ///
    /// - Throws: ``StoreError/unreadableStorage(path:reason:)`` when the value is not a record document.
    public func open(key: String) throws -> any StoreStorageKey {
        try UserDefaultsStorageKey(suiteName: suiteName, key: key)
    }
}

final class UserDefaultsStorageKey: StoreStorageKey, @unchecked Sendable {
    // @unchecked: `UserDefaults` is thread safe, and `lock` serializes the read-modify-write of `write`.
    private let defaults: UserDefaults
    private let defaultsKey: String
    private let location: String
    private let lock = NSLock()

    init(suiteName: String?, key: String) throws {
        guard let defaults = suiteName.map({ UserDefaults(suiteName: $0) }) ?? UserDefaults.standard else {
            throw StoreError.unreadableStorage(path: "UserDefaults suite \(suiteName ?? "")", reason: "the suite cannot be opened")
        }
        self.defaults = defaults
        self.defaultsKey = "amber.\(key)"
        self.location = "UserDefaults\(suiteName.map { " suite \($0)" } ?? "") key \(defaultsKey)"
        _ = try readAll()
    }

    func load() throws -> [StoredRecord] {
        try readAll().records
    }

    func write(_ batch: StorageBatch) throws {
        try lock.withLock {
            // The seed's design: read everything, change it, write everything back.
            var records = try readAll()
            records.apply(batch)
            defaults.set(RecordDocument.encode(records), forKey: defaultsKey)
        }
    }

    private func readAll() throws -> OrderedDictionary<String, Data> {
        guard let object = defaults.object(forKey: defaultsKey) else { return [:] }
        guard let data = object as? Data else {
            throw StoreError.unreadableStorage(path: location, reason: "the value is not data")
        }
        do {
            return try RecordDocument.decode(data)
        } catch {
            throw StoreError.unreadableStorage(path: location, reason: error.reason)
        }
    }
}
