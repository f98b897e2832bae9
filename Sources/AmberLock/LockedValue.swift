import Foundation

/// A value guarded by a lock, usable from any thread: the one lock type of the package.
///
/// `Synchronization.Mutex` needs macOS 15 / iOS 18, above the package's platforms, so this wraps
/// `NSRecursiveLock`, which every platform has. The lock is recursive only so that a thread
/// locking it again is noticed instead of waiting forever for itself: ``withLock(_:)`` stops
/// with a precondition failure, and ``withLock(throwingIfHeld:_:)`` throws, for the locks that a
/// caller's code may try to take again (the store's writers, whose bodies run the app's
/// transforms).
@usableFromInline
package final class LockedValue<State>: @unchecked Sendable {
    // @unchecked: `isHeld` and `state` are only read or written while `lock` is held.
    @usableFromInline let lock = NSRecursiveLock()
    // Unchecked: `lock` already makes every access exclusive; the run-time checks would cost a
    // measurable part of an in-memory write.
    @exclusivity(unchecked) @usableFromInline var isHeld = false
    @exclusivity(unchecked) @usableFromInline var state: State

    @usableFromInline
    package init(_ state: State) {
        self.state = state
    }

    /// Runs `body` holding the lock.
    ///
    /// - Precondition: The current thread does not hold the lock already.
    @inlinable
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        precondition(!isHeld, "a lock was taken again by the thread that holds it, which would wait for itself")
        isHeld = true
        defer { isHeld = false }
        return try body(&state)
    }

    /// Runs `body` holding the lock, or throws `error` when the current thread holds it already.
    ///
    /// - Throws: `error` when the lock is held by this thread (then `body` does not run), or what
    ///   `body` throws.
    @inlinable
    package func withLock<R>(throwingIfHeld error: @autoclosure () -> any Error, _ body: (inout State) throws -> R)
        throws -> R
    {
        lock.lock()
        defer { lock.unlock() }
        guard !isHeld else { throw error() }
        isHeld = true
        defer { isHeld = false }
        return try body(&state)
    }
}
