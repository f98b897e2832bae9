import Amber
import AmberLock
import Foundation

extension SyncClient {
    /// Keeps syncing in the background until ``stop()``.
    ///
    /// A local write (of this process or another one on the file) is pushed within a moment, and
    /// a change another client pushes arrives through a long-poll pull, without polling in a busy
    /// loop. When the server is unreachable it retries with growing delays (up to 30 s).
    /// Calling `start()` again while started does nothing.
    ///
    /// When the server refuses the token, and a fresh one from the token provider too, live sync
    /// reports it (``SyncEvent/failed(reason:)``) and stops: call `start()` again once the user
    /// signed in anew.
    public func start() {
        live.withLock { state in
            guard state.task == nil else { return }
            state.generation += 1
            let generation = state.generation
            let live = self.live
            let engine = self.engine
            let events = self.eventHub
            let collections = self.collections.withLock { Array($0.values) }
            state.task = Task.detached {
                await LiveSync(engine: engine, events: events, collections: collections).run()
                // Ended by itself (the token was refused): a later start() begins anew.
                live.withLock { state in
                    if state.generation == generation { state.task = nil }
                }
            }
        }
    }

    /// Ends the background work started by ``start()``, and waits for it to end.
    public func stop() async {
        let task = live.withLock { state in
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
        await task?.value
    }
}

/// The loop of live sync.
struct LiveSync: Sendable {
    let engine: SyncEngine
    let events: EventHub
    let collections: [any SyncedCollection]

    /// How long one long-poll pull waits on the server.
    static let longPoll = 25
    static let longestRetryDelay: Double = 30

    func run() async {
        let wakeUp = WakeUp()
        let listeners = collections.map { collection in
            Task {
                for await _ in collection.localWrites() { wakeUp.signal() }
            }
        }
        defer { for listener in listeners { listener.cancel() } }
        var delay = 0.5
        while !Task.isCancelled {
            events.emit(.syncing)
            do {
                let report = try await engine.sync()
                events.emit(.synced(report))
                delay = 0.5
            } catch {
                if Task.isCancelled { return }
                events.emit(
                    error.kind == .offline ? .offline(reason: error.message) : .failed(reason: error.description))
                // Refused even with a fresh token: the app must act (sign in again, then start()).
                if error.kind == .unauthorized { return }
                try? await Task.sleep(nanoseconds: UInt64(delay * 1e9))
                delay = min(delay * 2, Self.longestRetryDelay)
                continue
            }
            // Until a local write or a change on the server.
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await wakeUp.wait() }
                group.addTask {
                    do {
                        _ = try await engine.waitForServer(seconds: Self.longPoll)
                    } catch {
                        // Unreachable: the next sync reports it and backs off; no busy loop.
                        try? await Task.sleep(nanoseconds: 1_000_000_000)
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }
    }
}

/// A signal that a waiter takes once: signals while nobody waits are kept as one.
final class WakeUp: Sendable {
    private struct State {
        var signalled = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = LockedValue(State())

    func signal() {
        let waiter = state.withLock { state in
            let waiter = state.waiter
            state.waiter = nil
            if waiter == nil { state.signalled = true }
            return waiter
        }
        waiter?.resume()
    }

    /// Returns at the next signal (at once if one came since the last wait), or when cancelled.
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.signalled || Task.isCancelled {
                        state.signalled = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            signal()
        }
    }
}

/// Hands ``SyncEvent``s to every subscriber.
final class EventHub: Sendable {
    private let subscribers = LockedValue<(next: Int, continuations: [Int: AsyncStream<SyncEvent>.Continuation])>(
        (0, [:]))

    func subscribe() -> AsyncStream<SyncEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SyncEvent.self)
        let id = subscribers.withLock { state in
            state.next += 1
            state.continuations[state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    func emit(_ event: SyncEvent) {
        let continuations = subscribers.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.yield(event) }
    }
}
