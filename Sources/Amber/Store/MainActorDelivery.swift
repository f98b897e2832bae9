import AmberLock
import DequeModule

/// Hands a store's committed changes to its main-actor observers, in commit order.
///
/// It owns the queue of changes waiting for the main actor, the one drain scheduled to deliver
/// them, and the observers. A write made on the main actor delivers at once, before it returns;
/// writes made elsewhere schedule a drain unless one is already scheduled, so an import of many
/// single writes costs one main-actor task, not one per write.
@usableFromInline
final class MainActorDelivery<Value: Identifiable & Sendable>: Sendable where Value.ID: Sendable {
    private let queue = LockedValue(Queue())
    /// Main-actor isolated, so only touched there.
    let observers = MainActorObservers<Value>()

    private struct Queue {
        var pending: Deque<(stamp: UInt64, change: StoreChange<Value>)> = []
        var isDrainScheduled = false
        var drainsScheduled = 0
    }

    @usableFromInline init() {}

    /// Queues a committed change; called in commit order, under the store's write lock.
    @usableFromInline
    func enqueue(_ change: StoreChange<Value>, stamp: UInt64) {
        queue.withLock { $0.pending.append((stamp, change)) }
    }

    /// Delivers the queued changes: at once on the main actor, otherwise in one drain soon after.
    ///
    /// - Parameter dropped: Told how many observers were dropped because their owner is gone.
    func deliver(dropped: @escaping @Sendable (Int) -> Void) {
        if MainQueue.isCurrent {
            MainActor.assumeIsolated { drain(dropped: dropped) }
            return
        }
        let schedule = queue.withLock { queue in
            guard !queue.isDrainScheduled else { return false }
            queue.isDrainScheduled = true
            queue.drainsScheduled += 1
            return true
        }
        guard schedule else { return }
        Task { @MainActor in self.drain(dropped: dropped) }
    }

    @MainActor
    private func drain(dropped: (Int) -> Void) {
        // A write made by an observer queues its change; the drain already running delivers it
        // once every observer has seen the changes before it, so nobody sees them out of order.
        guard !observers.isDelivering else { return }
        observers.isDelivering = true
        defer { observers.isDelivering = false }
        queue.withLock { $0.isDrainScheduled = false }
        let gone = observers.dropGone()
        if gone > 0 { dropped(gone) }
        while let next = queue.withLock({ $0.pending.popFirst() }) {
            let count = observers.deliver(next.change, stamp: next.stamp)
            if count > 0 { dropped(count) }
        }
    }

    /// How many drains were scheduled so far.
    var drainsScheduled: Int {
        queue.withLock { $0.drainsScheduled }
    }

    /// The number of changes waiting for the main actor.
    var pendingCount: Int {
        queue.withLock { $0.pending.count }
    }
}
