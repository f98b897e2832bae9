import AmberTestSupport
import Testing

@testable import Amber

/// An owner of observations whose lifetime the tests control.
@MainActor
final class Screen {
    var changes: [StoreChange<Person>] = []
}

@MainActor
@Suite(.boundedConcurrency) struct MainActorObserverTests {
    @Test func aMainActorWriteHasNotifiedObserversBeforeItReturns() throws {
        let store = IdentityStore<Person>()
        let screen = Screen()
        store.addObserver(screen) { screen, change in screen.changes.append(change) }
        try store.add(jack)
        #expect(screen.changes.count == 1)
        #expect(screen.changes.first?.inserted == [jack])
    }

    @Test func perIdentityObserverSeesOnlyItsIdentity() throws {
        let store = IdentityStore<Person>()
        let screen = Screen()
        store.addObserver(screen, id: jack.id) { screen, change in screen.changes.append(change) }
        try store.add(jill)
        try store.add(jill.update(age: 70))
        #expect(screen.changes.isEmpty, "changes of other identities are not delivered")
        try store.add(contentsOf: [jack, Person(id: "x", name: "X", age: 1)])
        #expect(screen.changes.count == 1)
        #expect(screen.changes.first?.inserted == [jack], "restricted to the observed identity")
        try store.remove(jack)
        #expect(screen.changes.last?.removed == [jack])
    }

    @Test func observerIsDroppedWhenItsOwnerIsReleased() throws {
        let store = IdentityStore<Person>()
        var calls = 0
        var screen: Screen? = Screen()
        store.addObserver(screen!) { _, _ in calls += 1 }
        store.addObserver(screen!, id: jack.id) { _, _ in calls += 1 }
        try store.add(jack)
        #expect(calls == 2)
        #expect(store.mainActorObserverCount == 2)
        screen = nil
        try store.add(jack.update(age: 1))
        #expect(calls == 2, "no call after the owner is gone")
        #expect(store.mainActorObserverCount == 0, "the observations ended by themselves")
    }

    @Test func cancelledTokenStopsTheObserver() throws {
        let store = IdentityStore<Person>()
        let screen = Screen()
        let token = store.addObserver(screen) { screen, change in screen.changes.append(change) }
        try store.add(jack)
        token.cancel()
        token.cancel()
        #expect(token.isCancelled)
        try store.add(jill)
        #expect(screen.changes.count == 1)
        #expect(store.mainActorObserverCount == 0)
    }

    @Test func backgroundWritesReachMainActorObserversInCommitOrder() async throws {
        let store = IdentityStore<Person>()
        let screen = Screen()
        store.addObserver(screen) { screen, change in screen.changes.append(change) }
        await Task.detached {
            for age in 0..<50 { _ = try? store.add(jack.update(age: age)) }
        }.value
        try store.add(jill)
        // The main-actor write delivered everything committed before it, in order, before returning.
        #expect(screen.changes.count == 51)
        #expect(screen.changes.dropFirst().prefix(49).map { $0.updated.first?.new.age } == Array(1..<50))
        #expect(screen.changes.last?.inserted == [jill])
    }

    @Test func observerWritingToTheStoreKeepsCommitOrder() throws {
        let store = IdentityStore<Person>()
        let screen = Screen()
        store.addObserver(screen) { screen, change in
            screen.changes.append(change)
            if change.inserted.first == jack { _ = try? store.add(jill) }
        }
        try store.add(jack)
        #expect(screen.changes.map { $0.inserted.first?.id } == [jack.id, jill.id])
    }

    @Test func observableFollowsTheStore() throws {
        let store = IdentityStore<Person>()
        let observable = store.observable(id: jack.id)
        #expect(observable.value == nil)
        try store.add(jack)
        #expect(observable.value == jack)
        try store.add(jill)
        try store.update(id: jack.id) { $0.update(age: 99) }
        #expect(observable.value?.age == 99)
        try store.remove(jack)
        #expect(observable.value == nil)
    }
}

@MainActor
@Suite(.boundedConcurrency) struct ReentrantDeliveryTests {
    @Test func aWriteFromAnObserverReachesEveryoneAfterTheChangeBeforeIt() throws {
        let store = IdentityStore<Person>()
        let observable = store.observable(id: jack.id)
        let screen = Screen()
        store.addObserver(screen) { screen, change in
            screen.changes.append(change)
            if change.inserted.first?.age == 1 { _ = try? store.add(jack.update(age: 2)) }
        }
        try store.add(jack.update(age: 1))
        #expect(observable.value?.age == 2, "the observable ends on the newest value")
        #expect(screen.changes.count == 2)
        #expect(screen.changes.last?.updated.first?.new.age == 2)
    }

    @Test func observableValueObserversNeverEndOnAnOlderValue() {
        let value = ObservableValue(0)
        let first = Owner()
        let second = Owner()
        value.addObserver(first) { owner, number in
            owner.seen.append(number)
            if number == 1 { value.update(with: 2) }
        }
        value.addObserver(second) { owner, number in owner.seen.append(number) }
        value.update(with: 1)
        #expect(value.value == 2)
        #expect(first.seen.last == 2)
        #expect(second.seen.last == 2)
    }
}
