import Amber
import AmberTestSupport
import OrderedCollections
import Testing

@Suite(.boundedConcurrency) struct StoreConcurrencyTests {
    /// 8 tasks × 10,000 mixed writes; afterwards the store is consistent and its events replay to it.
    @Test func concurrentMixedWrites() async throws {
        let store = IdentityStore<Person>()
        let events = Collected(store.changes())
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var generator = SplitMix(seed: UInt64(task))
                    for step in 0..<10_000 {
                        let id = "\(generator.next() % 200)"
                        switch generator.next() % 10 {
                        case 0..<5:
                            _ = try? store.add(Person(id: id, name: "t\(task)", age: step))
                        case 5..<8:
                            _ = try? store.update(id: id) { $0.update(age: $0.age + 1) }
                        case 8:
                            _ = try? store.remove(id: id)
                        default:
                            _ = store.all
                            _ = store[id: id]
                        }
                    }
                }
            }
        }
        let sentinel = Person(id: "sentinel", name: "end", age: 0)
        try store.add(sentinel)
        _ = await eventually(within: 30) { events.values.last?.inserted.first == sentinel }

        let ids = store.ids
        #expect(store.count == ids.count)
        #expect(Set(ids).count == ids.count)
        #expect(store.all.map(\.id) == ids)

        var replayed: OrderedDictionary<String, Person> = [:]
        for change in events.values {
            for value in change.inserted {
                #expect(replayed[value.id] == nil, "inserted only when absent")
                replayed[value.id] = value
            }
            for update in change.updated {
                #expect(replayed[update.new.id] == update.old, "an update's old value is the previous state")
                replayed[update.new.id] = update.new
            }
            for value in change.removed {
                #expect(replayed.removeValue(forKey: value.id) == value)
            }
        }
        #expect(Array(replayed.values) == store.all)
    }
}

/// A small deterministic generator, so a failing run can be replayed.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
