import Foundation
import GRDB
import GRDBSQLite

/// The statement that upserts a batch's records, bound and stepped through SQLite's C API.
///
/// Through GRDB, each record cost a `StatementArguments` of five boxed values, a `String` made
/// from the record's bytes (a copy and a UTF-8 check), and GRDB's checks around each step:
/// together about as much of a large batch's write as SQLite's own insert. Here the key and the
/// sequence number are bound once for the batch; each record binds its id, position and bytes
/// (borrowed, not copied: SQLite reads them during the step) and steps once.
///
/// The statement is GRDB's cached statement for a text no other code runs, so GRDB never finds
/// it half bound: ``finish()`` resets it and clears its bindings.
struct RecordUpsert {
    static let sql = """
        INSERT INTO amber_records (key, id, position, sequence, value) VALUES (?1, ?2, ?3, ?4, ?5)
        ON CONFLICT (key, id) DO UPDATE SET sequence = excluded.sequence, value = excluded.value
        """

    private let statement: SQLiteStatement

    /// Prepares (or takes from GRDB's cache) the statement, bound to `key` and `sequence`.
    init(_ db: Database, key: String, sequence: Int64) throws {
        statement = try db.cachedStatement(sql: Self.sql).sqliteStatement
        finish()
        do {
            try check(sqlite3_bind_text(statement, 1, key, -1, SQLiteBinding.transient))
            try check(sqlite3_bind_int64(statement, 4, sequence))
        } catch {
            finish()
            throw error
        }
    }

    /// Upserts one record: a new one at `position`; an existing one keeps its position.
    ///
    /// - Throws: `DatabaseError` with SQLite's code and message when the step fails.
    func upsert(id: String, position: Int64, value: Data) throws {
        var id = id
        try id.withUTF8 { id in
            try value.withUnsafeBytes { value in
                try check(bindText(2, UnsafeRawBufferPointer(id)))
                try check(sqlite3_bind_int64(statement, 3, position))
                try check(bindText(5, UnsafeRawBufferPointer(value)))
                let code = sqlite3_step(statement)
                // The borrowed bytes must not outlive this closure: reset ends the step's use of them.
                guard code == SQLITE_DONE else {
                    let error = failure(code)
                    sqlite3_reset(statement)
                    throw error
                }
                try check(sqlite3_reset(statement))
            }
        }
    }

    /// Leaves the statement reset with no bindings, as GRDB's cache expects none.
    func finish() {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    /// Binds `bytes` as text without copying them; an empty text is bound as `''`, not `NULL`.
    /// A text longer than SQLite's lengths can say is `SQLITE_TOOBIG`, as SQLite answers one over
    /// its own limit.
    private func bindText(_ index: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            return sqlite3_bind_text(statement, index, "", 0, SQLiteBinding.transient)
        }
        guard let count = Int32(exactly: bytes.count) else { return SQLITE_TOOBIG }
        return sqlite3_bind_text(
            statement, index, base.assumingMemoryBound(to: CChar.self), count, SQLiteBinding.static)
    }

    private func check(_ code: Int32) throws {
        guard code == SQLITE_OK else { throw failure(code) }
    }

    private func failure(_ code: Int32) -> DatabaseError {
        let message = sqlite3_db_handle(statement).map { String(cString: sqlite3_errmsg($0)) }
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: Self.sql)
    }
}

/// SQLite's destructor arguments for a bound text: `static` borrows it, `transient` copies it.
enum SQLiteBinding {
    static let `static`: sqlite3_destructor_type? = nil
    static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
}
