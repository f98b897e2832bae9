import GRDB
import GRDBSQLite

/// A statement of many rows, bound and stepped through SQLite's C API.
///
/// Through GRDB, each row costs a `StatementArguments` of boxed values, a `String` for each text,
/// and GRDB's checks around each step: for a batch of small rows, about as much again as
/// SQLite's own insert. Here the values common to the batch are bound once, and each row binds
/// the rest and steps once; its texts are borrowed, not copied (SQLite reads them during the
/// step, and ``step()`` resets the statement before they go).
///
/// The statement is GRDB's cached statement for its text: a text no other code runs, so GRDB
/// never finds it half bound. ``finish()`` resets it and clears its bindings; call it when the
/// batch is written (or fails).
package struct BoundStatement {
    /// The statement's SQL, named in its errors.
    package let sql: String
    private let statement: SQLiteStatement

    /// Prepares (or takes from GRDB's cache) the statement `sql`, with no bindings.
    package init(_ db: Database, sql: String) throws {
        self.sql = sql
        statement = try db.cachedStatement(sql: sql).sqliteStatement
        finish()
    }

    /// Binds `value` to the parameter at `index` (from 1).
    package func bind(_ value: Int64, at index: Int32) throws {
        try check(sqlite3_bind_int64(statement, index, value))
    }

    /// Binds `value` to the parameter at `index` (from 1).
    package func bind(_ value: Double, at index: Int32) throws {
        try check(sqlite3_bind_double(statement, index, value))
    }

    /// Binds `NULL` to the parameter at `index` (from 1).
    package func bindNull(at index: Int32) throws {
        try check(sqlite3_bind_null(statement, index))
    }

    /// Binds a copy of `text` to the parameter at `index` (from 1): for a value bound once for
    /// many steps. It is bound as GRDB binds a `String`, as a C string: up to a NUL byte, if it
    /// has one, so that it matches the same value in the statements GRDB runs. (A borrowed text,
    /// bound with its length, keeps every byte.)
    package func bind(copyOf text: String, at index: Int32) throws {
        try check(sqlite3_bind_text(statement, index, text, -1, Self.transient))
    }

    /// Binds the UTF-8 `bytes` as text to the parameter at `index` (from 1) without copying them:
    /// they must stay valid until the next ``step()``. An empty text is bound as `''`, not
    /// `NULL`; one longer than SQLite's lengths can say is `SQLITE_TOOBIG`, as SQLite answers one
    /// over its own limit.
    package func bind(borrowing bytes: UnsafeRawBufferPointer, at index: Int32) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            try check(sqlite3_bind_text(statement, index, "", 0, Self.transient))
            return
        }
        guard let count = Int32(exactly: bytes.count) else { throw failure(SQLITE_TOOBIG) }
        try check(sqlite3_bind_text(statement, index, base.assumingMemoryBound(to: CChar.self), count, nil))
    }

    /// Steps the bound statement once, to its end, and resets it (its bindings stay): the
    /// borrowed bytes are no longer read after this returns.
    ///
    /// - Returns: How many rows the step inserted, updated or deleted (`sqlite3_changes`): 0 for
    ///   an insert that `ON CONFLICT DO NOTHING` skipped.
    /// - Throws: `DatabaseError` with SQLite's code and message when the step fails.
    @discardableResult
    package func step() throws -> Int {
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE else {
            let error = failure(code)
            sqlite3_reset(statement)
            throw error
        }
        let changes = sqlite3_db_handle(statement).map { Int(sqlite3_changes($0)) } ?? 0
        try check(sqlite3_reset(statement))
        return changes
    }

    /// Leaves the statement reset with no bindings, as GRDB's cache expects none.
    package func finish() {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    /// SQLite's destructor argument that copies a bound text.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    private func check(_ code: Int32) throws {
        guard code == SQLITE_OK else { throw failure(code) }
    }

    private func failure(_ code: Int32) -> DatabaseError {
        let message = sqlite3_db_handle(statement).map { String(cString: sqlite3_errmsg($0)) }
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
    }
}
