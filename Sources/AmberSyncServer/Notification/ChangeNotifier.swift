import AmberLock

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
                    state.waiters[userID]?[waiterID] = nil
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
    /// Returns at once when the generation already passed it. Cancelling the calling task ends the wait.
    ///
    /// - Parameters:
    ///   - userID: The ``SyncUser/id`` of the user whose changes to wait for.
    ///   - generation: What ``generation(for:)`` returned before the caller looked for changes.
    ///   - timeout: The longest wait.
    /// - Returns: `true` when a notification came, `false` when the wait timed out or was cancelled.
    public func wait(for userID: Int64, after generation: UInt64, timeout: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.waitForNotification(userID: userID, after: generation) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Waits for a notification of `userID` after `generation`; `false` when cancelled first.
    private func waitForNotification(userID: Int64, after generation: UInt64) async -> Bool {
        let waiterID = state.withLock { state in
            state.nextWaiterID += 1
            state.waiters[userID, default: [:]][state.nextWaiterID] = .registering
            return state.nextWaiterID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let immediate: Bool? = state.withLock { state in
                    if case .cancelled = state.waiters[userID]?[waiterID] {
                        state.waiters[userID]?[waiterID] = nil
                        return false
                    }
                    if state.generations[userID, default: 0] > generation {
                        state.waiters[userID]?[waiterID] = nil
                        return true
                    }
                    state.waiters[userID]?[waiterID] = .waiting(continuation)
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let continuation: CheckedContinuation<Bool, Never>? = state.withLock { state in
                switch state.waiters[userID]?[waiterID] {
                case .waiting(let continuation):
                    state.waiters[userID]?[waiterID] = nil
                    return continuation
                case .registering:
                    // The continuation is not stored yet: it resumes itself when it sees this.
                    state.waiters[userID]?[waiterID] = .cancelled
                    return nil
                case .cancelled, nil:
                    return nil
                }
            }
            continuation?.resume(returning: false)
        }
    }

    private enum Waiter {
        case registering
        case waiting(CheckedContinuation<Bool, Never>)
        case cancelled
    }

    private struct State {
        var generations: [Int64: UInt64] = [:]
        var waiters: [Int64: [UInt64: Waiter]] = [:]
        var nextWaiterID: UInt64 = 0
    }
}
