import Amber
import AmberTestSupport
import IdentifiedCollections
import Testing

@Suite(.boundedConcurrency) struct IdentityStoreTests {
    @Test(arguments: StoreFixture.all)
    func jacksRaise(_ fixture: StoreFixture) throws {
        let store = try fixture.make().store
        try store.add(jack)
        try store.add(jack.update(age: 31).with(job: "Manager"))
        #expect(store.count == 1)
        #expect(store.latest(jack)?.job == "Manager")
        #expect(store.latest(jack)?.age == 31)
        #expect(store[id: jack.id] == store.latest(jack))
        #expect(store.latest(jill) == nil)
    }

    @Test(arguments: StoreFixture.all)
    func addReportsWhatChanged(_ fixture: StoreFixture) throws {
        let store = try fixture.make().store
        let inserted = try #require(try store.add(jack))
        #expect(inserted.inserted == [jack] && inserted.updated.isEmpty && inserted.removed.isEmpty)
        #expect(inserted.origin == .local)
        let raised = jack.update(age: 40)
        let updated = try #require(try store.add(raised))
        #expect(updated.updated == [.init(old: jack, new: raised)])
        #expect(try store.add(raised) == nil, "an equal value writes and reports nothing")
    }

    @Test(arguments: StoreFixture.all)
    func equalReAddEmitsNothing(_ fixture: StoreFixture) async throws {
        let store = try fixture.make().store
        try store.add(jack)
        let events = Collected(store.changes())
        try store.add(jack)
        try store.add(contentsOf: [jack])
        try store.add(jill)
        let received = await events.wait(for: 1)
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(events.values.count == 1)
        #expect(received.first?.inserted == [jill])
    }

    @Test(arguments: StoreFixture.all)
    func insertionOrderSurvivesUpdates(_ fixture: StoreFixture) throws {
        let store = try fixture.make().store
        let people = (0..<5).map { Person(id: "\($0)", name: "P\($0)", age: $0) }
        for person in people { try store.add(person) }
        try store.add(people[1].update(age: 99))
        #expect(store.ids == ["0", "1", "2", "3", "4"])
        #expect(store.all[1].age == 99)
        try store.remove(id: "1")
        try store.add(people[1])
        #expect(store.ids == ["0", "2", "3", "4", "1"], "a removed identity added again goes last")
    }

    @Test(arguments: StoreFixture.all)
    func removing(_ fixture: StoreFixture) throws {
        let store = try fixture.make().store
        try store.add(contentsOf: [jack, jill])
        #expect(try store.remove(jack.update(age: 1)) == jack, "removal is by identity")
        #expect(try store.remove(jack) == nil)
        #expect(try store.remove(id: jill.id) == jill)
        #expect(store.count == 0)
        try store.add(contentsOf: [jack, jill])
        try store.removeAll()
        #expect(store.all.isEmpty && store.ids.isEmpty)
    }

    @Test(arguments: StoreFixture.all)
    func updateIsReadModifyWrite(_ fixture: StoreFixture) throws {
        let store = try fixture.make().store
        try store.add(jack)
        let new = try store.update(id: jack.id) { $0.update(age: $0.age + 1) }
        #expect(new?.age == 31)
        #expect(store[id: jack.id]?.age == 31)
        var called = false
        #expect(
            try store.update(id: "nobody") {
                called = true; return $0
            } == nil)
        #expect(!called)
    }

    @Test(arguments: StoreFixture.all)
    func transactionIsOneChange(_ fixture: StoreFixture) async throws {
        let store = try fixture.make().store
        try store.add(jack)
        let events = Collected(store.changes())
        let result = try store.transaction { transaction in
            transaction.add(jill)
            #expect(transaction[id: jill.id] == jill, "reads see the transaction's own writes")
            transaction.add(jack.update(age: 50))
            #expect(transaction.remove(id: jack.id)?.age == 50)
            #expect(transaction[id: jack.id] == nil)
            return 42
        }
        #expect(result == 42)
        let change = try #require(await events.wait(for: 1).first)
        #expect(change.inserted == [jill])
        #expect(change.removed == [jack])
        #expect(change.updated.isEmpty)
        #expect(store.all == [jill])
    }

    @Test(arguments: StoreFixture.all)
    func throwingTransactionChangesNothing(_ fixture: StoreFixture) async throws {
        struct Refused: Error, Equatable {}
        let (store, reopen) = try fixture.make()
        try store.add(jack)
        let events = Collected(store.changes())
        let values = Collected(store.values(for: jill.id))
        #expect(throws: Refused()) {
            try store.transaction { transaction in
                transaction.add(jill)
                transaction.remove(id: jack.id)
                throw Refused()
            }
        }
        #expect(throws: Refused()) { try store.update(id: jack.id) { _ in throw Refused() } }
        #expect(store.all == [jack])
        try store.add(jack.update(age: 1))
        #expect(await events.wait(for: 1).count == 1)
        #expect(events.values.first?.updated.first?.new.age == 1, "the first event is the later write")
        #expect(await values.wait(for: 1) == [nil], "the value subscriber never saw jill")
        if let reopen { #expect(try reopen().all == [jack.update(age: 1)]) }
    }

    @Test(arguments: StoreFixture.all)
    func changesArriveInCommitOrder(_ fixture: StoreFixture) async throws {
        let store = try fixture.make().store
        let events = Collected(store.changes())
        for age in 0..<20 { try store.add(jack.update(age: age)) }
        let received = await events.wait(for: 20)
        #expect(received.count == 20)
        #expect(received.first?.inserted.first?.age == 0)
        #expect(received.dropFirst().map { $0.updated.first?.new.age } == Array(1..<20))
    }

    @Test(arguments: StoreFixture.all)
    func valuesStartWithTheCurrentValueAndEndWithNil(_ fixture: StoreFixture) async throws {
        let store = try fixture.make().store
        try store.add(jack)
        let values = Collected(store.values(for: jack.id))
        try store.add(jill)
        try store.add(jack.update(age: 31))
        try store.remove(jack)
        let received = await values.wait(for: 3)
        #expect(received == [jack, jack.update(age: 31), nil])
    }

    @Test func streamsLeakNothingWhenTheirConsumerStops() async throws {
        final class WeakBox: @unchecked Sendable {
            // @unchecked: written once before the checks read it.
            weak var store: IdentityStore<Person>?
        }
        let weakStore = WeakBox()
        do {
            let store = IdentityStore<Person>()
            weakStore.store = store
            let events = Collected(store.changes())
            let values = Collected(store.values(for: jack.id))
            try store.add(jack)
            _ = await events.wait(for: 1)
            events.cancel()
            values.cancel()
            _ = await eventually { events.values.count == 1 }
        }
        #expect(await eventually { weakStore.store == nil }, "cancelled streams keep nothing alive")
    }

    @Test(arguments: StoreFixture.all)
    func refreshedReplacesOutdatedValuesAndDropsRemovedOnes(_ fixture: StoreFixture) throws {
        let store = try fixture.make().store
        let bob = Person(id: "b", name: "Bob", age: 5)
        try store.add(contentsOf: [jack, jill, bob])
        let timeline = [bob, jack, jill]
        try store.add(jack.update(age: 60))
        try store.remove(jill)
        #expect(store.refreshed(timeline) == [bob, jack.update(age: 60)])
    }

    @Test func identifiedArrayInAndOut() throws {
        let store = IdentityStore<Person>()
        let people: IdentifiedArrayOf<Person> = [jack, jill]
        try store.add(contentsOf: people)
        #expect(store.identified == people)
        #expect(store.identified[id: jill.id] == jill)
    }

    @Test(arguments: StoreFixture.persistent)
    func reopenGivesTheSameValuesInTheSameOrder(_ fixture: StoreFixture) throws {
        let (store, reopen) = try fixture.make()
        let people = (0..<50).map { Person(id: "\($0)", name: "P\($0)", age: $0, job: $0 % 2 == 0 ? nil : "J") }
        try store.add(contentsOf: people.shuffled())
        try store.add(people[7].update(age: 700))
        try store.remove(id: "9")
        let expected = store.all
        let reopenStore = try #require(reopen)
        #expect(try reopenStore().all == expected)
    }
}
