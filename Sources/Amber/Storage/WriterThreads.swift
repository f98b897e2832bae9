import AmberLock
import Foundation

/// The places (files, defaults keys) a thread of this process is writing, so that a write to the
/// same place started on that thread from inside the first one (a transaction body writing to
/// another store of the same file) is refused instead of waiting forever for a lock its own
/// thread holds.
package enum WriterThreads {
    private static let writers = LockedValue<[String: ObjectIdentifier]>([:])

    /// Whether the current thread is writing `place`.
    package static func isWriting(_ place: String) -> Bool {
        let thread = ObjectIdentifier(Thread.current)
        return writers.withLock { $0[place] == thread }
    }

    /// Runs `body` as the current thread's write of `place`; call it holding the place's lock.
    package static func writing<R>(_ place: String, _ body: () throws -> R) rethrows -> R {
        let thread = ObjectIdentifier(Thread.current)
        writers.withLock { $0[place] = thread }
        defer { writers.withLock { $0[place] = nil } }
        return try body()
    }

    /// The reason given when a write starts inside another write to the same place.
    package static let nestedWriteReason: StoreError.Cause =
        "a write started inside another store's write to the same storage (a transaction body or update transform); write after that one returns"
}

/// A storage key that can say where it writes, so a store can refuse a nested write to the same
/// place before it takes any lock.
package protocol StoragePlace {
    /// The file, or defaults key, the key writes to; equal for every instance on it.
    var place: String { get }
}
