import AmberLock
import Dispatch
import ServiceLifecycle

/// Wakes pulls that wait for a user's next change.
///
/// Each user has a generation counter that ``notify(userID:)`` increments after a push for that
/// user commits. A waiting pull reads ``generation(for:)`` *before* it looks for changes, and then
/// waits for a generation after that one, so a push that commits between the look and the wait
/// is never missed.
///
/// ```swift
/// let generation = notifier.generation(for: user.id)
/// let response = try await database.pull(for: user, after: cursor, limit: limit)
/// if response.changes.isEmpty {
///     _ = await notifier.wait(for: user.id, after: generation, timeout: .seconds(30))
/// }
/// ```
///
/// The notifier lives in one process. A backend shared by several server processes also calls
/// ``notify(userID:)`` when it hears of another process's commit.
public final class ChangeNotifier: Sendable {
    private let state = LockedValue(State())

    /// Creates a notifier with every user at generation 0.
    public init() {}

    /// The number of notifications so far for `userID`.
    ///
    /// - Parameter userID: The ``SyncUser/id`` of a user.
    /// - Returns: A counter that only grows.
    public func generation(for userID: Int64) -> UInt64 {
        state.withLock { $0.generations[userID, default: 0] }
    }

    /// Signals that changes of `userID` committed: wakes every pull waiting for that user.
    ///
    /// - Parameter userID: The ``SyncUser/id`` of the user whose records changed.
    public func notify(userID: Int64) {
        let woken = state.withLock { state in
            state.generations[userID, default: 0] += 1
            var woken: [CheckedContinuation<Bool, Never>] = []
            for (waiterID, waiter) in state.waiters[userID] ?? [:] {
                // A waiter still registering compares the generation itself.
                if case .waiting(let continuation) = waiter {
                    woken.append(continuation)
                    state.removeWaiter(waiterID, of: userID)
                }
            }
            return woken
        }
        for continuation in woken {
            continuation.resume(returning: true)
        }
    }

    /// Waits until `userID`'s generation passes `generation`, at most `timeout`.
    ///
    /// Returns at once when the generation already passed it. Cancelling the calling task ends
    /// the wait, and so does a graceful shutdown of the `ServiceGroup` the task runs in (a
    /// server answers its waiting pulls before it stops).
    ///
    /// A wait holds no task of its own: a server keeps thousands of pulls waiting, and each
    /// child task would cost each of them another kilobyte or more.
    ///
    /// - Parameters:
    ///   - userID: The ``SyncUser/id`` of the user whose changes to wait for.
    ///   - generation: What ``generation(for:)`` returned before the caller looked for changes.
    ///   - timeout: The longest wait.
    /// - Returns: `true` when a notification came, `false` when the wait timed out, was
    ///   cancelled, or the service group shut down.
    public func wait(for userID: Int64, after generation: UInt64, timeout: Duration) async -> Bool {
        let waiterID = state.withLock { state in
            state.nextWaiterID += 1
            state.waiters[userID, default: [:]][state.nextWaiterID] = .registering
            return state.nextWaiterID
        }
        let timer = DispatchSource.makeTimerSource(queue: Self.timers)
        timer.schedule(deadline: .now() + Self.interval(timeout))
        timer.setEventHandler { [weak self] in self?.end(userID: userID, waiterID: waiterID) }
        timer.resume()
        defer { timer.cancel() }
        return await withTaskCancellationOrGracefulShutdownHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let immediate: Bool? = state.withLock { state in
                    if case .ended = state.waiters[userID]?[waiterID] {
                        state.removeWaiter(waiterID, of: userID)
                        return false
                    }
                    if state.generations[userID, default: 0] > generation {
                        state.removeWaiter(waiterID, of: userID)
                        return true
                    }
                    state.waiters[userID]?[waiterID] = .waiting(continuation)
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancelOrGracefulShutdown: {
            self.end(userID: userID, waiterID: waiterID)
        }
    }

    /// Ends one wait without a notification: its time ran out, its task was cancelled, or the
    /// service group shuts down.
    private func end(userID: Int64, waiterID: UInt64) {
        let continuation: CheckedContinuation<Bool, Never>? = state.withLock { state in
            switch state.waiters[userID]?[waiterID] {
            case .waiting(let continuation):
                state.removeWaiter(waiterID, of: userID)
                return continuation
            case .registering:
                // The continuation is not stored yet: it resumes itself when it sees this.
                state.waiters[userID]?[waiterID] = .ended
                return nil
            case .ended, nil:
                return nil
            }
        }
        continuation?.resume(returning: false)
    }

    /// `duration` for a dispatch timer, at most a day.
    private static func interval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        guard seconds < 86_400 else { return .seconds(86_400) }
        guard seconds >= 0, duration > .zero else { return .nanoseconds(0) }
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }

    /// The queue the timeouts of waits fire on; their work only takes the lock.
    private static let timers = DispatchQueue(label: "amber-sync.change-notifier.timeouts")

    private enum Waiter {
        case registering
        case waiting(CheckedContinuation<Bool, Never>)
        /// Ended (timed out, cancelled, shut down) before its continuation was stored.
        case ended
    }

    private struct State {
        var generations: [Int64: UInt64] = [:]
        var waiters: [Int64: [UInt64: Waiter]] = [:]
        var nextWaiterID: UInt64 = 0

        mutating func removeWaiter(_ waiterID: UInt64, of userID: Int64) {
            waiters[userID]?[waiterID] = nil
            if waiters[userID]?.isEmpty == true { waiters[userID] = nil }
        }
    }
}
