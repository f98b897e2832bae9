import AmberLock
import AmberTestSupport
import Foundation
import Observation
import Testing

@testable import Amber

private let ann = Person(id: "1", name: "Ann", age: 40)
private let bob = Person(id: "2", name: "Bob", age: 17)
private let cy = Person(id: "3", name: "Cy", age: 25)
private let dee = Person(id: "4", name: "Dee", age: 12)

@MainActor
@Suite(.boundedConcurrency) struct LiveQueryTests {
    @Test func startsWithTheFilteredSortedValues() throws {
        let store = IdentityStore<Person>()
        try store.add(contentsOf: [ann, bob, cy, dee])
        let adults = store.query(filter: { $0.isAdult }, sort: [KeyPathComparator(\.age)])
        #expect(adults.values == [cy, ann])
        #expect(adults.diff.isEmpty, "no update yet")
        #expect(store.query().values == [ann, bob, cy, dee], "no filter and no sort: the store's order")
        #expect(store.query(sort: \.name, order: .reverse).values == [dee, cy, bob, ann])
        #expect(store.query(sort: KeyPathComparator(\.age, order: .reverse)).values == [ann, cy, bob, dee])
    }

    @Test func aMainActorWriteHasUpdatedTheQueryBeforeItReturns() throws {
        let store = IdentityStore<Person>()
        try store.add(contentsOf: [ann, bob, cy])
        let adults = store.query(filter: { $0.isAdult }, sort: [KeyPathComparator(\.age)])

        try store.add(bob.update(age: 30))  // comes of age: inserted between Cy and Ann
        #expect(adults.values == [cy, bob.update(age: 30), ann])
        #expect(adults.diff == IdentityDiff(from: [cy, ann], to: adults.values))
        #expect(adults.diff.inserted == [1])

        try store.add(cy.update(age: 50))  // older than Ann now: one move, and an update
        #expect(adults.values == [bob.update(age: 30), ann, cy.update(age: 50)])
        #expect(adults.diff.moved == [IdentityDiff.Move(from: 0, to: 2)])
        #expect(adults.diff.updated == [2])

        try store.add(ann.update(name: "Annie"))  // same age: updated in place, nothing moves
        #expect(adults.values[1].name == "Annie")
        #expect(adults.diff.moved.isEmpty && adults.diff.updated == [1])

        try store.remove(id: bob.id)
        #expect(adults.values.map(\.id) == [ann.id, cy.id])
        #expect(adults.diff.removed == [0])
    }

    @Test func tiesKeepTheStoreOrderAndAnUpdateKeepsItsPlaceAmongThem() throws {
        let store = IdentityStore<Person>()
        let people = (0..<6).map { Person(id: "\($0)", name: "P\($0)", age: $0 % 2) }
        try store.add(contentsOf: people)
        let query = store.query(sort: \.age)
        #expect(query.values.map(\.id) == ["0", "2", "4", "1", "3", "5"])
        try store.add(people[2].update(name: "renamed"))
        #expect(
            query.values.map(\.id) == ["0", "2", "4", "1", "3", "5"],
            "an update keeps the identity's place in the store")
        try store.add(people[0].update(age: 1))
        #expect(query.values.map(\.id) == ["2", "4", "0", "1", "3", "5"], "first in store order among its new equals")
        try store.remove(id: "0")
        try store.add(people[0].update(age: 1))
        #expect(query.values.map(\.id) == ["2", "4", "1", "3", "5", "0"], "added again: last in store order")
    }

    @Test func aBackgroundWriteArrivesSoonAfterInCommitOrder() async throws {
        let store = IdentityStore<Person>()
        let query = store.query(sort: \.age)
        try writeInTheBackground {
            for age in 0..<200 { try store.add(Person(id: "\(age % 50)", name: "", age: age)) }
        }
        #expect(query.values.isEmpty, "delivered on the main actor, after this code suspends")
        #expect(await eventually { await query.values.count == 50 })
        #expect(query.values == store.all.sorted { $0.age < $1.age })
    }

    @Test func aQuerySeesOnlyWhatCommittedAfterItWasMade() async throws {
        let store = IdentityStore<Person>()
        let early = store.query()
        // Queued for the main actor (the early query observes) but not delivered yet.
        try writeInTheBackground { try store.add(ann) }
        let late = store.query()
        #expect(late.values == [ann], "the store's values when it was made")
        try writeInTheBackground { try store.add(bob) }
        #expect(await eventually { await early.values.count == 2 })
        #expect(late.values == [ann, bob], "the insertion of ann, committed before it was made, is not applied twice")
    }

    @Test func releasingTheQueryEndsItsObservation() async throws {
        let store = IdentityStore<Person>()
        try store.add(ann)
        var query: LiveQuery<Person>? = store.query(filter: { $0.isAdult })
        #expect(store.mainActorObserverCount == 1)
        #expect(query?.values == [ann])
        query = nil
        #expect(store.mainActorObserverCount == 0, "unregistered when released")
        for _ in 0..<1_000 { _ = store.query(sort: \.age) }
        #expect(store.mainActorObserverCount == 0, "each query unregistered as it went")
        try writeInTheBackground { try store.add(bob) }
        #expect(
            store.delivery.pendingCount == 0, "with no query left, a background write does not queue for the main actor"
        )
    }

    @Test func updatesStartWithTheValuesThenReplayEveryChange() async throws {
        let store = IdentityStore<Person>()
        try store.add(contentsOf: [ann, bob, cy])
        let query = store.query(filter: { $0.isAdult }, sort: [KeyPathComparator(\.age)])
        let updates = Collected(stream(query.updates))
        try store.add(dee.update(age: 30))
        try store.add(ann.update(age: 20))
        try store.add(bob.update(name: "Bobby"))  // filtered out: no update
        try store.remove(id: cy.id)
        let received = await updates.wait(for: 4)
        #expect(received.count == 4)
        #expect(received.first?.values == [cy, ann])
        #expect(received.first?.diff.inserted == [0, 1])
        var replayed: [Person] = []
        for update in received {
            replayed = update.diff.applied(to: replayed, new: update.values)
            #expect(replayed == update.values)
        }
        #expect(received.last?.values == query.values)
        updates.cancel()
    }

    @Test func updatesEndWhenTheQueryIsReleased() async throws {
        let store = IdentityStore<Person>()
        var query: LiveQuery<Person>? = store.query()
        let updates = try #require(query).updates
        let finished = LockedValue(false)
        let count = LockedValue(0)
        let task = Task.detached {
            for await _ in updates { count.withLock { $0 += 1 } }
            finished.withLock { $0 = true }
        }
        try store.add(ann)
        #expect(await eventually { count.withLock { $0 } == 2 })
        query = nil
        #expect(await eventually { finished.withLock { $0 } }, "the sequence ended with the query")
        task.cancel()
    }

    @Test func aCancelledConsumerStopsBeingFed() async throws {
        let store = IdentityStore<Person>()
        let query = store.query()
        let task = Task.detached { [updates = query.updates] in
            for await _ in updates {}
        }
        #expect(await eventually { await query.subscribers.count == 1 })
        task.cancel()
        #expect(await eventually { await query.subscribers.isEmpty }, "the query forgot the cancelled sequence")
    }

    @Test func aWriteThatTouchesNoShownValueIsNoUpdate() throws {
        let store = IdentityStore<Person>()
        try store.add(contentsOf: [ann, bob])
        let adults = store.query(filter: { $0.isAdult })
        try store.add(cy)
        let diff = adults.diff
        let notified = LockedValue(false)
        withObservationTracking {
            _ = adults.values
        } onChange: {
            notified.withLock { $0 = true }
        }
        try store.add(dee)
        try store.add(bob.update(name: "Bobby"))
        #expect(!notified.withLock { $0 }, "observers of the values are not told")
        #expect(adults.diff == diff)
        try store.add(dee.update(age: 18))
        #expect(notified.withLock { $0 })
        #expect(adults.values == [ann, cy, dee.update(age: 18)])
    }

    @Test func aLargeTransactionIsMergedInOnePass() throws {
        let store = IdentityStore<Person>()
        let people = (0..<200).map { Person(id: "\($0)", name: "", age: $0 % 40) }
        try store.add(contentsOf: people)
        let query = store.query(filter: { $0.age % 3 != 0 }, sort: [KeyPathComparator(\.age, order: .reverse)])
        let before = query.values
        try store.transaction { transaction in
            for person in people where person.id.hasSuffix("7") { transaction.remove(id: person.id) }
            for person in people.prefix(60) { transaction.add(person.update(age: (person.age * 7) % 40)) }
            for index in 200..<240 { transaction.add(Person(id: "\(index)", name: "", age: index % 40)) }
        }
        let expected = store.all.enumerated().filter { $0.element.age % 3 != 0 }
            .sorted { ($0.element.age, -$0.offset) > ($1.element.age, -$1.offset) }.map(\.element)
        #expect(query.values == expected)
        #expect(query.diff.applied(to: before, new: query.values) == query.values)
    }
}

/// The updates of a query as an `AsyncStream`, for ``Collected``.
private func stream<Value>(_ updates: LiveQuery<Value>.Updates) -> AsyncStream<LiveQuery<Value>.Update> {
    AsyncStream { continuation in
        let task = Task {
            for await update in updates { continuation.yield(update) }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
    }
}
