import AmberLock

/// The requests of one process waiting for a connection of the pool, and the one task that fails
/// them when the pool gives none.
///
/// A request fails once it has waited ``wait`` and no request got a connection in the last
/// ``wait``: while other requests get connections the pool is busy, not cut off, and it waits on.
/// One task checks every waiting request a few times a second, and runs only while some wait.
///
/// A check that comes late, more than four times ``interval`` after the one before, fails no one: the
/// process was starved of CPU, and the requests whose connections came meanwhile may not have run
/// yet to say so. They get the next check's interval to run.
package final class LeaseWatch: Sendable {
    /// How long a request waits while no request gets a connection.
    package let wait: Duration
    /// How often the waiting requests are checked.
    let interval: Duration

    private struct Waiting {
        let since: ContinuousClock.Instant
        /// Fails the request unless it has its connection; whether it did.
        let fail: @Sendable () -> Bool
    }

    private struct State {
        var lastLease = ContinuousClock.now
        /// When the waiting requests were last checked, or the watch started.
        var lastCheck = ContinuousClock.now
        var waiting: [Int: Waiting] = [:]
        var nextID = 0
        var watching = false
    }

    private let state = LockedValue(State())

    package init(wait: Duration) {
        self.wait = wait
        interval = wait / 20
    }

    /// Notes that a request got a connection.
    package func leased() {
        let now = ContinuousClock.now
        state.withLock { $0.lastLease = now }
    }

    /// Waits for `lease`'s outcome, or fails with `error` once the pool gave no connection in time.
    package func wait<Result: Sendable>(for lease: Lease<Result>, failing error: any Error) async throws -> Result {
        let now = ContinuousClock.now
        let (id, starts) = state.withLock { state -> (Int, Bool) in
            let id = state.nextID
            state.nextID += 1
            state.waiting[id] = Waiting(since: now, fail: { lease.fail(error) })
            if !state.watching { state.lastCheck = now }
            defer { state.watching = true }
            return (id, !state.watching)
        }
        defer { _ = state.withLock { $0.waiting.removeValue(forKey: id) } }
        if starts { Task { await self.watch() } }
        return try await lease.outcome()
    }

    /// Fails the requests that waited too long, until none waits.
    private func watch() async {
        while true {
            try? await Task.sleep(for: interval)
            guard check(at: .now) != nil else { return }
        }
    }

    /// Checks the waiting requests at `now`: fails those due, unless the check comes late.
    ///
    /// - Returns: How many requests it failed, or `nil` when none waits (the watch ends).
    @discardableResult
    package func check(at now: ContinuousClock.Instant) -> Int? {
        let due = state.withLock { state -> [Waiting]? in
            guard !state.waiting.isEmpty else {
                state.watching = false
                return nil
            }
            let late = state.lastCheck.duration(to: now) > interval * 4
            state.lastCheck = max(state.lastCheck, now)
            let quiet = state.lastLease + wait <= now
            return quiet && !late ? state.waiting.values.filter { $0.since + wait <= now } : []
        }
        guard let due else { return nil }
        return due.filter { $0.fail() }.count
    }

    /// One request's connection: asked for by one task, its outcome awaited by another.
    package final class Lease<Result: Sendable>: Sendable {
        private struct State {
            var outcome: Swift.Result<Result, any Error>?
            var continuation: CheckedContinuation<Result, any Error>?
            var begun = false
        }

        private let state = LockedValue(State())

        package init() {}

        /// Notes that the connection came, unless the request failed first; whether to go on.
        package func begin() -> Bool {
            state.withLock { state in
                guard state.outcome == nil else { return false }
                state.begun = true
                return true
            }
        }

        /// Ends the request with `outcome`, unless it failed first.
        package func finish(_ outcome: Swift.Result<Result, any Error>) {
            settle(outcome, unlessBegun: false)
        }

        /// Fails the request with `error` unless its connection came; whether it failed.
        package func fail(_ error: any Error) -> Bool {
            settle(.failure(error), unlessBegun: true)
        }

        @discardableResult
        private func settle(_ outcome: Swift.Result<Result, any Error>, unlessBegun: Bool) -> Bool {
            let waiting = state.withLock { state -> (CheckedContinuation<Result, any Error>?, Bool) in
                guard state.outcome == nil, !(unlessBegun && state.begun) else { return (nil, false) }
                state.outcome = outcome
                defer { state.continuation = nil }
                return (state.continuation, true)
            }
            waiting.0?.resume(with: outcome)
            return waiting.1
        }

        /// The request's outcome, once it has one.
        package func outcome() async throws -> Result {
            try await withCheckedThrowingContinuation { continuation in
                let known = state.withLock { state -> Swift.Result<Result, any Error>? in
                    if state.outcome == nil { state.continuation = continuation }
                    return state.outcome
                }
                if let known { continuation.resume(with: known) }
            }
        }
    }
}
