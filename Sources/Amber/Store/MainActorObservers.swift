import DequeModule
import OrderedCollections

/// The main-actor observers of one store, all observers or those of one identity.
@MainActor
final class MainActorObservers<Value: Identifiable & Sendable> where Value.ID: Sendable {
    struct Entry {
        let token: ObservationToken
        /// The commit stamp at registration: older changes are not delivered.
        let since: UInt64
        /// Whether it is also handed changes that only move identities in the store's order (live
        /// queries); other observers never see an empty change.
        var followsOrder = false
        /// Whether the owner is still there.
        let isAlive: @MainActor () -> Bool
        /// Calls the observer; `false` when its owner is gone.
        let notify: @MainActor (StoreChange<Value>) -> Bool
    }

    /// Whether changes are being delivered; a nested delivery waits for the one in progress.
    var isDelivering = false
    // In registration order, which is the order observers are notified in.
    private var all: OrderedDictionary<Int, Entry> = [:]
    private var byID: [Value.ID: OrderedDictionary<Int, Entry>] = [:]
    private var nextID = 0
    /// Registrations after the last sweep for observers whose owner is gone.
    private var liveAtLastSweep = 0
    /// Every registration, in the order ``dropGone()`` checks them: it checks a few from the
    /// front at each delivery and puts those whose owner lives at the back. Registrations
    /// cancelled meanwhile stay until the next rebuild, holding only a weak reference.
    private var patrol: Deque<(key: Int, id: Value.ID?, isAlive: @MainActor () -> Bool)> = []

    /// How many registrations ``dropGone()`` checks at each delivery: all of them, up to this many.
    static var patrolStep: Int { 64 }

    nonisolated init() {}

    /// The number of observers registered, those whose owner is gone included until dropped.
    private(set) var count = 0

    /// Registers an observer.
    ///
    /// Observers whose owner went away are dropped by the next deliveries, whatever they change
    /// (``dropGone()``); so that they do not pile up while nothing is written, a registration
    /// that doubles the number of entries since the last sweep sweeps them all first.
    ///
    /// - Returns: The observer's key, and how many dropped observers the sweep removed.
    func insert(_ entry: Entry, id: Value.ID?) -> (key: Int, swept: Int) {
        var swept = 0
        if count >= max(64, 2 * liveAtLastSweep) {
            swept = sweep()
            liveAtLastSweep = count
        }
        nextID += 1
        count += 1
        if let id {
            byID[id, default: [:]][nextID] = entry
        } else {
            all[nextID] = entry
        }
        patrol.append((nextID, id, entry.isAlive))
        // Observations cancelled before any delivery leave their keys behind: start over.
        if patrol.count > 2 * count + 64 { rebuildPatrol() }
        return (nextID, swept)
    }

    /// Removes observers whose owner is gone, of any identity; returns how many.
    ///
    /// Called before each delivery: with up to ``patrolStep`` registrations, an observation whose
    /// owner is gone holds its closure, and keeps writes queuing for the main actor, only until
    /// the next change of any identity; with *n* more, for at most *n* / ``patrolStep`` deliveries.
    /// - Complexity: O(``patrolStep``): a weak reference check each.
    func dropGone() -> Int {
        var gone = 0
        for _ in 0..<min(patrol.count, Self.patrolStep) {
            let registration = patrol.removeFirst()
            if registration.isAlive() {
                patrol.append(registration)
            } else if remove(registration.key, id: registration.id) {
                gone += 1
            }
        }
        return gone
    }

    private func rebuildPatrol() {
        patrol = Deque(all.map { (key: $0.key, id: Value.ID?.none, isAlive: $0.value.isAlive) })
        for (id, entries) in byID {
            patrol.append(contentsOf: entries.map { (key: $0.key, id: Value.ID?(id), isAlive: $0.value.isAlive) })
        }
    }

    /// Removes the observers whose owner is gone; returns how many.
    private func sweep() -> Int {
        let before = count
        all.removeAll { !$0.value.isAlive() }
        for id in Array(byID.keys) {
            byID[id]?.removeAll { !$0.value.isAlive() }
            if byID[id]?.isEmpty == true { byID[id] = nil }
        }
        count = all.count + byID.values.reduce(0) { $0 + $1.count }
        rebuildPatrol()
        return before - count
    }

    /// Removes an observer; returns whether it was still registered.
    func remove(_ key: Int, id: Value.ID?) -> Bool {
        let removed: Bool
        if let id {
            removed = byID[id]?.removeValue(forKey: key) != nil
            if byID[id]?.isEmpty == true { byID[id] = nil }
        } else {
            removed = all.removeValue(forKey: key) != nil
        }
        if removed { count -= 1 }
        return removed
    }

    /// Calls the observers of a change; per-identity observers get their identity's part only.
    ///
    /// - Returns: How many observers were dropped because their owner is gone.
    /// - Complexity: O(*a* + *c*) for *a* observers of all identities and *c* values in the change,
    ///   whatever the number of observers of other identities.
    func deliver(_ change: StoreChange<Value>, stamp: UInt64) -> Int {
        var dropped = 0
        let changesValues = !change.isEmpty
        for (key, entry) in all
        where entry.since < stamp && !entry.token.isCancelled && (changesValues || entry.followsOrder) {
            if !entry.notify(change), remove(key, id: nil) { dropped += 1 }
        }
        guard !byID.isEmpty else { return dropped }
        func notify(_ id: Value.ID, _ part: @autoclosure () -> StoreChange<Value>) {
            guard let entries = byID[id] else { return }
            let part = part()
            for (key, entry) in entries where entry.since < stamp && !entry.token.isCancelled {
                if !entry.notify(part), remove(key, id: id) { dropped += 1 }
            }
        }
        for value in change.inserted { notify(value.id, StoreChange(inserted: [value], origin: change.origin)) }
        for update in change.updated { notify(update.new.id, StoreChange(updated: [update], origin: change.origin)) }
        for value in change.removed { notify(value.id, StoreChange(removed: [value], origin: change.origin)) }
        return dropped
    }
}
