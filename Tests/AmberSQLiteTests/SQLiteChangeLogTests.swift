import Amber
import AmberSQLite
import AmberTestSupport
import Foundation
import GRDB
import Testing

/// The change log on the records table, and the store write that hands its transaction to its
/// body: what sync's bookkeeping is built on.
@Suite(.boundedConcurrency) struct SQLiteChangeLogTests {
    let storage: SQLiteStorage
    let entries: IdentityStore<Entry>

    init() throws {
        storage = try SQLiteStorage(path: temporaryDatabasePath())
        entries = try IdentityStore(key: "entries", storage: storage)
    }

    func written(_ key: String = "entries") throws -> [String] {
        try storage.database.read { db in
            try String.fetchAll(
                db, sql: "SELECT id FROM \(SQLiteChangeLog.table) WHERE key = ? ORDER BY id", arguments: [key])
        }
    }

    @Test func writesToALoggedKeyAreLoggedWhoeverWritesThem() throws {
        try entries.add(Entry(id: "before", index: 0, payload: ""))
        let others = try IdentityStore<Entry>(key: "others", storage: storage)
        try storage.database.write { db in
            try SQLiteChangeLog.prepare(db)
            #expect(try SQLiteChangeLog.log(db, key: "entries"), "the first time")
            #expect(try !SQLiteChangeLog.log(db, key: "entries"), "logged already")
        }
        #expect(try written() == ["before"], "a key's records are logged as written when it starts being logged")

        try storage.database.write { try SQLiteChangeLog.setWritten($0, key: "entries", id: "before", false) }
        try entries.add(Entry(id: "a", index: 1, payload: ""))
        try others.add(Entry(id: "o", index: 1, payload: ""))
        #expect(try written() == ["a"])
        #expect(try written("others").isEmpty, "a key not logged")

        // Another storage instance on the file, as another process would write it.
        let elsewhere = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: storage.path))
        try storage.database.write { try SQLiteChangeLog.setWritten($0, key: "entries", id: "a", false) }
        try elsewhere.remove(id: "a")
        try elsewhere.add(Entry(id: "before", index: 2, payload: "changed"))
        #expect(try written() == ["a", "before"], "a deletion and an update")
        let counts = try storage.database.read { db in
            try [
                SQLiteChangeLog.writtenCount(db), SQLiteChangeLog.writtenCount(db, keys: ["others"]),
                SQLiteChangeLog.writtenCount(db, keys: []),
            ]
        }
        #expect(counts == [2, 0, 0], "of every key, of a key not logged, of none")
    }

    @Test func theLogKeepsTheTablesAndTriggersFilesHaveAlways() throws {
        try storage.database.write { try SQLiteChangeLog.prepare($0) }
        let names = try storage.database.read { db in
            try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'amber_sync_%' ORDER BY name")
        }
        #expect(
            names == [
                "amber_sync_collections", "amber_sync_mark_delete", "amber_sync_mark_insert", "amber_sync_mark_update",
                "amber_sync_pending",
            ])
    }

    @Test func aWriteHandsItsTransactionToItsBody() throws {
        try storage.database.write { db in
            try db.execute(sql: "CREATE TABLE beside (id TEXT NOT NULL, records INTEGER NOT NULL)")
        }
        // What the body writes through the transaction commits with the store's records; work
        // after the records sees them.
        let count = try entries.syncTransaction { (transaction, context: SQLiteWriteContext) -> Int in
            #expect(context.key == "entries")
            transaction.add(Entry(id: "a", index: 1, payload: ""))
            context.afterRecordsWritten { db, _ in
                let records = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM amber_records WHERE key = 'entries'")
                try db.execute(sql: "INSERT INTO beside (id, records) VALUES ('a', ?)", arguments: [records])
            }
            return try Int.fetchOne(context.database, sql: "SELECT COUNT(*) FROM amber_records") ?? -1
        }
        #expect(count == 0, "the body runs before the records are written")
        #expect(try storage.database.read { try Int.fetchOne($0, sql: "SELECT records FROM beside") } == 1)

        // A body that throws rolls back what it wrote too.
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try entries.syncTransaction { (transaction, context: SQLiteWriteContext) in
                transaction.add(Entry(id: "b", index: 2, payload: ""))
                try context.database.execute(sql: "INSERT INTO beside (id, records) VALUES ('b', 0)")
                throw Refused()
            }
        }
        #expect(try storage.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM beside") } == 1)
        #expect(entries[id: "b"] == nil)
    }

    @Test func aStoreNotOnSQLiteHandsNoTransaction() throws {
        let memory = IdentityStore<Entry>()
        #expect(throws: StoreError.self) {
            try memory.syncTransaction { (_, _: SQLiteWriteContext) in }
        }
    }
}
