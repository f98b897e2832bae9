import Amber
import AmberSQLite
import AmberTestSupport
import Foundation
import GRDB
import Testing

@Suite(.boundedConcurrency) struct SQLiteStorageTests {
    @Test func manyKeysInOneFile() throws {
        let path = temporaryDatabasePath()
        let storage = try SQLiteStorage(path: path)
        let first = try IdentityStore<Entry>(key: "first", storage: storage)
        let second = try IdentityStore<Entry>(key: "second", storage: storage)
        try first.add(Entry(id: "a", index: 1, payload: "first"))
        try second.add(Entry(id: "a", index: 2, payload: "second"))
        let reopened = try SQLiteStorage(path: path)
        #expect(try IdentityStore<Entry>(key: "first", storage: reopened).all.map(\.payload) == ["first"])
        #expect(try IdentityStore<Entry>(key: "second", storage: reopened).all.map(\.payload) == ["second"])
    }

    /// Statement journals stay in memory: in a temporary file, an initial sync wrote over 20 KB a
    /// record to /var/tmp (see the comment where the storage opens its connection).
    @Test func statementJournalsAreKeptInMemory() throws {
        let storage = try SQLiteStorage(path: temporaryDatabasePath())
        #expect(try storage.database.read { try Int.fetchOne($0, sql: "PRAGMA temp_store") } == 2, "2 is MEMORY")
    }

    @Test func recordsAreJSONTextOtherToolsCanRead() throws {
        let path = temporaryDatabasePath()
        let store = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        try store.add(Entry(id: "a", index: 1, payload: "p"))
        let json = try DatabaseQueue(path: path).read { db in
            try String.fetchOne(db, sql: "SELECT value FROM amber_records WHERE key = 'entries' AND id = 'a'")
        }
        let decoded = try JSONDecoder().decode(Entry.self, from: Data(try #require(json).utf8))
        #expect(decoded == Entry(id: "a", index: 1, payload: "p"))
        let mode = try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
    }

    /// A text handed in with a value (sync's server text) is written as the value's record,
    /// unless the transaction then replaced the value; either way the record reads back as the
    /// value committed.
    @Test func aTextHandedInWithAValueIsItsRecordWhileTheValueStaysTheSame() throws {
        let path = temporaryDatabasePath()
        let store = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        func stored(_ id: String) throws -> String? { try Self.storedText(of: id, key: "entries", at: path) }
        // Keys in another order than the encoder's, and one the model does not know.
        let text = #"{"payload":"p","server":"kept","index":1,"id":"a"}"#
        let entry = Entry(id: "a", index: 1, payload: "p")
        try store.transaction { $0.add(entry, encodedAs: text) }
        #expect(try stored("a") == text)
        // An update too.
        let updated = #"{"id":"a","index":2,"payload":"q"}"#
        try store.transaction { $0.add(Entry(id: "a", index: 2, payload: "q"), encodedAs: updated) }
        #expect(try stored("a") == updated)

        // Replaced in the same transaction: the text no longer describes the value.
        try store.transaction { transaction in
            let old = #"{"id":"b","index":1,"payload":"old"}"#
            transaction.add(Entry(id: "b", index: 1, payload: "old"), encodedAs: old)
            transaction.add(Entry(id: "b", index: 1, payload: "new"))
        }
        let b = try JSONDecoder().decode(Entry.self, from: Data(try #require(try stored("b")).utf8))
        #expect(b == Entry(id: "b", index: 1, payload: "new"))

        let reopened = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        #expect(reopened.all == [Entry(id: "a", index: 2, payload: "q"), Entry(id: "b", index: 1, payload: "new")])
    }

    /// A value whose type is not `Equatable` has its handed-in text written too (the text is that
    /// of its identity's newest write); a value removed after it in the transaction leaves no record.
    @Test func aTextHandedInWithAValueThatIsNotEquatableIsItsRecord() throws {
        struct Note: Identifiable, Codable, Sendable {
            let id: String
            let body: String
        }
        let path = temporaryDatabasePath()
        let store = try IdentityStore<Note>(key: "notes", storage: SQLiteStorage(path: path))
        func stored(_ id: String) throws -> String? { try Self.storedText(of: id, key: "notes", at: path) }
        let text = #"{"body":"kept as sent","id":"a","server":1}"#
        try store.transaction { transaction in
            transaction.add(Note(id: "a", body: "kept as sent"), encodedAs: text)
            transaction.add(Note(id: "b", body: "gone"), encodedAs: #"{"id":"b","body":"gone"}"#)
            transaction.remove(id: "b")
        }
        #expect(try stored("a") == text)
        #expect(try stored("b") == nil)
        #expect(store.all.map(\.id) == ["a"])
    }

    /// The text of record `id` of `key` in the file at `path`, read with GRDB.
    private static func storedText(of id: String, key: String, at path: String) throws -> String? {
        try DatabaseQueue(path: path).read { db in
            try String.fetchOne(
                db, sql: "SELECT value FROM amber_records WHERE key = ? AND id = ?", arguments: [key, id])
        }
    }

    /// A batch's records go to SQLite through its C API (`RecordUpsert`): each id and text is
    /// stored byte for byte, an existing record keeps its position and takes the new text, and
    /// the statement is left ready for the writes after it.
    @Test func aBatchStoresEachRecordsBytesAndKeepsPositions() throws {
        let path = temporaryDatabasePath()
        let store = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        let texts = [
            "ä-1": #"{"id":"ä-1","index":1,"payload":"naïve 🍪 \u0000"}"#,
            "b": #"{"id":"b","index":2,"payload":""}"#,
            "a": #"{"id":"a","index":3,"payload":"x"}"#,
        ]
        try store.transaction { transaction in
            transaction.add(Entry(id: "ä-1", index: 1, payload: "naïve 🍪 \u{0}"), encodedAs: texts["ä-1"]!)
            transaction.add(Entry(id: "b", index: 2, payload: ""), encodedAs: texts["b"]!)
            transaction.add(Entry(id: "a", index: 3, payload: "x"), encodedAs: texts["a"]!)
        }
        func rows() throws -> [(id: String, hex: String, position: Int64)] {
            try DatabaseQueue(path: path).read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT id, hex(value), position FROM amber_records WHERE key = 'entries' ORDER BY position
                        """
                ).map { ($0[0], $0[1], $0[2]) }
            }
        }
        func hex(_ text: String) -> String { text.utf8.map { String(format: "%02X", $0) }.joined() }
        #expect(try rows().map(\.id) == ["ä-1", "b", "a"])
        #expect(try rows().map(\.hex) == ["ä-1", "b", "a"].map { hex(texts[$0]!) })

        // An update of b beside a new record: b keeps its place, c comes last.
        let updated = #"{"id":"b","index":20,"payload":"y"}"#
        try store.transaction { transaction in
            transaction.add(Entry(id: "b", index: 20, payload: "y"), encodedAs: updated)
            transaction.add(Entry(id: "c", index: 4, payload: "z"))
        }
        let after = try rows()
        #expect(after.map(\.id) == ["ä-1", "b", "a", "c"])
        #expect(after[1].hex == hex(updated))
        #expect(after[1].position == 2)
        // Single writes and removals after the batches, and a new instance reads them all.
        try store.add(Entry(id: "d", index: 5, payload: "w"))
        try store.remove(id: "a")
        let reopened = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        #expect(reopened.all.map(\.id) == ["ä-1", "b", "c", "d"])
        #expect(reopened[id: "b"]?.index == 20)
        #expect(reopened[id: "ä-1"]?.payload == "naïve 🍪 \u{0}")
    }

    /// A storage's other users (a `StoreStorage` client, not a store) may write an empty record
    /// or id: bound as the empty text, not as `NULL`, which the table refuses.
    @Test func anEmptyRecordAndAnEmptyIdAreStoredAsEmptyTexts() throws {
        let path = temporaryDatabasePath()
        let handle = try SQLiteStorage(path: path).open(key: "raw")
        let records = [StoredRecord(id: "", data: Data()), StoredRecord(id: "x", data: Data("{}".utf8))]
        try handle.write { _ in StorageBatch(upserts: records) }
        #expect(try SQLiteStorage(path: path).open(key: "raw").load() == records)
    }

    @Test func aWriteTouchesOnlyTheChangedRecords() throws {
        let path = temporaryDatabasePath()
        let store = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        try store.add(contentsOf: (0..<1_000).map { Entry(id: "\($0)", index: $0, payload: "") })
        try store.add(Entry(id: "500", index: -1, payload: "changed"))
        let changedRows = try DatabaseQueue(path: path).read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) FROM amber_records
                    WHERE sequence = (SELECT MAX(sequence) FROM amber_records)
                    """)
        }
        #expect(changedRows == 1)
    }

    @Test func twoStorageInstancesOnOneFileSeeEachOthersWrites() async throws {
        let path = temporaryDatabasePath()
        let mine = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        let theirs = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        let events = Collected(mine.changes())
        try theirs.add(Entry(id: "x", index: 1, payload: "from the other instance"))
        #expect(await eventually(within: 1) { mine[id: "x"] != nil }, "seen within one second")
        // The store has the value before its `changes()` consumer runs: delivery is asynchronous.
        #expect(await eventually(within: 5) { !events.values.isEmpty }, "the change was delivered")
        let change = try #require(events.values.first)
        #expect(change.origin == .otherProcess)
        #expect(change.inserted.map(\.id) == ["x"])
        try theirs.add(Entry(id: "x", index: 2, payload: "updated"))
        try theirs.remove(id: "x")
        #expect(await eventually(within: 1) { mine.count == 0 })
        #expect(events.values.allSatisfy { $0.origin == .otherProcess })
    }

    @Test func twoStoresOnOneStorageInstanceSeeEachOthersWrites() async throws {
        let storage = try SQLiteStorage(path: temporaryDatabasePath())
        let mine = try IdentityStore<Entry>(key: "entries", storage: storage)
        let theirs = try IdentityStore<Entry>(key: "entries", storage: storage)
        try theirs.add(Entry(id: "x", index: 1, payload: ""))
        #expect(await eventually(within: 1) { mine[id: "x"] != nil })
        #expect(theirs.count == 1, "the writer does not see its own write twice")
    }

    @Test func anotherProcessWriteArrivesAsAnEvent() async throws {
        let path = temporaryDatabasePath()
        let store = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        let events = Collected(store.changes())
        let process = Process()
        process.executableURL = try writerExecutable()
        process.arguments = [path, "entries", "3", "remote"]
        process.standardOutput = Pipe()
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(await eventually(within: 1) { store.count == 3 }, "within one second of the other process's writes")
        #expect(events.values.allSatisfy { $0.origin == .otherProcess })
        #expect(store.ids == ["remote-0", "remote-1", "remote-2"])
    }

    /// An id holding U+0000 is refused, alone or in a batch, and nothing of the write is kept:
    /// written, it was cut short where it was read or deleted, so removing `"a\u{0}b"` removed `"a"`.
    @Test func aRecordIDHoldingNULIsRefusedAndNothingOfTheWriteIsKept() throws {
        let path = temporaryDatabasePath()
        let store = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        try store.add(Entry(id: "a", index: 1, payload: "plain"))
        let refusal = #expect(throws: StoreError.self) {
            try store.add(Entry(id: "a\u{0}b", index: 2, payload: "nul"))
        }
        guard case .writeFailed(_, let key, let reason)? = refusal else {
            Issue.record("expected writeFailed, got \(String(describing: refusal))")
            return
        }
        #expect(key == "entries")
        #expect(reason.message.contains("U+0000") && reason.message.contains(#""a\0b""#))
        #expect(throws: StoreError.self) {
            try store.add(contentsOf: [
                Entry(id: "c", index: 3, payload: "c"), Entry(id: "d\u{0}", index: 4, payload: "d"),
            ])
        }
        #expect(store.ids == ["a"])
        let reopened = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        #expect(reopened.all == [Entry(id: "a", index: 1, payload: "plain")])
        let rows = try DatabaseQueue(path: path).read {
            try String.fetchAll($0, sql: "SELECT hex(id) FROM amber_records")
        }
        #expect(rows == ["61"])
    }
}
