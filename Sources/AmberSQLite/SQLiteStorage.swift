import Amber
import AmberLock
import Foundation
import GRDB

/// Keeps stores in one SQLite database file, through GRDB: the default storage.
///
/// ```swift
/// let storage = try SQLiteStorage(path: appGroup.appendingPathComponent("Stores.sqlite").path)
/// let notes = try IdentityStore<Note>(key: "notes", storage: storage)
/// let tags = try IdentityStore<Tag>(key: "tags", storage: storage)
/// ```
///
/// Many keys live side by side in one file. Each store write or transaction is one SQLite
/// transaction that touches only the records it changes, so opening and writing stay fast at
/// hundreds of thousands of values. Records are stored as the value's JSON text, readable with
/// any SQLite tool (`SELECT id, value FROM amber_records WHERE key = 'notes' ORDER BY position`).
///
/// A record's id (its value's `id` as text) must not hold U+0000: a write naming one throws
/// `StoreError.writeFailed` and changes nothing, as SQLite's text binding would cut the id there.
///
/// ## Durability
///
/// The database runs in WAL mode with `synchronous = FULL`: a write has reached the disk when
/// the store's method returns, so neither an app crash nor a power loss loses an acknowledged
/// write, and a crash in the middle of a write leaves the previous state. (`NORMAL` would survive
/// app crashes only.)
///
/// ## Sharing
///
/// Processes sharing the file (an app and its extensions) and other `SQLiteStorage` instances in
/// this process see each other's writes within a second, as changes of origin `.otherProcess`:
/// one watcher per storage instance checks SQLite's `PRAGMA data_version` (every 100 ms after a
/// change, slowing to every 500 ms when nothing changes), and each store then reads only the
/// records changed since it last looked. Several transactions of another process may arrive as
/// one change.
///
/// A write never works from stale values: it runs in one immediate SQLite transaction that first
/// takes in what other writers committed (published as its own `.otherProcess` change), then
/// resolves and writes. So `update(id:)`, `transaction`, `remove` and `Editor.save()` never
/// overwrite another process's newer record or bring back a record it deleted.
///
/// ## Contention
///
/// While another process writes, a write waits for it: up to 10 seconds, or up to 1 second when
/// made on the main actor, so the UI never freezes for long. A write that cannot start in that
/// time throws `StoreError.writeFailed` (SQLite's "database is locked") and
/// changes nothing; the app may retry it.
///
/// A store's transaction body or update transform runs inside that SQLite transaction: writing
/// from it to another store of the same storage throws instead of deadlocking.
public final class SQLiteStorage: StoreStorage {
    /// The database file.
    public let path: String
    /// The connection every store of this instance writes through; sync keeps its tables here.
    package let database: DatabaseQueue
    /// Bumped on every write through this instance, so its other open keys look for changes too.
    let localWrites = LockedValue(0)
    /// Signals this instance's open keys when the file may have changed.
    let watcher: SQLiteWatcher

    /// Version 2 prunes deletion rows and records a horizon; version 1 libraries would miss them.
    static let schemaVersion = 2
    /// A key's deletion rows are pruned every this many writes…
    static let deletionPruningInterval: Int64 = 256
    /// …down to those of the last this many writes; a store that last looked earlier reloads the key.
    static let deletionHorizon: Int64 = 1_024
    static let busyTimeout = 10_000
    static let mainActorBusyTimeout = 1_000

    static func horizonName(_ key: String) -> String { "horizon.\(key)" }

    /// Opens the database file at `path`, creating it (and its directory) when absent.
    ///
    /// - Throws: `StoreError.unreadableStorage` when the file is not an SQLite
    ///   database, belongs to another application, or has a newer schema; the file is not changed.
    public init(path: String) throws {
        self.path = path
        if let problem = Self.headerProblem(path: path) {
            throw StoreError.unreadableStorage(path: path, reason: .init(problem))
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(TimeInterval(Self.busyTimeout) / 1_000)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            // Statement journals in memory. A store's upsert fires the sync log's triggers, so
            // inside a transaction each one keeps a statement journal of the pages it changes;
            // once one statement's journal outgrows 64 KiB, SQLite moves it to a temporary file
            // for the rest of the transaction, and every later statement then wrote its pages
            // there: an initial sync wrote over 20 KB a record to /var/tmp.
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        }
        do {
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
            database = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw StoreError.unreadableStorage(path: path, reason: Self.reason(error))
        }
        do {
            try Self.validateAndPrepare(database, path: path)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.unreadableStorage(path: path, reason: Self.reason(error))
        }
        watcher = SQLiteWatcher(database: database, localWrites: localWrites)
    }

    /// Opens the records of `key`.
    public func open(key: String) throws -> any StorageKeyHandle {
        try SQLiteStorageKey(storage: self, key: key)
    }

    /// Checks the file before writing anything to it, then sets it up.
    private static func validateAndPrepare(_ database: DatabaseQueue, path: String) throws {
        try database.writeWithoutTransaction { db in
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            if !tables.isEmpty {
                guard tables.contains("amber_meta") else {
                    throw StoreError.unreadableStorage(
                        path: path, reason: "a database of another application (no amber_meta table)")
                }
                let version = try Int.fetchOne(db, sql: "SELECT value FROM amber_meta WHERE name = 'schema'") ?? 0
                guard version <= schemaVersion else {
                    throw StoreError.unreadableStorage(
                        path: path, reason: "schema version \(version) is newer than this library's \(schemaVersion)")
                }
            }
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.inTransaction(.immediate) {
                try rebuildKeyedRecordsTable(db)
                try db.execute(
                    sql: """
                        CREATE TABLE IF NOT EXISTS amber_meta (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL);
                        INSERT OR IGNORE INTO amber_meta (name, value) VALUES ('schema', \(schemaVersion));
                        UPDATE amber_meta SET value = \(schemaVersion) WHERE name = 'schema' AND value < \(schemaVersion);
                        CREATE TABLE \(recordsTableDefinition("amber_records", ifNotExists: true));
                        CREATE INDEX IF NOT EXISTS amber_records_position ON amber_records (key, position);
                        CREATE INDEX IF NOT EXISTS amber_records_sequence ON amber_records (key, sequence);
                        CREATE TABLE IF NOT EXISTS amber_deletions (
                            key TEXT NOT NULL, id TEXT NOT NULL, sequence INTEGER NOT NULL,
                            PRIMARY KEY (key, id)) WITHOUT ROWID;
                        CREATE INDEX IF NOT EXISTS amber_deletions_sequence ON amber_deletions (key, sequence);
                        """)
                return .commit
            }
        }
    }

    /// The records table: a rowid table, its rows in the order they were first written, with a
    /// unique index on `(key, id)`; or, with `keyedById`, the table keyed by `(key, id)` itself
    /// (`WITHOUT ROWID`) that files written before kept.
    ///
    /// A table keyed by `(key, id)` holds each record in its id's place: a large batch of new
    /// records with random ids rewrites nearly every leaf of that tree, values and all. In the
    /// rowid table new records go to the table's end, and only the index's small entries land at
    /// random.
    private static func recordsTableDefinition(_ name: String, ifNotExists: Bool, keyedById: Bool = false) -> String {
        """
        \(ifNotExists ? "IF NOT EXISTS " : "")\(name) (
            key TEXT NOT NULL, id TEXT NOT NULL, position INTEGER NOT NULL,
            sequence INTEGER NOT NULL, value TEXT NOT NULL,
            \(keyedById ? "PRIMARY KEY (key, id)) WITHOUT ROWID" : "UNIQUE (key, id))")
        """
    }

    /// Moves the records of a file that keeps them in a table keyed by `(key, id)` into the rowid
    /// table, in the transaction that prepares the file; does nothing for a new file or one
    /// already moved.
    ///
    /// A library that still writes the old table reads and writes the new one unchanged (the same
    /// columns, the same conflict target), so the move needs no new schema version.
    private static func rebuildKeyedRecordsTable(_ db: Database) throws {
        guard try keepsRecordsKeyedById(db) else { return }
        try rebuildRecordsTable(db, keyedById: false)
    }

    /// Whether `amber_records` is the table keyed by `(key, id)` of files written before the
    /// rowid table (its primary key is an index of its own); `false` when there is no such table.
    package static func keepsRecordsKeyedById(_ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM pragma_index_list('amber_records') WHERE origin = 'pk')") ?? false
    }

    /// Copies `amber_records` into a table of the given form (see
    /// ``recordsTableDefinition(_:ifNotExists:keyedById:)``) that takes its name, in the caller's
    /// transaction: the rows, their columns, the indexes and the triggers other parts of this
    /// package put on the table (sync's change log and bases) stay as they were.
    ///
    /// `DROP TABLE` drops a table's triggers, so their SQL is read first and run again after.
    /// Tests use `keyedById: true` to write a file as versions before the rowid table did.
    package static func rebuildRecordsTable(_ db: Database, keyedById: Bool) throws {
        let triggers = try Row.fetchAll(
            db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'amber_records'")
        for trigger in triggers {
            try db.execute(sql: "DROP TRIGGER \((trigger["name"] as String).quotedDatabaseIdentifier)")
        }
        let moved = recordsTableDefinition("amber_records_moved", ifNotExists: false, keyedById: keyedById)
        try db.execute(
            sql: """
                CREATE TABLE \(moved);
                INSERT INTO amber_records_moved (key, id, position, sequence, value)
                    SELECT key, id, position, sequence, value FROM amber_records ORDER BY key, position;
                DROP TABLE amber_records;
                ALTER TABLE amber_records_moved RENAME TO amber_records;
                CREATE INDEX amber_records_position ON amber_records (key, position);
                CREATE INDEX amber_records_sequence ON amber_records (key, sequence);
                """)
        for trigger in triggers {
            try db.execute(sql: trigger["sql"] as String)
        }
    }

    /// What is visibly wrong with an existing file's SQLite header, before SQLite opens it.
    ///
    /// A file cut short (a copy interrupted, a disk that lost its tail) is only noticed by SQLite
    /// when it reads a missing page; the header says how long the file should be.
    private static func headerProblem(path: String) -> String? {
        // With a write-ahead log beside it, the main file may legitimately lag its header
        // (a checkpoint interrupted midway): leave the judgement to SQLite then.
        let walSize =
            (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)??.intValue ?? 0
        guard walSize == 0, let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        guard let header = try? file.read(upToCount: 100), header.count == 100,
            header.starts(with: Data("SQLite format 3\0".utf8))
        else { return nil }
        func integer(at offset: Int, size: Int) -> Int {
            header[offset..<(offset + size)].reduce(0) { $0 << 8 | Int($1) }
        }
        let rawPageSize = integer(at: 16, size: 2)
        let pageSize = rawPageSize == 1 ? 65_536 : rawPageSize
        let pageCount = integer(at: 28, size: 4)
        // The page count is only valid when it was written with the current change counter.
        guard integer(at: 92, size: 4) == integer(at: 24, size: 4), pageCount > 0,
            let size = try? file.seekToEnd()
        else { return nil }
        let expected = pageCount * pageSize
        return Int(size) < expected ? "the file is truncated (\(size) bytes, its header says \(expected))" : nil
    }

    /// Counts a write through this instance.
    func didWrite() {
        localWrites.withLock { $0 += 1 }
    }

    /// Runs a write with the busy timeout for its caller: short for the main actor.
    func withWriteTimeout<R>(_ db: Database, short: Bool, _ body: () throws -> R) throws -> R {
        guard short else { return try body() }
        try db.execute(sql: "PRAGMA busy_timeout = \(Self.mainActorBusyTimeout)")
        defer { try? db.execute(sql: "PRAGMA busy_timeout = \(Self.busyTimeout)") }
        return try body()
    }

    static func reason(_ error: any Error) -> StoreError.Cause {
        if let error = error as? DatabaseError {
            return .init(
                "\(error.message ?? "SQLite error") (SQLite error \(error.extendedResultCode.rawValue))",
                underlyingError: error)
        }
        return .init("\(error)", underlyingError: error)
    }
}
