import DequeModule
import OrderedCollections

/// Changes committed while main-actor observers were registered, waiting for delivery.
struct MainActorQueue<Value: Identifiable & Sendable>: Sendable where Value.ID: Sendable {
    var pending: Deque<StoreChange<Value>> = []
}

/// The main-actor observers of one store, all observers or those of one identity.
@MainActor
final class MainActorObservers<Value: Identifiable & Sendable> where Value.ID: Sendable {
    struct Entry {
        let token: ObservationToken
        /// Calls the observer; `false` when its owner is gone.
        let notify: @MainActor (StoreChange<Value>) -> Bool
    }

    /// Whether changes are being delivered; a nested delivery waits for the one in progress.
    var isDelivering = false
    // In registration order, which is the order observers are notified in.
    private var all: OrderedDictionary<Int, Entry> = [:]
    private var byID: [Value.ID: OrderedDictionary<Int, Entry>] = [:]
    private var nextID = 0

    nonisolated init() {}

    var count: Int {
        all.count + byID.values.reduce(0) { $0 + $1.count }
    }

    func insert(_ entry: Entry, id: Value.ID?) -> Int {
        nextID += 1
        if let id {
            byID[id, default: [:]][nextID] = entry
        } else {
            all[nextID] = entry
        }
        return nextID
    }

    /// Removes an observer; returns whether it was still registered.
    func remove(_ key: Int, id: Value.ID?) -> Bool {
        guard let id else { return all.removeValue(forKey: key) != nil }
        let removed = byID[id]?.removeValue(forKey: key) != nil
        if byID[id]?.isEmpty == true { byID[id] = nil }
        return removed
    }

    /// Calls the observers of a change; per-identity observers get their identity's part only.
    ///
    /// - Returns: How many observers were dropped because their owner is gone.
    /// - Complexity: O(*a* + *c*) for *a* observers of all identities and *c* values in the change,
    ///   whatever the number of observers of other identities.
    func deliver(_ change: StoreChange<Value>) -> Int {
        var dropped = 0
        for (key, entry) in all where !entry.token.isCancelled {
            if !entry.notify(change), all.removeValue(forKey: key) != nil { dropped += 1 }
        }
        guard !byID.isEmpty else { return dropped }
        func notify(_ id: Value.ID, _ part: @autoclosure () -> StoreChange<Value>) {
            guard let entries = byID[id] else { return }
            let part = part()
            for (key, entry) in entries where !entry.token.isCancelled {
                if !entry.notify(part), remove(key, id: id) { dropped += 1 }
            }
        }
        for value in change.inserted { notify(value.id, StoreChange(inserted: [value], origin: change.origin)) }
        for update in change.updated { notify(update.new.id, StoreChange(updated: [update], origin: change.origin)) }
        for value in change.removed { notify(value.id, StoreChange(removed: [value], origin: change.origin)) }
        return dropped
    }
}
