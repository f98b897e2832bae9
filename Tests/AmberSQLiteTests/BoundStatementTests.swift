import AmberSQLiteStatement
import AmberTestSupport
import Foundation
import GRDB
import Testing

/// `BoundStatement`, through which the store's batches and the sync server's pushes write their
/// rows: values bound once and per row, texts byte for byte, and a failed step that leaves the
/// statement usable.
@Suite(.boundedConcurrency) struct BoundStatementTests {
    static let insert = "INSERT INTO rows (batch, n, x, text, other) VALUES (?1, ?2, ?3, ?4, ?5)"

    private func database() throws -> DatabaseQueue {
        let queue = try DatabaseQueue(path: temporaryDatabasePath())
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE rows (
                        batch TEXT NOT NULL, n INTEGER NOT NULL UNIQUE, x REAL, text TEXT NOT NULL, other TEXT)
                    """)
        }
        return queue
    }

    @Test func eachRowTakesTheValuesBoundOnceAndItsOwnBorrowedBytes() throws {
        let queue = try database()
        let texts = ["naïve 🍪 \u{0} end", "", "plain"]
        try queue.write { db in
            let statement = try BoundStatement(db, sql: Self.insert)
            defer { statement.finish() }
            try statement.bind(copyOf: "batch-1", at: 1)
            for (index, text) in texts.enumerated() {
                var text = text
                try text.withUTF8 { bytes in
                    try statement.bind(Int64(index), at: 2)
                    try statement.bind(Double(index) / 2, at: 3)
                    try statement.bind(borrowing: UnsafeRawBufferPointer(bytes), at: 4)
                    if index == 1 { try statement.bindNull(at: 5) } else { try statement.bind(copyOf: "o", at: 5) }
                    try statement.step()
                }
            }
        }
        let rows = try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT batch, n, x, hex(text), typeof(text), other FROM rows ORDER BY n")
        }
        #expect(rows.map { $0[0] as String } == ["batch-1", "batch-1", "batch-1"])
        #expect(rows.map { $0[1] as Int64 } == [0, 1, 2])
        #expect(rows.map { $0[2] as Double } == [0, 0.5, 1])
        #expect(rows.map { $0[3] as String } == texts.map { $0.utf8.map { String(format: "%02X", $0) }.joined() })
        // The empty text is a text, not NULL (the column refuses NULL).
        #expect(rows.map { $0[4] as String } == ["text", "text", "text"])
        #expect(rows.map { $0[5] as String? } == ["o", nil, "o"])
    }

    @Test func aFailedStepThrowsSQLitesErrorAndTheStatementWritesOnAfterIt() throws {
        let queue = try database()
        try queue.write { db in
            let statement = try BoundStatement(db, sql: Self.insert)
            defer { statement.finish() }
            try statement.bind(copyOf: "b", at: 1)
            try statement.bind(copyOf: "t", at: 4)
            try statement.bind(Int64(1), at: 2)
            try statement.step()
            // The same `n` again: the UNIQUE constraint refuses it.
            let error = try #require(throws: DatabaseError.self) { try statement.step() }
            #expect(error.resultCode == .SQLITE_CONSTRAINT)
            #expect(error.message?.contains("rows.n") == true)
            #expect(error.sql == Self.insert)
            try statement.bind(Int64(2), at: 2)
            try statement.step()
        }
        #expect(try queue.read { db in try Int64.fetchAll(db, sql: "SELECT n FROM rows ORDER BY n") } == [1, 2])
    }

    @Test func aMissingParameterIsAnErrorNamingTheStatement() throws {
        let queue = try database()
        try queue.write { db in
            let statement = try BoundStatement(db, sql: Self.insert)
            defer { statement.finish() }
            let error = try #require(throws: DatabaseError.self) { try statement.bind(Int64(1), at: 9) }
            #expect(error.resultCode == .SQLITE_RANGE)
            #expect(error.sql == Self.insert)
        }
    }

    /// The statement is GRDB's cached one: a `BoundStatement` starts with none of the values
    /// GRDB bound for its own run, and GRDB runs it again after `finish()`.
    @Test func theCachedStatementPassesBetweenGRDBAndABoundStatementWithNoValuesLeft() throws {
        let queue = try database()
        try queue.write { db in
            try db.cachedStatement(sql: Self.insert).execute(arguments: ["grdb", 1, 1.5, "t", "left over"])
            let statement = try BoundStatement(db, sql: Self.insert)
            try statement.bind(copyOf: "bound", at: 1)
            try statement.bind(Int64(2), at: 2)
            try statement.bind(copyOf: "t", at: 4)
            try statement.step()
            statement.finish()
            try db.cachedStatement(sql: Self.insert).execute(arguments: ["grdb", 3, nil, "t", nil])
        }
        let rows = try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT batch, x, other FROM rows ORDER BY n")
        }
        #expect(rows.map { $0[0] as String } == ["grdb", "bound", "grdb"])
        // The bound row's x and other were left unbound: NULL, not GRDB's 1.5 and "left over".
        #expect(rows[1][1] as Double? == nil)
        #expect(rows[1][2] as String? == nil)
    }

    /// A step tells how many rows it wrote: none for an insert that `ON CONFLICT DO NOTHING` skipped.
    @Test func aStepReturnsTheRowsItWrote() throws {
        let queue = try database()
        try queue.write { db in
            let statement = try BoundStatement(
                db, sql: "INSERT INTO rows (batch, n, text) VALUES ('b', ?1, 't') ON CONFLICT (n) DO NOTHING")
            defer { statement.finish() }
            try statement.bind(Int64(1), at: 1)
            #expect(try statement.step() == 1)
            #expect(try statement.step() == 0, "n = 1 is stored: skipped")
            try statement.bind(Int64(2), at: 1)
            #expect(try statement.step() == 1)
            let delete = try BoundStatement(db, sql: "DELETE FROM rows WHERE n >= ?1")
            defer { delete.finish() }
            try delete.bind(Int64(1), at: 1)
            #expect(try delete.step() == 2)
        }
    }
}
