/// The one error type of Amber's store and storages, with a readable description for each cause.
public enum StoreError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The identity is not in the store.
    case identityNotFound(id: String)
    /// The identity being edited was removed from the store, so the edit cannot be saved.
    case identityDeleted(id: String)
    /// The storage at `path` cannot be read: garbage bytes, a foreign format or a newer schema.
    /// It was left byte for byte as it was.
    case unreadableStorage(path: String, reason: String)
    /// A write to `key` at `path` failed; nothing changed in memory or on disk.
    case writeFailed(path: String, key: String, reason: String)
    /// A value of `key` could not be encoded as JSON; nothing was written.
    case encodingFailed(key: String, id: String, reason: String)
    /// The store was written to from inside one of its own writes: a transaction's body, an
    /// `update(id:)` transform or a `recover` transform. Write through the transaction instead
    /// (an ``Editor`` saves into one with ``Editor/save(in:)``). Nothing was written.
    case writeInsideTransaction
    /// The storage at `path` is in use by another process and cannot be shared with it safely.
    case storageInUse(path: String, reason: String)

    /// A sentence naming the identity, key or file involved and the cause.
    public var description: String {
        switch self {
        case .identityNotFound(let id):
            "no value with id \(id) in the store"
        case .identityDeleted(let id):
            "the value with id \(id) was removed from the store while it was being edited"
        case .unreadableStorage(let path, let reason):
            "cannot read the store at \(path): \(reason)"
        case .writeFailed(let path, let key, let reason):
            "cannot write key '\(key)' to \(path): \(reason)"
        case .encodingFailed(let key, let id, let reason):
            "cannot encode the value with id \(id) for key '\(key)': \(reason)"
        case .writeInsideTransaction:
            "a store was written to from inside one of its own transactions, updates or recoveries; write through the transaction instead"
        case .storageInUse(let path, let reason):
            "the store at \(path) is in use by another process: \(reason)"
        }
    }
}
