import Amber
import Foundation
import GRDB

/// The SQLite transaction a store write runs in, for code of this package that keeps its own
/// tables in step with the store's records (sync's bookkeeping): it reads them in the same
/// transaction the store resolves its write in, and writes after the store's records.
///
/// Only the thread running the store write sees its context, while the write's body runs.
package final class SQLiteWriteContext {
    /// The open transaction.
    package let database: Database
    /// The key being written.
    package let key: String
    private var afterRecords: [(Database) throws -> Void] = []

    init(database: Database, key: String) {
        self.database = database
        self.key = key
    }

    /// Runs `work` in the same transaction once the store's records are written (also when the
    /// store writes none), before the transaction commits. If it throws, nothing is committed.
    package func afterRecordsWritten(_ work: @escaping (Database) throws -> Void) {
        afterRecords.append(work)
    }

    func runAfterRecords() throws {
        for work in afterRecords { try work(database) }
    }

    /// The context of the store write the current thread is running on the file at `path`.
    package static func current(path: String) -> SQLiteWriteContext? {
        let thread = ObjectIdentifier(Thread.current)
        return contexts.withLock { $0[Place(thread: thread, path: path)]?.context }
    }

    /// Runs `body` with `context` as the current thread's context for `path`.
    static func with<R>(_ context: SQLiteWriteContext, path: String, _ body: () throws -> R) rethrows -> R {
        let place = Place(thread: ObjectIdentifier(Thread.current), path: path)
        contexts.withLock { $0[place] = Entry(context: context) }
        defer { contexts.withLock { $0[place] = nil } }
        return try body()
    }

    private struct Place: Hashable {
        let thread: ObjectIdentifier
        let path: String
    }

    private struct Entry: @unchecked Sendable {
        // @unchecked: an entry is only read by the thread that stored it (its key holds that
        // thread), while that thread runs the write inside `with`.
        let context: SQLiteWriteContext
    }

    private static let contexts = LockedValue<[Place: Entry]>([:])
}
