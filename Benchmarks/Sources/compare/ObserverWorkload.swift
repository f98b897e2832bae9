import Amber

/// The owner of a main-actor observation, counting the calls it gets.
@MainActor
final class CountingObserver {
    var calls = 0
}

enum ObserverWorkload {
    static let updates = 1_000

    /// Ours has 10,000 observers of other identities, the baseline 10: a write should not pay for observers it does not concern.
    static var comparison: Comparison {
        Comparison(
            target: 1.5, rounds: 5,
            ours: { try await round(observers: 10_000) },
            baseline: { try await round(observers: 10) }
        )
    }

    /// Updates identity 0 `updates` times on the main actor, with `observers` observers on identities 1...observers
    /// and one on identity 0.
    @MainActor
    static func round(observers: Int) async throws -> Double {
        let store = IdentityStore<Item>()
        try store.add(contentsOf: Item.samples(10_001))
        let others = (0..<observers).map { _ in CountingObserver() }
        for (index, other) in others.enumerated() {
            store.addObserver(other, id: index + 1) { observer, _ in observer.calls += 1 }
        }
        let watcher = CountingObserver()
        store.addObserver(watcher, id: 0) { observer, _ in observer.calls += 1 }
        let item = Item.sample(0)
        let elapsed = try await milliseconds {
            for round in 1...updates { try store.add(item.with(count: item.count + round)) }
        }
        precondition(
            watcher.calls == updates, "observers-10k-vs-10: the observer of identity 0 got \(watcher.calls) calls")
        precondition(
            others.allSatisfy { $0.calls == 0 }, "observers-10k-vs-10: an observer of another identity was called")
        return elapsed
    }
}
