import AmberSQLite
import AmberSyncProtocol
import Foundation
import GRDB

/// The tables sync keeps beside the stores' records in the storage file.
///
/// - The change log of `AmberSQLite` (`SQLiteChangeLog`) on every synced key: its written
///   records are the pending ones, those written locally since they last agreed with the server.
///   Its triggers log every write, in the write's own transaction, whichever process makes it (an
///   app extension that never creates a client included).
/// - `amber_sync_base`: per record, the server's version and value they last agreed on: the base
///   of three-way merges, and what local changes are measured against. A base whose value is the
///   text the store holds for the record (after a pull or a push, most are) keeps no copy of it:
///   `same` is 1 and `value` is `NULL`, and triggers on `amber_records` copy the text into the
///   base before the store's record changes or goes, whichever process writes it.
/// - `amber_sync_outbox`: mutations sent and not yet answered, sent again as they were after a crash;
///   a row holds a run of one collection's mutations (`MutationRun`), keyed by its first mutation id.
///   A run planned from the store's records (`shared` is 1) is written without their values: each
///   is the text the store held when it was planned, which the store still holds, or else
///   `amber_sync_outbox_kept` does: triggers on `amber_records` copy a record's text there before it
///   changes or goes, while a run of its collection is unanswered.
/// - `amber_sync_answers`: push answers received and not yet applied, applied first after a crash:
///   the next batch goes to the server while the client applies the answer to the one before, and
///   the server then forgets that answer.
/// - `amber_sync_meta`: the client id, the pull cursor, the next mutation id.
enum SyncSchema {
    static func prepare(_ db: Database) throws {
        try SQLiteChangeLog.prepare(db)
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS amber_sync_meta (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS amber_sync_base (
                    key TEXT NOT NULL, id TEXT NOT NULL, version INTEGER NOT NULL, value TEXT,
                    same INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (key, id)) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS amber_sync_outbox (
                    mutation_id INTEGER PRIMARY KEY NOT NULL, collection TEXT NOT NULL, body TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS amber_sync_answers (
                    first_mutation_id INTEGER PRIMARY KEY NOT NULL, cursor INTEGER NOT NULL, body TEXT NOT NULL);
                """)
        // A file whose bases all hold their text (written before bases could share the record's).
        let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(amber_sync_base)").map { $0["name"] as String }
        if !columns.contains("same") {
            try db.execute(sql: "ALTER TABLE amber_sync_base ADD COLUMN same INTEGER NOT NULL DEFAULT 0")
        }
        // A file whose outbox rows all hold their values (written before runs could share them).
        let outboxColumns = try Row.fetchAll(db, sql: "PRAGMA table_info(amber_sync_outbox)").map {
            $0["name"] as String
        }
        if !outboxColumns.contains("shared") {
            try db.execute(sql: "ALTER TABLE amber_sync_outbox ADD COLUMN shared INTEGER NOT NULL DEFAULT 0")
        }
        try db.execute(
            sql: """
                CREATE INDEX IF NOT EXISTS amber_sync_outbox_shared ON amber_sync_outbox (collection) WHERE shared = 1;
                CREATE TABLE IF NOT EXISTS amber_sync_outbox_kept (
                    key TEXT NOT NULL, id TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (key, id)) WITHOUT ROWID;
                CREATE TRIGGER IF NOT EXISTS amber_sync_outbox_keep_update AFTER UPDATE OF value ON amber_records
                    WHEN OLD.value IS NOT NEW.value
                        AND EXISTS (SELECT 1 FROM amber_sync_outbox WHERE collection = OLD.key AND shared = 1)
                    BEGIN INSERT INTO amber_sync_outbox_kept (key, id, value) SELECT OLD.key, OLD.id, OLD.value
                        WHERE NOT EXISTS (SELECT 1 FROM amber_sync_outbox_kept WHERE key = OLD.key AND id = OLD.id); END;
                CREATE TRIGGER IF NOT EXISTS amber_sync_outbox_keep_delete AFTER DELETE ON amber_records
                    WHEN EXISTS (SELECT 1 FROM amber_sync_outbox WHERE collection = OLD.key AND shared = 1)
                    BEGIN INSERT INTO amber_sync_outbox_kept (key, id, value) SELECT OLD.key, OLD.id, OLD.value
                        WHERE NOT EXISTS (SELECT 1 FROM amber_sync_outbox_kept WHERE key = OLD.key AND id = OLD.id); END;
                """)
        try db.execute(
            sql: """
                CREATE TRIGGER IF NOT EXISTS amber_sync_base_keep_update AFTER UPDATE OF value ON amber_records
                    WHEN OLD.value IS NOT NEW.value
                    BEGIN UPDATE amber_sync_base SET value = OLD.value, same = 0
                        WHERE key = OLD.key AND id = OLD.id AND same = 1; END;
                CREATE TRIGGER IF NOT EXISTS amber_sync_base_keep_delete AFTER DELETE ON amber_records
                    BEGIN UPDATE amber_sync_base SET value = OLD.value, same = 0
                        WHERE key = OLD.key AND id = OLD.id AND same = 1; END;
                """)
    }

    /// A base's value in a query that joins `amber_sync_base` as `b` and `amber_records` as `r`
    /// on the same record.
    static let baseValue = "CASE WHEN b.same = 1 THEN r.value ELSE b.value END"

    // MARK: Kept answers

    /// A push's answer, kept until it is applied, with the cursor the push was sent with.
    struct KeptAnswer {
        let firstMutationID: Int64
        let cursor: Int64
        let response: PushResponse
    }

    /// Keeps the answer to a push whose first mutation is `firstMutationID`, sent with `cursor`.
    static func keepAnswer(_ db: Database, firstMutationID: Int64, cursor: Int64, _ response: PushResponse) throws {
        try keepAnswer(db, firstMutationID: firstMutationID, cursor: cursor, text: JSONWriter.text(of: response))
    }

    /// Keeps the answer to a push as the server sent it: `text`, which a ``PushResponse`` was
    /// read from (so it reads back), rather than that response written again.
    static func keepAnswer(_ db: Database, firstMutationID: Int64, cursor: Int64, text: String) throws {
        try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO amber_sync_answers (first_mutation_id, cursor, body) VALUES (?, ?, ?)"
        ).execute(arguments: [firstMutationID, cursor, text])
    }

    /// The answers kept and not yet applied, oldest first.
    static func keptAnswers(_ db: Database) throws -> [KeptAnswer] {
        try Row.fetchAll(
            db.cachedStatement(sql: "SELECT first_mutation_id, cursor, body FROM amber_sync_answers ORDER BY 1")
        ).map {
            row in
            let body: String = row[2]
            return KeptAnswer(
                firstMutationID: row[0], cursor: row[1], response: try PushResponse(jsonBytes: body.utf8))
        }
    }

    /// Forgets a kept answer once it is applied.
    static func dropAnswer(_ db: Database, firstMutationID: Int64) throws {
        try db.cachedStatement(sql: "DELETE FROM amber_sync_answers WHERE first_mutation_id = ?").execute(
            arguments: [firstMutationID])
    }

    // MARK: Meta

    // The statements a sync runs every time are GRDB's cached ones: `execute(sql:)` and
    // `fetchOne(_:sql:)` prepare the statement again at each call.
    static func meta(_ db: Database, _ name: String) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT value FROM amber_sync_meta WHERE name = ?"), arguments: [name])
    }

    static func setMeta(_ db: Database, _ name: String, _ value: String) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO amber_sync_meta (name, value) VALUES (?, ?)").execute(
            arguments: [name, value])
    }

    static func clientID(_ db: Database) throws -> String {
        if let id = try meta(db, "clientID") { return id }
        let id = UUID().uuidString
        try setMeta(db, "clientID", id)
        return id
    }

    /// A new client id, for a file whose id another device turned out to use too (a copy of
    /// this file); the mutations sent under the old id and not answered are dropped, to be
    /// planned again from the pending records.
    static func renewClientID(_ db: Database) throws -> String {
        let id = UUID().uuidString
        try setMeta(db, "clientID", id)
        try clearOutbox(db)
        return id
    }

    /// Drops every mutation sent and not answered, and the texts kept for them.
    static func clearOutbox(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM amber_sync_outbox; DELETE FROM amber_sync_outbox_kept")
    }

    static func cursor(_ db: Database) throws -> Int64 {
        try meta(db, "cursor").flatMap(Int64.init) ?? 0
    }

    /// The tag the server gave with the cursor, naming its history there.
    static func cursorTag(_ db: Database) throws -> String? {
        try meta(db, "cursorTag")
    }

    static func setCursor(_ db: Database, _ cursor: Int64, tag: String? = nil) throws {
        try setMeta(db, "cursor", String(cursor))
        if let tag {
            try setMeta(db, "cursorTag", tag)
        } else {
            try db.execute(sql: "DELETE FROM amber_sync_meta WHERE name = 'cursorTag'")
        }
    }

    /// The identity of the server database this file last synced with.
    static func databaseID(_ db: Database) throws -> String? {
        try meta(db, "databaseID")
    }

    /// Prepares a pull from 0 against a server whose history is not the one this file followed
    /// (its database was restored from a backup, or replaced).
    ///
    /// The bases keep their values, the last agreed state of each record, and their versions
    /// turn negative: versions of a history the server no longer has. Every record the server
    /// lists is taken in (see `TypedCollection.apply`); mutations sent and not answered are
    /// dropped, to be planned again. The file stays in this state, across restarts, until
    /// ``finishHistoryReset(_:)`` after the pull.
    static func forgetHistory(_ db: Database, databaseID: String?) throws {
        try db.execute(sql: "UPDATE amber_sync_base SET version = -version WHERE version > 0")
        try clearOutbox(db)
        try db.execute(sql: "DELETE FROM amber_sync_answers")
        try setCursor(db, 0)
        try setMeta(db, "historyReset", "1")
        if let databaseID {
            try setMeta(db, "databaseID", databaseID)
        } else {
            try db.execute(sql: "DELETE FROM amber_sync_meta WHERE name = 'databaseID'")
        }
    }

    /// Whether a pull from 0 after ``forgetHistory(_:databaseID:)`` has not finished yet.
    static func isResettingHistory(_ db: Database) throws -> Bool {
        try meta(db, "historyReset") != nil
    }

    /// After ``forgetHistory(_:databaseID:)`` and a whole pull from 0: the records the server
    /// did not list lose their base and become pending, so that they are pushed back as new.
    static func finishHistoryReset(_ db: Database) throws {
        try SQLiteChangeLog.setWritten(db, selectedBy: "SELECT key, id FROM amber_sync_base WHERE version < 0")
        try db.execute(
            sql: """
                DELETE FROM amber_sync_base WHERE version < 0;
                DELETE FROM amber_sync_meta WHERE name = 'historyReset';
                """)
    }

    /// Hands out the next `count` mutation ids.
    static func takeMutationIDs(_ db: Database, count: Int) throws -> Int64 {
        let next = try meta(db, "nextMutationID").flatMap(Int64.init) ?? 1
        try setMeta(db, "nextMutationID", String(next + Int64(count)))
        return next
    }

    // MARK: Collections

    /// Registers `key` for sync; the first time, marks its existing records pending and restarts
    /// the pull from the beginning, so that both sides get what the other has.
    ///
    /// - Returns: Whether the key was new.
    @discardableResult
    static func register(_ db: Database, key: String) throws -> Bool {
        guard try SQLiteChangeLog.log(db, key: key) else { return false }
        try setCursor(db, 0)
        return true
    }

    // MARK: Base values

    struct Base {
        let version: Int64
        let value: JSONRecord?
    }

    /// The bases of those of records `ids` of `key` that have one, read in one statement, in the
    /// order of `ids` (the table's order when they are sorted by `ByteOrder.sorted(_:)`).
    static func bases(_ db: Database, key: String, ids: [String]) throws -> [ExactText: Base] {
        var bases: [ExactText: Base] = [:]
        let rows = try Row.fetchCursor(
            db.cachedStatement(
                sql: """
                    SELECT j.value, b.version, \(baseValue) FROM json_each(?1) j
                    CROSS JOIN amber_sync_base b ON b.key = ?2 AND b.id = j.value
                    LEFT JOIN amber_records r ON b.same = 1 AND r.key = ?2 AND r.id = j.value
                    """),
            arguments: [jsonArray(ids), key])
        while let row = try rows.next() {
            let text: String? = row[2]
            // Written by `setBase` from a record checked when it arrived.
            bases[ExactText(row[0])] = Base(version: row[1], value: text.map(JSONRecord.init(unchecked:)))
        }
        return bases
    }

    /// `strings` as a JSON array, for `json_each`.
    private static func jsonArray(_ strings: [String]) -> String {
        var writer = JSONWriter(capacity: strings.count * 40)
        writer.write(strings)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The texts the store holds for those of records `ids` of `key` that it has, read in one
    /// statement.
    static func storedTexts(_ db: Database, key: String, ids: [String]) throws -> [ExactText: String] {
        var texts: [ExactText: String] = [:]
        let rows = try Row.fetchCursor(
            db.cachedStatement(
                sql: """
                    SELECT j.value, r.value FROM json_each(?) j
                    CROSS JOIN amber_records r ON r.key = ? AND r.id = j.value
                    """),
            arguments: [jsonArray(ids), key])
        while let row = try rows.next() {
            texts[ExactText(row[0])] = row[1]
        }
        return texts
    }

    /// Writes bases (`nil`: none) in the order of their ids, which is the table's: a large
    /// batch of random ids then fills each B-tree page in one go instead of coming back to it.
    ///
    /// Written after the store's records, in the same transaction: a base whose value is the
    /// text the store now holds for its record shares it (see ``setBase(_:key:id:version:value:)``).
    ///
    /// - Parameter shared: Those of `bases` known to hold the text the store holds for their
    ///   record: written without it, ``sharedBasesPerStatement`` to a statement.
    static func writeBases(_ db: Database, key: String, _ bases: [ExactText: Base?], shared: Set<ExactText> = [])
        throws
    {
        // `[[id, version], ...]` of the shared ones, for `json_each`.
        var sharedRows = SharedRows(key: key)
        // The ids alone are sorted: moving whole entries would copy their values at every step.
        let ids = Array(bases.keys)
        for id in ByteOrder.sortedIndices(ids.map(\.text)).map({ ids[$0] }) {
            if let base = bases[id] ?? nil {
                if shared.contains(id) {
                    try sharedRows.append(id.text, version: base.version, db)
                } else {
                    try setBase(db, key: key, id: id.text, version: base.version, value: base.value)
                }
            } else {
                try deleteBase(db, key: key, id: id.text)
            }
        }
        try sharedRows.write(db)
    }

    /// Writes bases that share the text the store holds for their record, given in the order of
    /// their ids (the table's), each once: no sort, and no dictionary of them.
    static func writeSharedBases(_ db: Database, key: String, _ bases: [(id: String, version: Int64)]) throws {
        var sharedRows = SharedRows(key: key)
        for base in bases {
            try sharedRows.append(base.id, version: base.version, db)
        }
        try sharedRows.write(db)
    }

    /// Most shared bases one statement writes. A statement that may fail part way keeps the
    /// pages it changes in its journal (in memory) until it ends: a batch of sorted ids changes
    /// a run of pages at a time, so a statement of them holds only those pages, not the table.
    static let sharedBasesPerStatement = 1_000

    /// Shared bases, in the order of their ids, written ``sharedBasesPerStatement`` at a time.
    private struct SharedRows {
        let key: String
        var rows = JSONWriter(capacity: 64 * 64)
        var count = 0

        mutating func append(_ id: String, version: Int64, _ db: Database) throws {
            rows.raw(count == 0 ? "[[" : ",[")
            rows.write(id)
            rows.raw(",")
            rows.write(version)
            rows.raw("]")
            count += 1
            if count == SyncSchema.sharedBasesPerStatement { try write(db) }
        }

        mutating func write(_ db: Database) throws {
            guard count > 0 else { return }
            rows.raw("]")
            try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO amber_sync_base (key, id, version, value, same)
                    SELECT ?1, j.value ->> 0, j.value ->> 1, NULL, 1 FROM json_each(?2) j
                    """
            ).execute(arguments: [key, String(decoding: rows.bytes, as: UTF8.self)])
            rows = JSONWriter(capacity: 64 * 64)
            count = 0
        }
    }

    /// The text the store holds for record `id` of `key`, `nil` when it has none.
    static func storedText(_ db: Database, key: String, id: String) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT value FROM amber_records WHERE key = ? AND id = ?"), arguments: [key, id])
    }

    /// Whether any record of `key` has a base.
    static func hasBases(_ db: Database, key: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM amber_sync_base WHERE key = ?)"), arguments: [key]
        ) ?? false
    }

    static func deleteBase(_ db: Database, key: String, id: String) throws {
        try db.cachedStatement(sql: "DELETE FROM amber_sync_base WHERE key = ? AND id = ?").execute(arguments: [
            key, id,
        ])
    }

    /// Writes the base of record `id` of `key`. When `value` is the very text the store holds for
    /// the record, the base shares it instead of keeping a copy. The base of a deletion (`nil`)
    /// shares nothing, even with a record the store does not have: a record added later under
    /// that id would otherwise read as its own base, and never be pushed.
    static func setBase(_ db: Database, key: String, id: String, version: Int64, value: JSONRecord?) throws {
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO amber_sync_base (key, id, version, value, same)
                SELECT ?1, ?2, ?3, CASE WHEN r.value = ?4 THEN NULL ELSE ?4 END, coalesce(r.value = ?4, 0)
                FROM (SELECT 1) LEFT JOIN amber_records r ON r.key = ?1 AND r.id = ?2
                """
        ).execute(arguments: [key, id, version, value?.text])
    }

    /// Marks records `ids` of `key` not pending, in one statement.
    static func clearPending(_ db: Database, key: String, ids: [String]) throws {
        guard !ids.isEmpty else { return }
        try db.cachedStatement(
            sql: "DELETE FROM \(SQLiteChangeLog.table) WHERE key = ? AND id IN (SELECT value FROM json_each(?))"
        ).execute(arguments: [key, jsonArray(ids)])
    }

    /// Marks record `id` of `key` pending (written here since it last agreed with the server) or not.
    static func setPending(_ db: Database, key: String, id: String, _ pending: Bool) throws {
        try SQLiteChangeLog.setWritten(db, key: key, id: id, pending)
    }
}

/// Records as JSON objects, the form they travel in, read and written exactly: a number keeps
/// its digits, a string or key its bytes.
enum JSONCoding {
    static func object(_ data: Data) throws -> JSONObject {
        try JSONObject(jsonBytes: data)
    }

    static func data(_ object: JSONObject) throws -> Data {
        Data(JSONWriter.bytes(of: object))
    }

    static func text(_ object: JSONObject) throws -> String {
        JSONWriter.text(of: object)
    }

    /// The top-level keys whose values differ between two objects, sorted.
    static func changedKeys(from old: JSONObject, to new: JSONObject) -> [String] {
        Set(old.keys).union(new.keys).filter { old[$0] != new[$0] }.sorted()
    }
}

extension SQLiteStorage {
    /// A write to the storage's database for sync: a ``SyncError`` that `body` throws passes as
    /// it is, any other error becomes one of kind `.storage` naming the file.
    func syncWrite<R>(_ body: (Database) throws -> R) throws(SyncError) -> R {
        do {
            return try database.write(body)
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.storage, "\(path): \(error)", underlyingError: error)
        }
    }
}
