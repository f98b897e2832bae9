import AmberSQLite
import AmberTestSupport
import Foundation
import Testing

@testable import Amber

/// Live queries of a store that another writer changes: what arrives from it may also reorder the
/// store, and ties must follow.
@MainActor
@Suite(.boundedConcurrency) struct LiveQuerySharingTests {
    private let people = (0..<5).map { Person(id: "\($0)", name: "P\($0)", age: $0 % 2) }

    /// Another writer removes two identities and adds them again, one with an equal value: both
    /// move last in the store, and the queries whose ties follow the store's order follow.
    @Test(arguments: StoreFixture.persistent)
    func anIdentityTheOtherWriterAddedAgainMovesLastInTheQueries(_ fixture: StoreFixture) async throws {
        let (mine, reopen) = try fixture.make()
        try mine.add(contentsOf: people)
        let open = try #require(reopen)
        let theirs = try open()
        let inStoreOrder = mine.query()
        let byAge = mine.query(sort: \.age)
        let changes = Collected(mine.changes())
        try theirs.remove(id: "1")
        try theirs.add(people[1])
        try theirs.remove(id: "2")
        try theirs.add(people[2].update(name: "again"))

        #expect(await eventually { mine.ids == ["0", "3", "4", "1", "2"] })
        #expect(await eventually { await inStoreOrder.values == mine.all })
        #expect(byAge.values.map(\.id) == ["0", "4", "2", "3", "1"])
        #expect(
            byAge.values
                == mine.all.enumerated().sorted { ($0.element.age, $0.offset) < ($1.element.age, $1.offset) }.map(
                    \.element))
        #expect(changes.values.allSatisfy { !$0.isEmpty }, "a change that only moved an identity reaches no stream")
        changes.cancel()
    }

    /// A store behind the other writer's horizon reloads the whole key, in the other writer's order.
    @Test func aStoreThatReloadsInAnotherOrderReplacesTheQueryValues() async throws {
        let path = temporaryDirectory().appendingPathComponent("store.sqlite").path
        let mine = try IdentityStore<Person>(key: "people", storage: SQLiteStorage(path: path))
        try mine.add(contentsOf: people)
        // Stops polling, so the other writer's changes pile up past the deletions it remembers.
        mine.persistence?.storage.stopWatching()
        let theirs = try IdentityStore<Person>(key: "people", storage: SQLiteStorage(path: path))
        let inStoreOrder = mine.query()
        let byAge = mine.query(filter: { $0.id != "4" }, sort: [KeyPathComparator(\.age, order: .reverse)])
        let before = byAge.values
        let (removedAndAdded, changed) = (people[1], people[3].update(age: 0))
        // Off the main actor: 2,200 writes would hold it for seconds, which other tests would count.
        try await Task.detached {
            try theirs.remove(id: "1")
            try theirs.add(removedAndAdded)
            for index in 0..<1_100 {
                try theirs.add(Person(id: "temp", name: "", age: index))
                try theirs.remove(id: "temp")
            }
            try theirs.add(changed)
        }.value

        mine.applyExternalChanges()
        #expect(mine.ids == ["0", "2", "3", "4", "1"])
        #expect(inStoreOrder.values == mine.all)
        #expect(byAge.values.map(\.id) == ["1", "0", "2", "3"])
        #expect(byAge.diff.applied(to: before, new: byAge.values) == byAge.values)
        #expect(byAge.diff.updated == [3], "the value that changed")
    }
}
