import Foundation
import GRDB

/// Which records of chosen keys were written since they were last marked unchanged, for code of
/// this package that follows a store's writes (sync's pending records).
///
/// Triggers on `amber_records` log every write to a logged key (insert, update of its value,
/// delete) in the write's own transaction, whichever process makes it: an app extension that
/// never opens sync is logged too. The log lives in the storage file:
///
/// - `amber_sync_collections`: the logged keys.
/// - `amber_sync_pending`: per key, the ids of the records written since they were last marked
///   unchanged.
///
/// The tables and triggers keep the names sync gave them when it created them itself, so files
/// written before keep working unchanged. They are created on the first ``prepare(_:)``, not with
/// the storage: a file that no one logs has none of them.
///
/// The triggers test for an existing entry instead of saying `INSERT OR IGNORE`: inside a
/// trigger, SQLite replaces that conflict clause by the outer statement's (the store's upsert),
/// which fails.
package enum SQLiteChangeLog {
    /// The table of written records, `(key, id)`, for queries that join it to tables of their own.
    package static let table = "amber_sync_pending"

    /// Creates the log's tables and triggers, when absent.
    package static func prepare(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS amber_sync_collections (key TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS amber_sync_pending (
                    key TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (key, id)) WITHOUT ROWID;
                CREATE TRIGGER IF NOT EXISTS amber_sync_mark_insert AFTER INSERT ON amber_records
                    WHEN EXISTS (SELECT 1 FROM amber_sync_collections WHERE key = NEW.key)
                    BEGIN INSERT INTO amber_sync_pending (key, id) SELECT NEW.key, NEW.id
                        WHERE NOT EXISTS (SELECT 1 FROM amber_sync_pending WHERE key = NEW.key AND id = NEW.id); END;
                CREATE TRIGGER IF NOT EXISTS amber_sync_mark_update AFTER UPDATE OF value ON amber_records
                    WHEN EXISTS (SELECT 1 FROM amber_sync_collections WHERE key = NEW.key)
                    BEGIN INSERT INTO amber_sync_pending (key, id) SELECT NEW.key, NEW.id
                        WHERE NOT EXISTS (SELECT 1 FROM amber_sync_pending WHERE key = NEW.key AND id = NEW.id); END;
                CREATE TRIGGER IF NOT EXISTS amber_sync_mark_delete AFTER DELETE ON amber_records
                    WHEN EXISTS (SELECT 1 FROM amber_sync_collections WHERE key = OLD.key)
                    BEGIN INSERT INTO amber_sync_pending (key, id) SELECT OLD.key, OLD.id
                        WHERE NOT EXISTS (SELECT 1 FROM amber_sync_pending WHERE key = OLD.key AND id = OLD.id); END;
                """)
    }

    /// Starts logging the writes to `key`; the first time, logs every record it holds as written.
    ///
    /// - Returns: Whether the key was not logged before.
    @discardableResult
    package static func log(_ db: Database, key: String) throws -> Bool {
        try db.execute(sql: "INSERT OR IGNORE INTO amber_sync_collections (key) VALUES (?)", arguments: [key])
        guard db.changesCount > 0 else { return false }
        try db.execute(
            sql: "INSERT OR IGNORE INTO amber_sync_pending (key, id) SELECT key, id FROM amber_records WHERE key = ?",
            arguments: [key])
        return true
    }

    /// Stops logging the writes to `key` until ``resumeLogging(_:key:)``, which must run in the
    /// same transaction: for a write that sets the log of each record it writes itself, and so
    /// saves the triggers' insert of every record and the delete that would undo it. No other
    /// connection can see the pause: it commits only with the resume, or rolls back.
    ///
    /// - Returns: Whether `key` was logged, and so must be resumed.
    package static func pauseLogging(_ db: Database, key: String) throws -> Bool {
        try db.cachedStatement(sql: "DELETE FROM amber_sync_collections WHERE key = ?").execute(arguments: [key])
        return db.changesCount > 0
    }

    /// Logs the writes to `key` again after ``pauseLogging(_:key:)``, without logging the records
    /// it holds (as a first ``log(_:key:)`` does).
    package static func resumeLogging(_ db: Database, key: String) throws {
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO amber_sync_collections (key) VALUES (?)")
            .execute(arguments: [key])
    }

    /// Whether any record of `key` is logged as written.
    package static func hasWritten(_ db: Database, key: String) throws -> Bool {
        try Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM amber_sync_pending WHERE key = ?)", arguments: [key]) ?? false
    }

    /// Logs record `id` of `key` as written (`true`) or marks it unchanged (`false`).
    package static func setWritten(_ db: Database, key: String, id: String, _ written: Bool) throws {
        if written {
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO amber_sync_pending (key, id) VALUES (?, ?)")
                .execute(arguments: [key, id])
        } else {
            try db.cachedStatement(sql: "DELETE FROM amber_sync_pending WHERE key = ? AND id = ?")
                .execute(arguments: [key, id])
        }
    }

    /// Logs as written the records a query selects, as `(key, id)` rows.
    package static func setWritten(_ db: Database, selectedBy query: String, arguments: StatementArguments = []) throws
    {
        try db.execute(sql: "INSERT OR IGNORE INTO amber_sync_pending (key, id) \(query)", arguments: arguments)
    }

    /// How many records are logged as written: of every key, or of `keys` only.
    package static func writtenCount(_ db: Database, keys: [String]? = nil) throws -> Int {
        guard let keys else { return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM amber_sync_pending") ?? 0 }
        guard !keys.isEmpty else { return 0 }
        let placeholders = keys.map { _ in "?" }.joined(separator: ", ")
        return try Int.fetchOne(
            db, sql: "SELECT COUNT(*) FROM amber_sync_pending WHERE key IN (\(placeholders))",
            arguments: StatementArguments(keys)) ?? 0
    }
}
