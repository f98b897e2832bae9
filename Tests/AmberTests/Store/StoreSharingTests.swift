import AmberTestSupport
import Foundation
import Testing

@testable import Amber

/// Two writers on one place (two storage instances, as an app and its extension have): no
/// write is computed from a value the other has already replaced.
@Suite(.boundedConcurrency) struct StoreSharingTests {
    /// Two stores on one new place; `mine` writes right after `theirs`, before any poll.
    static func writers(_ fixture: StoreFixture) throws -> (
        mine: IdentityStore<Person>, theirs: IdentityStore<Person>, reopen: @Sendable () throws -> IdentityStore<Person>
    ) {
        let (mine, reopen) = try fixture.make()
        let open = try #require(reopen)
        return (mine, try open(), open)
    }

    @Test(arguments: StoreFixture.persistent)
    func updateStartsFromTheOtherWritersValue(_ fixture: StoreFixture) async throws {
        let (mine, theirs, _) = try Self.writers(fixture)
        try mine.add(jack)
        #expect(await eventually { theirs[id: jack.id] == jack })
        let events = Collected(mine.changes())
        try theirs.update(id: jack.id) { $0.update(age: 40) }
        let updated = try mine.update(id: jack.id) { $0.update(name: "Jack B") }
        #expect(updated?.age == 40, "the other writer's raise is kept")
        #expect(updated?.name == "Jack B")
        let received = await events.wait(for: 2)
        #expect(received.map(\.origin) == [.otherProcess, .local], "their change is published first, as its own")
        #expect(received.first?.updated.first?.new.age == 40)
        #expect(await eventually { theirs[id: jack.id] == updated })
    }

    @Test(arguments: StoreFixture.persistent)
    func aRecordTheOtherWriterDeletedIsNotBroughtBack(_ fixture: StoreFixture) async throws {
        let (mine, theirs, _) = try Self.writers(fixture)
        try mine.add(contentsOf: [jack, jill])
        #expect(await eventually { theirs.count == 2 })
        try theirs.remove(id: jack.id)
        #expect(try mine.update(id: jack.id) { $0.update(age: 99) } == nil, "the update sees the deletion")
        try mine.transaction { transaction in
            if let gone = transaction[id: jack.id] { transaction.add(gone.update(age: 98)) }
        }
        #expect(mine[id: jack.id] == nil)
        #expect(try mine.remove(id: jack.id) == nil)
        #expect(await eventually { theirs.count == 1 })
        #expect(theirs[id: jack.id] == nil)
    }

    @Test(arguments: StoreFixture.persistent)
    func concurrentIncrementsFromTwoWritersAllCount(_ fixture: StoreFixture) async throws {
        let (mine, theirs, reopen) = try Self.writers(fixture)
        try mine.add(Person(id: "counter", name: "c", age: 0))
        #expect(await eventually { theirs.count == 1 })
        let rounds = 50
        await withTaskGroup(of: Void.self) { group in
            for store in [mine, theirs] {
                group.addTask {
                    for _ in 0..<rounds { _ = try? store.update(id: "counter") { $0.update(age: $0.age + 1) } }
                }
            }
        }
        #expect(try reopen()[id: "counter"]?.age == 2 * rounds, "no increment is lost")
        #expect(await eventually { mine[id: "counter"]?.age == 2 * rounds && theirs[id: "counter"]?.age == 2 * rounds })
    }

    @Test(arguments: StoreFixture.persistent)
    func removeThenReAddByTheOtherWriterMovesLastEverywhere(_ fixture: StoreFixture) async throws {
        let (mine, theirs, reopen) = try Self.writers(fixture)
        let people = (0..<4).map { Person(id: "\($0)", name: "P\($0)", age: $0) }
        try mine.add(contentsOf: people)
        #expect(await eventually { theirs.count == 4 })
        try theirs.remove(id: "1")
        try theirs.add(people[1].update(age: 10))
        #expect(theirs.ids == ["0", "2", "3", "1"])
        #expect(await eventually { mine[id: "1"]?.age == 10 })
        #expect(mine.ids == ["0", "2", "3", "1"], "memory follows the storage's order")
        #expect(try reopen().ids == mine.ids, "as a reopened store shows it")
    }

    @Test(arguments: StoreFixture.persistent)
    func aWriteTakesInTheOtherWritersRemoveAndReAddInOrder(_ fixture: StoreFixture) throws {
        let (mine, theirs, reopen) = try Self.writers(fixture)
        try mine.add(contentsOf: (0..<3).map { Person(id: "\($0)", name: "P\($0)", age: $0) })
        try theirs.add(jill)  // takes in mine's three before writing
        try theirs.remove(id: "0")
        try theirs.add(Person(id: "0", name: "back", age: 0))
        try mine.add(jack)  // takes in all of theirs first
        #expect(mine.ids == ["1", "2", jill.id, "0", jack.id])
        #expect(try reopen().ids == mine.ids)
    }
}

/// The two-writer cases specific to one storage.
@Suite(.boundedConcurrency) struct StorageSharingDetailTests {
    @Test func userDefaultsKeepsEveryWriteOfTwoStoresOnOneKey() async throws {
        let suite = "amber-tests-\(UUID().uuidString)"
        let first = try IdentityStore<Person>(key: "people", storage: UserDefaultsStorage(suiteName: suite))
        let second = try IdentityStore<Person>(key: "people", storage: UserDefaultsStorage(suiteName: suite))
        let heard = Collected(second.changes())
        await withTaskGroup(of: Void.self) { group in
            for (prefix, store) in [("a", first), ("b", second)] {
                group.addTask {
                    for index in 0..<200 {
                        _ = try? store.add(Person(id: "\(prefix)\(index)", name: prefix, age: index))
                    }
                }
            }
        }
        let reopened = try IdentityStore<Person>(key: "people", storage: UserDefaultsStorage(suiteName: suite))
        #expect(reopened.count == 400, "every acknowledged write is kept")
        #expect(await eventually { first.count == 400 && second.count == 400 })
        #expect(heard.values.contains { $0.origin == .otherProcess }, "each hears the other")
        let defaults = try #require(UserDefaults(suiteName: suite))
        #expect(defaults.data(forKey: "amber.people") != nil)
    }

    @Test func fileStorageKeepsUntouchedRecordsByteForByte() throws {
        let directory = temporaryDirectory()
        let file = directory.appendingPathComponent("people.json")
        let odd = #"{ "id" : "old",   "fullName":"X", "score": 1.50 }"#
        try Data(#"{"format":"amber.records","version":1,"records":[{"id":"old","value":\#(odd)}]}"#.utf8).write(
            to: file)
        let store = try IdentityStore<Person>(key: "people", storage: FileStorage(directory: directory))
        #expect(store.undecodable.first?.data == Data(odd.utf8), "the record's data is the stored JSON")
        try store.add(jack)
        let written = try String(contentsOf: file, encoding: .utf8)
        #expect(written.contains(odd), "an untouched record is written back as it was")
    }

    @Test func addOverAnUndecodableRecordGoesLastOnDiskAsInMemory() throws {
        let directory = temporaryDirectory()
        let file = directory.appendingPathComponent("people.json")
        try Data(
            #"{"format":"amber.records","version":1,"records":[{"id":"old","value":{"id":"old","fullName":"X"}}]}"#.utf8
        )
        .write(to: file)
        let store = try IdentityStore<Person>(key: "people", storage: FileStorage(directory: directory))
        try store.add(jack)
        try store.add(Person(id: "old", name: "New", age: 1))
        #expect(store.ids == [jack.id, "old"])
        #expect(store.undecodable.isEmpty)
        let reopened = try IdentityStore<Person>(key: "people", storage: FileStorage(directory: directory))
        #expect(reopened.ids == store.ids)
    }
}

@Suite(.boundedConcurrency) struct NestedWriteTests {
    /// A transform writing to another store of the same storage, on the same thread.
    @Test(arguments: StoreFixture.persistent)
    func aWriteInsideAnotherStoresWriteToTheSameStorageThrows(_ fixture: StoreFixture) throws {
        let (first, second, _) = try StoreSharingTests.writers(fixture)
        try first.add(jack)
        let error = #expect(throws: StoreError.self) {
            try first.update(id: jack.id) { value in
                try second.add(jill)
                return value.update(age: 99)
            }
        }
        #expect(error?.description.contains("inside another store's write") == true, "\(String(describing: error))")
        #expect(first[id: jack.id] == jack, "the outer write did not happen either")
        try second.add(jill)
        #expect(second[id: jill.id] == jill, "after it returns, the other store writes")
    }
}

@MainActor
@Suite(.boundedConcurrency) struct SharingOnTheMainActorTests {
    @Test(arguments: StoreFixture.persistent)
    func aThrowingWriteStillDeliversTheChangesItTookIn(_ fixture: StoreFixture) async throws {
        struct Abort: Error {}
        let (mine, theirs, _) = try StoreSharingTests.writers(fixture)
        let screen = Screen()
        mine.addObserver(screen) { screen, change in screen.changes.append(change) }
        try theirs.add(jill)
        #expect(throws: Abort.self) {
            try mine.transaction { _ in throw Abort() }
        }
        #expect(screen.changes.map(\.origin) == [.otherProcess], "delivered before the write returned")
        #expect(mine[id: jill.id] == jill)
    }
}
