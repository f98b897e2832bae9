import Amber
import Foundation

/// What an app would write by hand instead of an in-memory store: a locked dictionary plus
/// the order identities were first added in.
final class LockedDictionary<Value: Identifiable>: @unchecked Sendable {
    // @unchecked: `values` and `order` are only touched while `lock` is held.
    private let lock = NSLock()
    private var values: [Value.ID: Value] = [:]
    private var order: [Value.ID] = []

    func add(_ value: Value) {
        lock.withLock {
            if values.updateValue(value, forKey: value.id) == nil { order.append(value.id) }
        }
    }

    var count: Int {
        lock.withLock { values.count }
    }
}

enum MemoryWorkloads {
    static let count = 100_000

    static var add: Comparison {
        let items = Item.samples(count)
        return Comparison(
            target: 1.5, rounds: 5,
            ours: {
                let store = IdentityStore<Item>()
                let elapsed = try await milliseconds { for item in items { try store.add(item) } }
                // Released after the clock stops: freeing is not part of the work.
                withExtendedLifetime(store) {}
                return elapsed
            },
            baseline: {
                let dictionary = LockedDictionary<Item>()
                let elapsed = await milliseconds { for item in items { dictionary.add(item) } }
                withExtendedLifetime(dictionary) {}
                return elapsed
            }
        )
    }

    /// Updates with one `changes()` subscriber; the round ends when it has received every change.
    static var updateObserved: Comparison {
        let items = Item.samples(count)
        let changed = items.map { $0.with(count: $0.count + 1) }
        return Comparison(
            target: nil, rounds: 5,
            ours: {
                let store = IdentityStore<Item>()
                try store.add(contentsOf: items)
                let changes = store.changes()
                // Counts the updates received, so the round ends when the subscriber has them all.
                let drain = Task.detached {
                    var received = 0
                    for await change in changes {
                        received += change.updated.count
                        if received == count { break }
                    }
                    return received
                }
                let elapsed = try await milliseconds {
                    for item in changed { try store.add(item) }
                    _ = await drain.value
                }
                withExtendedLifetime(store) {}
                return elapsed
            },
            baseline: {
                let dictionary = LockedDictionary<Item>()
                for item in items { dictionary.add(item) }
                let elapsed = await milliseconds { for item in changed { dictionary.add(item) } }
                withExtendedLifetime(dictionary) {}
                return elapsed
            }
        )
    }
}
