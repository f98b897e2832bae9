import Amber
import AmberTestSupport
import Foundation
import GRDB
import Testing

@testable import AmberSQLite

@Suite(.boundedConcurrency) struct SQLiteFaultTests {
    /// Opening a bad file throws a StoreError naming the file, and leaves its bytes as they were.
    private func expectUnreadable(_ path: String, mentioning cause: String) throws {
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let error = #expect(throws: StoreError.self) {
            try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        }
        #expect(error?.description.contains(path) == true, "\(String(describing: error))")
        #expect(error?.description.contains(cause) == true, "\(String(describing: error))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the file is unchanged")
    }

    @Test func garbageFile() throws {
        let path = temporaryDatabasePath()
        var generator = SystemRandomNumberGenerator()
        try Data((0..<8_192).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(
            to: URL(fileURLWithPath: path))
        try expectUnreadable(path, mentioning: "not a database")
    }

    @Test func truncatedFile() throws {
        let path = temporaryDatabasePath()
        do {
            let store = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
            try store.add(
                contentsOf: (0..<2_000).map {
                    Entry(id: "\($0)", index: $0, payload: String(repeating: "p", count: 100))
                })
        }
        // The store's connection may outlive it for a moment (its watcher thread lets go last): fold
        // the write-ahead log into the file and empty it, so the file alone holds the data, waiting
        // for that connection if need be (in a full run it held the file past an immediate try).
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        _ = try DatabaseQueue(path: path, configuration: configuration).writeWithoutTransaction {
            try $0.checkpoint(.truncate)
        }
        let url = URL(fileURLWithPath: path)
        let data = try Data(contentsOf: url)
        try data.prefix(data.count / 2).write(to: url)
        try expectUnreadable(path, mentioning: "truncated")
    }

    @Test func foreignDatabase() throws {
        let path = temporaryDatabasePath()
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('Ann')")
        }
        try expectUnreadable(path, mentioning: "another application")
    }

    @Test func newerSchema() throws {
        let path = temporaryDatabasePath()
        _ = try SQLiteStorage(path: path)
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE amber_meta SET value = 99 WHERE name = 'schema'")
        }
        try expectUnreadable(path, mentioning: "newer")
    }

    @Test func recordThatNoLongerDecodesStaysOnDiskAndCanBeRecovered() throws {
        let path = temporaryDatabasePath()
        do {
            let store = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
            try store.add(contentsOf: ["a", "b", "c"].map { Entry(id: $0, index: 1, payload: $0) })
        }
        let oldShape = #"{"id":"b","index":"one","payload":"b"}"#
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE amber_records SET value = ? WHERE id = 'b'", arguments: [oldShape])
        }
        let store = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        #expect(store.ids == ["a", "c"])
        let record = try #require(store.undecodable.first)
        #expect(store.undecodable.count == 1)
        #expect(record.id == "b")
        #expect(String(decoding: record.data, as: UTF8.self) == oldShape)
        #expect(record.reason.isEmpty == false)

        try store.add(Entry(id: "d", index: 1, payload: "d"))
        let stored = try DatabaseQueue(path: path).read { db in
            try String.fetchOne(db, sql: "SELECT value FROM amber_records WHERE id = 'b'")
        }
        #expect(stored == oldShape, "other writes leave the record untouched")

        try store.recover { record in
            struct OldEntry: Decodable { let id: String; let index: String; let payload: String }
            let old = try JSONDecoder().decode(OldEntry.self, from: record.data)
            return Entry(id: old.id, index: old.index == "one" ? 1 : 0, payload: old.payload)
        }
        #expect(store.undecodable.isEmpty)
        #expect(store[id: "b"] == Entry(id: "b", index: 1, payload: "b"))
        let reopened = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        #expect(reopened.undecodable.isEmpty)
        #expect(store.ids == ["a", "c", "d", "b"])
        #expect(reopened.ids == store.ids, "the recovered record went last on disk too")
    }

    /// A store whose record "a" was written in an older shape that no longer decodes.
    private func storeWithUndecodableRecord() throws -> IdentityStore<Entry> {
        let path = temporaryDatabasePath()
        do {
            let store = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
            try store.add(Entry(id: "a", index: 1, payload: ""))
        }
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: #"UPDATE amber_records SET value = '{"id":"a"}'"#)
        }
        return try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
    }

    @Test func recoverReturningNilLeavesTheRecord() throws {
        let store = try storeWithUndecodableRecord()
        try store.recover { _ in nil }
        #expect(store.undecodable.map(\.id) == ["a"])
        #expect(store.count == 0)
    }

    @Test func fullDatabaseWriteThrowsAndChangesNothing() async throws {
        let path = temporaryDatabasePath()
        let storage = try SQLiteStorage(path: path)
        let store = try IdentityStore<Entry>(key: "entries", storage: storage)
        try store.add(Entry(id: "kept", index: 0, payload: ""))
        let events = Collected(store.changes())
        // Cap the file at its current size: the next write that needs a page fails with SQLITE_FULL.
        try await storage.database.writeWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            _ = try Int.fetchOne(db, sql: "PRAGMA max_page_count = \(pages)")
        }
        let big = (0..<500).map { Entry(id: "big-\($0)", index: $0, payload: String(repeating: "x", count: 1_000)) }
        let error = #expect(throws: StoreError.self) { try store.add(contentsOf: big) }
        #expect(error?.description.contains(path) == true)
        #expect(error?.description.contains("entries") == true)
        #expect(store.ids == ["kept"], "memory unchanged")
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(events.values.isEmpty, "no event for a failed write")
        let onDisk = try await DatabaseQueue(path: path).read {
            try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM amber_records")
        }
        #expect(onDisk == 1, "disk unchanged")
    }

    @Test func aLocalWriteReplacesAnUndecodableRecord() throws {
        let store = try storeWithUndecodableRecord()
        #expect(store.undecodable.map(\.id) == ["a"])
        try store.add(Entry(id: "a", index: 2, payload: "new"))
        #expect(store.undecodable.isEmpty, "the record on disk is the new value now")
        var recovered = false
        try store.recover { _ in
            recovered = true; return nil
        }
        #expect(!recovered)
    }

    @Test func anotherWritersRecordThatNoLongerDecodesLeavesMemory() async throws {
        let path = temporaryDatabasePath()
        let store = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        try store.add(contentsOf: [Entry(id: "a", index: 1, payload: ""), Entry(id: "b", index: 2, payload: "")])
        // A newer version of the app rewrites "a" in a shape this one cannot read.
        try await DatabaseQueue(path: path).write { db in
            try db.execute(
                sql:
                    #"UPDATE amber_records SET value = '{"id":"a","index":"v2"}', sequence = sequence + 100 WHERE id = 'a'"#
            )
        }
        #expect(await eventually(within: 2) { store[id: "a"] == nil })
        #expect(store.undecodable.map(\.id) == ["a"])
        #expect(store.ids == ["b"])
    }
}
