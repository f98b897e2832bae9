import Foundation

/// A value guarded by a lock, usable from any thread.
///
/// `Synchronization.Mutex` needs macOS 15 / iOS 18, above the package's platforms, so this
/// wraps `NSLock`, which every platform has.
@usableFromInline
package final class LockedValue<State>: @unchecked Sendable {
    // @unchecked: `state` is only read or written while `lock` is held.
    @usableFromInline let lock = NSLock()
    // Unchecked: `lock` already makes every access exclusive; the run-time check would cost a
    // measurable part of an in-memory write.
    @exclusivity(unchecked) @usableFromInline var state: State

    @usableFromInline
    package init(_ state: State) {
        self.state = state
    }

    @inlinable
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
