import AmberSQLiteStatement
import AmberSyncProtocol
import Foundation
import GRDB

/// The statements that write a push's records, bound and stepped through SQLite's C API
/// (`BoundStatement`).
///
/// Through GRDB, each record cost a `StatementArguments` of eight boxed values and GRDB's checks
/// around each step: in a first push of 100,000 records, about a seventh of the server's time.
/// Here the user and the time are bound once for the push; each record binds its collection, id,
/// value and field versions (borrowed, not copied) and its two versions, and steps once.
struct RecordStore {
    /// Inserts the record, or replaces the one stored under its name.
    static let sql = insert(
        onConflict: "DO UPDATE SET version = excluded.version, created_version = excluded.created_version, "
            + "value = excluded.value, field_versions = excluded.field_versions, changed_at = excluded.changed_at")

    /// Inserts a record not stored yet; leaves a stored one alone.
    static let newSQL = insert(onConflict: "DO NOTHING")

    /// A record's row, `?1` to `?8`, as both statements insert it.
    private static func insert(onConflict: String) -> String {
        """
        INSERT INTO amber_sync_records (user_id, collection, id, version, created_version, value, field_versions, changed_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
        ON CONFLICT (user_id, collection, id) \(onConflict)
        """
    }

    private let statement: BoundStatement
    private let newStatement: BoundStatement

    /// Prepares (or takes from GRDB's cache) the statements, bound to `userID` and `time`.
    init(_ db: Database, userID: Int64, at time: TimeInterval) throws {
        statement = try BoundStatement(db, sql: Self.sql)
        do {
            newStatement = try BoundStatement(db, sql: Self.newSQL)
        } catch {
            statement.finish()
            throw error
        }
        do {
            for statement in [statement, newStatement] {
                try statement.bind(userID, at: 1)
                try statement.bind(time, at: 8)
            }
        } catch {
            finish()
            throw error
        }
    }

    /// Writes `record` as the record `id` of `collection`: its value as its text (a record stored
    /// as sent: the sent text, which the request's reading wrote as the protocol writes objects),
    /// `NULL` for a deleted one.
    ///
    /// - Throws: `DatabaseError` with SQLite's code and message when the step fails.
    func store(_ record: ServerRecord, collection: String, id: String) throws {
        try write(record, collection: collection, id: id, with: statement)
    }

    /// Writes `record` as ``store(_:collection:id:)`` does when no record `id` of `collection`
    /// is stored, not even a deletion's.
    ///
    /// - Returns: Whether it was written: `false` when a record is stored under that name.
    func storeNew(_ record: ServerRecord, collection: String, id: String) throws -> Bool {
        try write(record, collection: collection, id: id, with: newStatement) == 1
    }

    @discardableResult
    private func write(_ record: ServerRecord, collection: String, id: String, with statement: BoundStatement)
        throws -> Int
    {
        var (collection, id) = (collection, id)
        var fieldVersions = JSONText.encode(record.fieldVersions)
        return try collection.withUTF8 { collection in
            try id.withUTF8 { id in
                try fieldVersions.withUTF8 { fieldVersions in
                    try statement.bind(borrowing: UnsafeRawBufferPointer(collection), at: 2)
                    try statement.bind(borrowing: UnsafeRawBufferPointer(id), at: 3)
                    try statement.bind(record.version, at: 4)
                    try statement.bind(record.createdVersion, at: 5)
                    try statement.bind(borrowing: UnsafeRawBufferPointer(fieldVersions), at: 7)
                    guard var value = record.record?.text else {
                        try statement.bindNull(at: 6)
                        return try statement.step()
                    }
                    return try value.withUTF8 { value in
                        try statement.bind(borrowing: UnsafeRawBufferPointer(value), at: 6)
                        return try statement.step()
                    }
                }
            }
        }
    }

    /// Leaves the statements reset with no bindings, as GRDB's cache expects none.
    func finish() {
        statement.finish()
        newStatement.finish()
    }
}
