import Amber
import AmberTestSupport
import Foundation
import Testing

@Suite(.boundedConcurrency) struct StorageFaultTests {
    private func expectUnreadableFile(_ contents: Data, mentioning cause: String) throws {
        let directory = temporaryDirectory()
        let file = directory.appendingPathComponent("people.json")
        try contents.write(to: file)
        let error = #expect(throws: StoreError.self) {
            try IdentityStore<Person>(key: "people", storage: FileStorage(directory: directory))
        }
        #expect(error?.description.contains(file.path) == true, "\(String(describing: error))")
        #expect(error?.description.contains(cause) == true, "\(String(describing: error))")
        #expect(try Data(contentsOf: file) == contents, "the file is unchanged")
    }

    @Test func garbageFile() throws {
        try expectUnreadableFile(
            Data((0..<512).map { UInt8(truncatingIfNeeded: $0 &* 37) }), mentioning: "not a JSON document")
    }

    @Test func truncatedFile() throws {
        let directory = temporaryDirectory()
        let store = try IdentityStore<Person>(key: "people", storage: FileStorage(directory: directory))
        try store.add(contentsOf: [jack, jill])
        let whole = try Data(contentsOf: directory.appendingPathComponent("people.json"))
        try expectUnreadableFile(whole.prefix(whole.count / 2), mentioning: "not a JSON document")
    }

    @Test func foreignFile() throws {
        try expectUnreadableFile(Data(#"{"people": []}"#.utf8), mentioning: "not an Amber record file")
    }

    @Test func newerFormat() throws {
        try expectUnreadableFile(
            Data(#"{"format":"amber.records","version":9,"records":[]}"#.utf8), mentioning: "newer")
    }

    @Test func undecodableRecordStaysInTheFile() throws {
        let directory = temporaryDirectory()
        let file = directory.appendingPathComponent("people.json")
        try Data(
            #"{"format":"amber.records","version":1,"records":[{"id":"old","value":{"id":"old","fullName":"X"}}]}"#.utf8
        )
        .write(to: file)
        let store = try IdentityStore<Person>(key: "people", storage: FileStorage(directory: directory))
        #expect(store.undecodable.map(\.id) == ["old"])
        try store.add(jack)
        let reopened = try IdentityStore<Person>(key: "people", storage: FileStorage(directory: directory))
        #expect(reopened.undecodable.map(\.id) == ["old"], "the record survived a rewrite of the file")
        try reopened.recover { record in Person(id: record.id, name: "X", age: 0) }
        #expect(reopened.undecodable.isEmpty)
        #expect(reopened.ids == [jack.id, "old"], "a recovered value is new to the store: it goes last")
        let again = try IdentityStore<Person>(key: "people", storage: FileStorage(directory: directory))
        #expect(again.all == reopened.all, "and stays there on disk")
    }

    @Test func unwritableLocationThrowsAndChangesNothing() async throws {
        let parent = temporaryDirectory()
        // A file where the store's directory should be: no process, root included, can create it.
        let blocked = parent.appendingPathComponent("stores")
        try Data("not a directory".utf8).write(to: blocked)
        let store = try IdentityStore<Person>(key: "people", storage: FileStorage(directory: blocked))
        let events = Collected(store.changes())
        let error = #expect(throws: StoreError.self) { try store.add(jack) }
        #expect(error?.description.contains("people") == true)
        #expect(error?.underlyingError != nil, "the file system's error is kept")
        #expect(store.count == 0)
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(events.values.isEmpty)
        #expect(try Data(contentsOf: blocked) == Data("not a directory".utf8))
    }

    @Test func userDefaultsGarbageValue() throws {
        let suite = "amber-fault-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defaults.set(Data("garbage".utf8), forKey: "amber.people")
        let error = #expect(throws: StoreError.self) {
            try IdentityStore<Person>(key: "people", storage: UserDefaultsStorage(suiteName: suite))
        }
        #expect(error?.description.contains("amber.people") == true)
        #expect(defaults.data(forKey: "amber.people") == Data("garbage".utf8))
    }
}

@Suite(.boundedConcurrency) struct FileSharingTests {
    @Test func twoWritersOnOneFileLoseNothing() async throws {
        let directory = temporaryDirectory()
        let first = try IdentityStore<Person>(key: "people", storage: FileStorage(directory: directory))
        let second = try IdentityStore<Person>(key: "people", storage: FileStorage(directory: directory))
        // The second writes before it could have noticed the first's write.
        try first.add(jack)
        try second.add(jill)
        let reopened = try IdentityStore<Person>(key: "people", storage: FileStorage(directory: directory))
        #expect(Set(reopened.ids) == [jack.id, jill.id], "both writes are on disk")
        #expect(await eventually(within: 3) { first.count == 2 && second.count == 2 }, "each sees the other's write")
        #expect(first[id: jill.id] == jill)
        #expect(second[id: jack.id] == jack)
    }
}
