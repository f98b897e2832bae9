/// The one error type of Amber's store and storages, with a readable description for each cause.
public enum StoreError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The identity is not in the store.
    case identityNotFound(id: String)
    /// The identity being edited was removed from the store, so the edit cannot be saved.
    case identityDeleted(id: String)
    /// The storage at `path` cannot be read: garbage bytes, a foreign format or a newer schema.
    /// It was left byte for byte as it was.
    case unreadableStorage(path: String, reason: Cause)
    /// A write to `key` at `path` failed; nothing changed in memory or on disk.
    case writeFailed(path: String, key: String, reason: Cause)
    /// A value of `key` could not be encoded as JSON; nothing was written.
    case encodingFailed(key: String, id: String, reason: String)
    /// The store was written to from inside one of its own writes: a transaction's body, an
    /// `update(id:)` transform or a `recover` transform. Write through the transaction instead
    /// (an ``Editor`` saves into one with ``Editor/save(in:)``). Nothing was written.
    case writeInsideTransaction
    /// The storage at `path` is in use by another process and cannot be shared with it safely.
    case storageInUse(path: String, reason: Cause)

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

extension StoreError {
    /// Why a storage could not be read or written: a sentence and, when the failure came from
    /// below (SQLite, the file system), the error it came from.
    ///
    /// ```swift
    /// catch StoreError.writeFailed(_, _, let reason) {
    ///     if (reason.underlyingError as? DatabaseError)?.resultCode == .SQLITE_FULL { showDiskFull() }
    /// }
    /// ```
    public struct Cause: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringInterpolation {
        /// What went wrong, in a sentence.
        public let message: String
        /// The error underneath: GRDB's `DatabaseError` (with SQLite's result code), a
        /// Foundation file error, or `nil` when the library found the problem itself.
        public let underlyingError: (any Error)?

        /// Creates a cause from a sentence and the error it came from, if any.
        public init(_ message: String, underlyingError: (any Error)? = nil) {
            self.message = message
            self.underlyingError = underlyingError
        }

        /// Creates a cause the library found itself.
        public init(stringLiteral value: String) {
            self.init(value)
        }

        /// Creates a cause the library found itself.
        public init(stringInterpolation: DefaultStringInterpolation) {
            self.init(String(stringInterpolation: stringInterpolation))
        }

        /// The message.
        public var description: String { message }

        /// Causes with equal messages are equal; the underlying errors are not compared.
        public static func == (lhs: Cause, rhs: Cause) -> Bool {
            lhs.message == rhs.message
        }
    }

    /// The error underneath a storage failure, when there is one: GRDB's `DatabaseError` tells a
    /// full disk (`SQLITE_FULL`) from a database busy with another process (`SQLITE_BUSY`).
    public var underlyingError: (any Error)? {
        switch self {
        case .unreadableStorage(_, let reason), .writeFailed(_, _, let reason), .storageInUse(_, let reason):
            reason.underlyingError
        case .identityNotFound, .identityDeleted, .encodingFailed, .writeInsideTransaction:
            nil
        }
    }
}
