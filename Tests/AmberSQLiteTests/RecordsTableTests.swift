import Amber
import AmberSQLite
import AmberTestSupport
import Foundation
import GRDB
import Testing

/// The records table's form: a rowid table with a unique `(key, id)`, and files that still keep
/// their records in a table keyed by `(key, id)` moved to it when opened.
@Suite(.boundedConcurrency) struct RecordsTableTests {
    /// A file as the library wrote it before the move (schema 2), with sync's change log on it:
    /// three records of `entries` in the order c, a, b, none of them logged as written.
    private func writeKeyedFile(at path: String) throws {
        try DatabaseQueue(path: path).write { db in
            try db.execute(
                sql: """
                    CREATE TABLE amber_meta (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL);
                    INSERT INTO amber_meta (name, value) VALUES ('schema', 2);
                    CREATE TABLE amber_records (
                        key TEXT NOT NULL, id TEXT NOT NULL, position INTEGER NOT NULL,
                        sequence INTEGER NOT NULL, value TEXT NOT NULL,
                        PRIMARY KEY (key, id)) WITHOUT ROWID;
                    CREATE INDEX amber_records_position ON amber_records (key, position);
                    CREATE INDEX amber_records_sequence ON amber_records (key, sequence);
                    CREATE TABLE amber_deletions (
                        key TEXT NOT NULL, id TEXT NOT NULL, sequence INTEGER NOT NULL,
                        PRIMARY KEY (key, id)) WITHOUT ROWID;
                    CREATE INDEX amber_deletions_sequence ON amber_deletions (key, sequence);
                    INSERT INTO amber_records (key, id, position, sequence, value) VALUES
                        ('entries', 'c', 0, 1, '{"id":"c","index":0,"payload":"third id, first place"}'),
                        ('entries', 'a', 1, 2, '{"id":"a","index":1,"payload":"first id"}'),
                        ('entries', 'b', 2, 3, '{"id":"b","index":2,"payload":"second id"}'),
                        ('others', 'a', 0, 1, '{"id":"a","index":9,"payload":"another key"}');
                    """)
            try SQLiteChangeLog.prepare(db)
            try SQLiteChangeLog.log(db, key: "entries")
            for id in ["a", "b", "c"] { try SQLiteChangeLog.setWritten(db, key: "entries", id: id, false) }
        }
    }

    private func schema(_ db: Database) throws -> [String] {
        try String.fetchAll(
            db, sql: "SELECT type || ' ' || name FROM sqlite_master WHERE tbl_name = 'amber_records' ORDER BY 1")
    }

    @Test func aNewFileKeepsItsRecordsInARowidTable() throws {
        let storage = try SQLiteStorage(path: temporaryDatabasePath())
        let keyed = try storage.database.read { try SQLiteStorage.keepsRecordsKeyedById($0) }
        #expect(!keyed)
        // A rowid table answers for `rowid`; one without rowids does not know the column.
        let rowids = try storage.database.read { try Int.fetchAll($0, sql: "SELECT rowid FROM amber_records") }
        #expect(rowids.isEmpty)
    }

    /// Every record keeps its key, id, text and place; the indexes and the change log's triggers
    /// are there again and log the writes after the move; opening the file again moves nothing.
    @Test func aFileKeyedByIdIsMovedWithItsRecordsOrderAndTriggers() throws {
        let path = temporaryDatabasePath()
        try writeKeyedFile(at: path)
        let before = try DatabaseQueue(path: path).read { db in
            (
                schema: try schema(db),
                rows: try Row.fetchAll(db, sql: "SELECT * FROM amber_records ORDER BY key, id")
            )
        }
        #expect(before.schema.filter { $0.hasPrefix("trigger") }.count == 3, "the change log's triggers")

        let storage = try SQLiteStorage(path: path)
        let after = try storage.database.read { db in
            (
                keyed: try SQLiteStorage.keepsRecordsKeyedById(db), schema: try schema(db),
                rows: try Row.fetchAll(db, sql: "SELECT * FROM amber_records ORDER BY key, id"),
                version: try Int.fetchOne(db, sql: "SELECT value FROM amber_meta WHERE name = 'schema'")
            )
        }
        #expect(!after.keyed, "moved to a rowid table")
        #expect(
            Set(after.schema) == Set(before.schema + ["index sqlite_autoindex_amber_records_1"]),
            "the same indexes and triggers, and the unique index on (key, id)")
        #expect(after.rows == before.rows)
        #expect(after.version == 2, "the same schema version: the old library reads and writes the moved table")
        let entries = try IdentityStore<Entry>(key: "entries", storage: storage)
        #expect(entries.all.map(\.id) == ["c", "a", "b"], "in their places")
        #expect(try IdentityStore<Entry>(key: "others", storage: storage).all.map(\.payload) == ["another key"])

        func written() throws -> [String] {
            try storage.database.read { db in
                try String.fetchAll(
                    db, sql: "SELECT id FROM \(SQLiteChangeLog.table) WHERE key = 'entries' ORDER BY id")
            }
        }
        #expect(try written().isEmpty)
        try entries.add(Entry(id: "a", index: 1, payload: "edited"))
        try entries.add(Entry(id: "d", index: 3, payload: "new"))
        try entries.remove(id: "b")
        #expect(try written() == ["a", "b", "d"], "an update, an insert and a delete are logged")
        #expect(entries.all.map(\.id) == ["c", "a", "d"])

        // Another instance on the moved file (as another process opens it) finds nothing to move.
        let again = try SQLiteStorage(path: path)
        #expect(
            try IdentityStore<Entry>(key: "entries", storage: again).all.map(\.payload) == [
                "third id, first place", "edited", "new",
            ])
        #expect(try again.database.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM amber_records") } == 4)
    }

    /// A library that still writes the keyed table writes the moved one with the same statement:
    /// an upsert on `(key, id)` updates the record in place rather than adding a second one.
    @Test func theOldUpsertStillWritesTheMovedTable() throws {
        let path = temporaryDatabasePath()
        try writeKeyedFile(at: path)
        _ = try SQLiteStorage(path: path)
        try DatabaseQueue(path: path).write { db in
            try db.execute(
                sql: """
                    INSERT INTO amber_records (key, id, position, sequence, value) VALUES (?1, ?2, ?3, ?4, ?5)
                    ON CONFLICT (key, id) DO UPDATE SET sequence = excluded.sequence, value = excluded.value
                    """,
                arguments: ["entries", "a", 7, 4, #"{"id":"a","index":1,"payload":"from the old library"}"#])
        }
        let entries = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        #expect(entries.all.map(\.id) == ["c", "a", "b"], "no second a, and a kept its place")
        #expect(entries[id: "a"]?.payload == "from the old library")
    }
}
