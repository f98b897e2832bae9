import AmberLock
import AmberTestSupport
import Dispatch
import Testing

@testable import Amber

/// Runs `body` on another thread while the main actor waits: its writes are queued for the
/// main actor and delivered only once the caller next suspends.
@MainActor
func writeInTheBackground(_ body: @Sendable () throws -> Void) throws {
    try DispatchQueue.global().sync(execute: body)
}

@MainActor
@Suite(.boundedConcurrency) struct ObservationLifecycleTests {
    @Test func droppedObservablesLeaveTheStore() throws {
        let store = IdentityStore<Person>()
        try store.add(jack)
        for _ in 0..<1_000 { _ = store.observable(id: jack.id) }
        #expect(store.mainActorObserverCount == 0, "each registration ended with its observable value")
        try writeInTheBackground { try store.add(jack.update(age: 31)) }
        #expect(
            store.delivery.pendingCount == 0,
            "with nobody observing, a background write does not queue for the main actor")
    }

    @Test func observersOfGoneOwnersAreSweptWhenOthersRegister() throws {
        let store = IdentityStore<Person>()
        for index in 0..<1_000 {
            let owner = Screen()
            store.addObserver(owner, id: "\(index)") { _, _ in }
        }
        #expect(store.mainActorObserverCount < 200, "\(store.mainActorObserverCount) registrations of gone owners kept")
    }

    @Test func anIdentityObserverWhoseOwnerIsGoneIsDroppedByAWriteToAnotherIdentity() throws {
        let store = IdentityStore<Person>()
        try store.add(jack)
        weak var captured: Screen?
        do {
            let owner = Screen()
            let held = Screen()
            captured = held
            store.addObserver(owner, id: jack.id) { _, _ in _ = held }
        }
        #expect(captured != nil, "the registration holds its closure until a write")
        try store.add(Person(id: "other", name: "", age: 1))
        #expect(store.mainActorObserverCount == 0, "dropped by a write to another identity")
        #expect(captured == nil, "and its closure with it")
        try writeInTheBackground { try store.add(Person(id: "other", name: "", age: 2)) }
        #expect(store.delivery.pendingCount == 0, "background writes no longer queue for the main actor")
    }

    @Test func rowObserversOfAListDoNotOutliveTheirRows() throws {
        let store = IdentityStore<Person>()
        var shown: [Screen] = []
        for index in 0..<1_000 {
            let row = Screen()
            store.addObserver(row, id: "\(index)") { _, _ in }
            shown.append(row)
            if shown.count > 30 { shown.removeFirst() }
            try store.add(Person(id: "other", name: "", age: index))
        }
        #expect(store.mainActorObserverCount == 30, "the rows shown, and none of those scrolled away")
    }

    @Test func manyObserversOfGoneOwnersAreDroppedWithinAFewWrites() throws {
        let store = IdentityStore<Person>()
        var owners = (0..<1_000).map { _ in Screen() }
        for (index, owner) in owners.enumerated() { store.addObserver(owner, id: "\(index)") { _, _ in } }
        owners.removeAll()
        let writes = 1_000 / MainActorObservers<Person>.patrolStep + 1
        for index in 0..<writes { try store.add(Person(id: "other", name: "", age: index)) }
        #expect(store.mainActorObserverCount == 0, "each write checks \(MainActorObservers<Person>.patrolStep)")
        try writeInTheBackground { try store.add(Person(id: "other", name: "", age: -1)) }
        #expect(store.delivery.pendingCount == 0)
    }

    @Test func valuesEndWhenTheObservableValueIsReleased() async throws {
        var observable: ObservableValue<Int>? = ObservableValue(1)
        let values = try #require(observable).values
        let received = LockedValue<[Int]>([])
        let finished = LockedValue(false)
        let task = Task {
            for await value in values { received.withLock { $0.append(value) } }
            finished.withLock { $0 = true }
        }
        observable?.update(with: 2)
        #expect(await eventually { received.withLock { $0 } == [1, 2] })
        observable = nil
        #expect(await eventually(within: 2) { finished.withLock { $0 } }, "the stream ended")
        task.cancel()
    }

    @Test func anObserverSeesOnlyWhatCommittedAfterItRegistered() async throws {
        let store = IdentityStore<Person>()
        try store.add(jack)
        let early = Screen()
        store.addObserver(early) { screen, change in screen.changes.append(change) }
        try writeInTheBackground { try store.add(jack.update(age: 31)) }
        let late = Screen()
        store.addObserver(late) { screen, change in screen.changes.append(change) }
        try writeInTheBackground { try store.add(jack.update(age: 32)) }
        #expect(await eventually { await early.changes.count == 2 })
        #expect(
            late.changes.map { $0.updated.first?.new.age } == [32],
            "the change queued before it registered is not delivered")
    }

    @Test func manyBackgroundWritesScheduleOneDrain() async throws {
        let store = IdentityStore<Person>()
        let screen = Screen()
        store.addObserver(screen) { screen, change in screen.changes.append(change) }
        let scheduled = store.delivery.drainsScheduled
        try writeInTheBackground {
            for index in 0..<5_000 { try store.add(Person(id: "\(index)", name: "", age: index)) }
        }
        #expect(store.delivery.drainsScheduled - scheduled == 1, "one main-actor task for 5,000 writes")
        #expect(await eventually { await screen.changes.count == 5_000 })
        #expect(screen.changes.map { $0.inserted.first?.age } == (0..<5_000).map { $0 }, "in commit order")
    }
}
