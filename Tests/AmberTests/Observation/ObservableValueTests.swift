import AmberLock
import AmberTestSupport
import Observation
import Testing

@testable import Amber

@MainActor
final class Owner {
    var seen: [Int] = []
}

@MainActor
@Suite(.boundedConcurrency) struct ObservableValueTests {
    @Test func observerIsCalledAtOnceThenOnEveryChange() {
        let counter = ObservableValue(1)
        let owner = Owner()
        counter.addObserver(owner) { owner, value in owner.seen.append(value) }
        counter.update(with: 2)
        counter.update { $0 * 10 }
        #expect(owner.seen == [1, 2, 20])
    }

    @Test func equalUpdateNotifiesNobody() {
        let counter = ObservableValue(1, historyLimit: 5)
        let owner = Owner()
        counter.addObserver(owner) { owner, value in owner.seen.append(value) }
        counter.update(with: 1)
        #expect(owner.seen == [1])
        #expect(!counter.canUndo, "an equal update records no history")
    }

    @Test func observerIsRemovedWhenItsOwnerGoes() {
        let counter = ObservableValue(0)
        var calls = 0
        var owner: Owner? = Owner()
        counter.addObserver(owner!) { _, _ in calls += 1 }
        owner = nil
        counter.update(with: 1)
        #expect(calls == 1, "only the call at registration")
        #expect(counter.observerCount == 0)
    }

    @Test func cancelStopsTheObserver() {
        let counter = ObservableValue(0)
        let owner = Owner()
        let token = counter.addObserver(owner) { owner, value in owner.seen.append(value) }
        token.cancel()
        counter.update(with: 1)
        #expect(owner.seen == [0])
    }

    @Test func undoAndRedoWithinTheHistoryLimit() {
        let counter = ObservableValue(0, historyLimit: 2)
        for value in 1...4 { counter.update(with: value) }
        counter.undo()
        counter.undo()
        #expect(counter.value == 2)
        #expect(!counter.canUndo, "only two earlier values are kept")
        counter.undo()
        #expect(counter.value == 2)
        counter.redo()
        #expect(counter.value == 3)
        counter.update(with: 10)
        #expect(!counter.canRedo, "a new value clears the redo history")
        counter.undo()
        #expect(counter.value == 3)
    }

    @Test func noHistoryByDefault() {
        let counter = ObservableValue(0)
        counter.update(with: 1)
        #expect(!counter.canUndo)
        counter.undo()
        #expect(counter.value == 1)
    }

    @Test func observationTrackingSeesValueChange() {
        let counter = ObservableValue(0)
        let changed = LockedValue(false)
        withObservationTracking {
            _ = counter.value
        } onChange: {
            changed.withLock { $0 = true }
        }
        counter.update(with: 1)
        #expect(changed.withLock { $0 })
    }

    @Test func valuesStartWithTheCurrentValue() async {
        let counter = ObservableValue(5)
        var iterator = counter.values.makeAsyncIterator()
        #expect(await iterator.next() == 5)
        counter.update(with: 6)
        #expect(await iterator.next() == 6)
    }

    @Test func valuesStreamEndsItsObservationWhenDropped() async {
        let counter = ObservableValue(5)
        do {
            var iterator = counter.values.makeAsyncIterator()
            _ = await iterator.next()
        }
        _ = await eventually {
            await MainActor.run {
                counter.update(with: Int.random(in: 0...1000)); return counter.observerCount == 0
            }
        }
        #expect(counter.observerCount == 0)
    }
}
