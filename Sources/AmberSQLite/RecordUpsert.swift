import AmberSQLiteStatement
import Foundation
import GRDB

/// The statement that upserts a batch's records, bound and stepped through SQLite's C API
/// (`BoundStatement`).
///
/// Through GRDB, each record cost a `StatementArguments` of five boxed values, a `String` made
/// from the record's bytes (a copy and a UTF-8 check), and GRDB's checks around each step:
/// together about as much of a large batch's write as SQLite's own insert. Here the key and the
/// sequence number are bound once for the batch; each record binds its id, position and bytes
/// (borrowed, not copied) and steps once.
struct RecordUpsert {
    static let sql = """
        INSERT INTO amber_records (key, id, position, sequence, value) VALUES (?1, ?2, ?3, ?4, ?5)
        ON CONFLICT (key, id) DO UPDATE SET sequence = excluded.sequence, value = excluded.value
        """

    private let statement: BoundStatement

    /// Prepares (or takes from GRDB's cache) the statement, bound to `key` and `sequence`.
    init(_ db: Database, key: String, sequence: Int64) throws {
        statement = try BoundStatement(db, sql: Self.sql)
        do {
            try statement.bind(copyOf: key, at: 1)
            try statement.bind(sequence, at: 4)
        } catch {
            statement.finish()
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
                try statement.bind(borrowing: UnsafeRawBufferPointer(id), at: 2)
                try statement.bind(position, at: 3)
                try statement.bind(borrowing: value, at: 5)
                try statement.step()
            }
        }
    }

    /// Leaves the statement reset with no bindings, as GRDB's cache expects none.
    func finish() {
        statement.finish()
    }
}
