import Amber
import Foundation
import GRDB

/// The SQLite transaction a store write runs in, handed to the write's body by
/// `SQLiteStorageKey.writeInTransaction(_:)`: for code of this package that keeps its own tables
/// in step with the store's records (sync's bookkeeping). It reads them in the transaction the
/// store resolves its write in, and writes after the store's records.
///
/// Valid only while the body runs: the transaction commits or rolls back right after.
package final class SQLiteWriteContext {
    /// The open transaction.
    package let database: Database
    /// The key being written.
    package let key: String
    /// The key's write sequence before this write: the highest sequence number stamped on its
    /// records and deletions (``SQLiteStorage/writeSequence(_:key:)``).
    package let sequence: Int64
    private var afterRecords: [(Database, _ written: StorageBatch) throws -> Void] = []
    /// The records the store wrote and deleted, once written.
    var written = StorageBatch()

    init(database: Database, key: String, sequence: Int64) {
        self.database = database
        self.key = key
        self.sequence = sequence
    }

    /// Runs `work` in the same transaction once the store's records are written (also when the
    /// store writes none), before the transaction commits, with the records the store wrote (their
    /// texts as stored) and deleted. If it throws, nothing is committed.
    package func afterRecordsWritten(_ work: @escaping (Database, _ written: StorageBatch) throws -> Void) {
        afterRecords.append(work)
    }

    func runAfterRecords() throws {
        for work in afterRecords { try work(database, written) }
    }
}
