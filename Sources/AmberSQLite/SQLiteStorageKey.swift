import Amber
import AmberLock
import Foundation
import GRDB

/// The records of one key in an ``SQLiteStorage``.
///
/// Every write takes the key's next sequence number (one more than the highest stamped on its
/// records and deletions, read from their indexes) and stamps the records it upserts and the
/// deletions it records with it; a store reads what changed after the last number it saw.
/// Deletion rows are kept for a while (see ``SQLiteStorage/deletionHorizon``) so that a store
/// behind by fewer writes reads only the changes; one further behind reloads the key.
final class SQLiteStorageKey: TransactionalStorageKeyHandle, StoragePlace, Sendable {
    private let storage: SQLiteStorage
    private let key: String
    /// The highest sequence number whose changes this key has (loaded, written or reported).
    private let lastSequence = LockedValue<Int64>(0)

    init(storage: SQLiteStorage, key: String) throws {
        self.storage = storage
        self.key = key
    }

    var place: String { storage.path }

    func load() throws -> [StoredRecord] {
        do {
            return try storage.database.read { db in
                let sequence = try self.sequence(db)
                let records = try self.allRecords(db)
                lastSequence.withLock { $0 = sequence }
                return records
            }
        } catch {
            throw StoreError.unreadableStorage(path: storage.path, reason: SQLiteStorage.reason(error))
        }
    }

    func write(_ body: (ExternalChange?) throws -> StorageBatch) throws {
        try writeInTransaction { external, _ in try body(external) }
    }

    /// ``write(_:)``, whose body also receives the SQLite transaction the write runs in.
    package func writeInTransaction(_ body: (ExternalChange?, SQLiteWriteContext) throws -> StorageBatch) throws {
        var bodyError: (any Error)?
        var written: Int64?
        // Asked here: inside the database access, the code runs on GRDB's queue.
        let onMainActor = MainQueue.isCurrent
        // Another connection's write lock held by this very thread would never be released.
        guard !WriterThreads.isWriting(storage.path) else {
            throw StoreError.writeFailed(path: storage.path, key: key, reason: WriterThreads.nestedWriteReason)
        }
        do {
            try storage.database.unsafeReentrantWrite { db in
                guard !db.isInsideTransaction else {
                    throw StoreError.writeFailed(path: storage.path, key: key, reason: WriterThreads.nestedWriteReason)
                }
                try storage.withWriteTimeout(db, short: onMainActor) {
                    // One immediate transaction: from reading other writers' changes to writing
                    // ours, no other connection can commit.
                    try db.inTransaction(.immediate) {
                        try WriterThreads.writing(storage.path) {
                            let current = try self.sequence(db)
                            let external = try self.changes(db, current: current)
                            let context = SQLiteWriteContext(database: db, key: key, sequence: current)
                            let batch: StorageBatch
                            do {
                                batch = try body(external, context)
                            } catch {
                                bodyError = error
                                throw error
                            }
                            if !batch.isEmpty {
                                try self.write(batch, sequence: current + 1, db)
                                written = current + 1
                                context.written = batch
                            }
                            try context.runAfterRecords()
                            return .commit
                        }
                    }
                }
            }
            // Only once committed: a failed commit must not hide other writers' changes.
            if let written { lastSequence.withLock { $0 = written } }
            storage.didWrite()
        } catch {
            if let bodyError { throw bodyError }
            if let error = error as? StoreError { throw error }
            throw StoreError.writeFailed(path: storage.path, key: key, reason: SQLiteStorage.reason(error))
        }
    }

    private func write(_ batch: StorageBatch, sequence: Int64, _ db: Database) throws {
        try Self.refuseNUL(batch, storage: storage, key: key)
        if !batch.deletions.isEmpty {
            let delete = try db.cachedStatement(sql: "DELETE FROM amber_records WHERE key = ? AND id = ?")
            let tombstone = try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO amber_deletions (key, id, sequence) VALUES (?, ?, ?)")
            for index in ByteOrder.sortedIndices(batch.deletions) {
                let id = batch.deletions[index]
                try delete.execute(arguments: [key, id])
                try tombstone.execute(arguments: [key, id, sequence])
            }
        }
        if !batch.upserts.isEmpty {
            let last =
                try Int64.fetchOne(
                    db.cachedStatement(sql: "SELECT MAX(position) FROM amber_records WHERE key = ?"),
                    arguments: [key]) ?? 0
            // An existing record keeps its position: the conflict clause leaves it alone.
            let upsert = try RecordUpsert(db, key: key, sequence: sequence)
            defer { upsert.finish() }
            // Positions in the order the records were added; written in the order of their ids,
            // which is the table's: a large batch of random ids then fills each B-tree page in
            // one go instead of coming back to it, which writes each page once even when the
            // page cache cannot hold them all.
            for index in ByteOrder.sortedIndices(batch.upserts.map(\.id)) {
                let record = batch.upserts[index]
                try upsert.upsert(id: record.id, position: last + Int64(index) + 1, value: record.data)
            }
        }
        if sequence % SQLiteStorage.deletionPruningInterval == 0 { try pruneDeletions(before: sequence, db) }
    }

    /// Refuses a batch naming a record whose id holds U+0000: GRDB binds text as a C string,
    /// which ends there, so such an id would be written whole by the store's batches but read,
    /// deleted and compared cut short, as the id of another record (removing `"a\u{0}b"`
    /// removed `"a"`). The sync protocol refuses such ids too.
    private static func refuseNUL(_ batch: StorageBatch, storage: SQLiteStorage, key: String) throws {
        let named =
            batch.deletions.first(where: { $0.utf8.contains(0) })
            ?? batch.upserts.first(where: { $0.id.utf8.contains(0) })?.id
        guard let id = named else { return }
        throw StoreError.writeFailed(
            path: storage.path, key: key,
            reason: "the record id \(id.debugDescription) holds U+0000, which SQLite storage cannot keep")
    }

    /// Forgets deletion rows older than the horizon, and records the horizon: a store that last
    /// looked before it cannot tell what was deleted, and reloads the key.
    private func pruneDeletions(before sequence: Int64, _ db: Database) throws {
        let horizon = sequence - SQLiteStorage.deletionHorizon
        guard horizon > 0 else { return }
        try db.execute(
            sql: "DELETE FROM amber_deletions WHERE key = ? AND sequence <= ?", arguments: [key, horizon])
        try db.execute(
            sql: "INSERT OR REPLACE INTO amber_meta (name, value) VALUES (?, ?)",
            arguments: [SQLiteStorage.horizonName(key), horizon])
    }

    func startWatching(_ signal: @escaping @Sendable () -> Void) {
        storage.watcher.add(ObjectIdentifier(self), signal: signal)
    }

    func stopWatching() {
        storage.watcher.remove(ObjectIdentifier(self))
    }

    func externalChanges() throws -> ExternalChange? {
        try storage.database.read { db in
            try self.changes(db, current: try self.sequence(db))
        }
    }

    /// What other writers committed after the last sequence number this key saw, up to
    /// `current`, which becomes the last seen.
    private func changes(_ db: Database, current: Int64) throws -> ExternalChange? {
        let since = lastSequence.withLock { $0 }
        guard current > since else { return nil }
        defer { lastSequence.withLock { $0 = current } }
        let horizon =
            try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT value FROM amber_meta WHERE name = ?"),
                arguments: [SQLiteStorage.horizonName(key)]) ?? 0
        if since < horizon { return .snapshot(try allRecords(db)) }
        let deletions = try String.fetchAll(
            db.cachedStatement(sql: "SELECT id FROM amber_deletions WHERE key = ? AND sequence > ?"),
            arguments: [key, since])
        let upserts = try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT id, value FROM amber_records WHERE key = ? AND sequence > ? ORDER BY position"),
            arguments: [key, since]
        ).map { StoredRecord(id: $0[0], data: Data(($0[1] as String).utf8)) }
        guard !deletions.isEmpty || !upserts.isEmpty else { return nil }
        return .records(upserts: upserts, deletions: deletions)
    }

    private func allRecords(_ db: Database) throws -> [StoredRecord] {
        try Array(
            Row.fetchCursor(
                db, sql: "SELECT id, value FROM amber_records WHERE key = ? ORDER BY position", arguments: [key]
            ).map { StoredRecord(id: $0[0], data: Data(($0[1] as String).utf8)) })
    }

    private func sequence(_ db: Database) throws -> Int64 {
        try SQLiteStorage.writeSequence(db, key: key)
    }
}

extension SQLiteStorage {
    /// The highest sequence number of `key`, from the tails of two indexes: every write of the
    /// key, from any process, stamps its records or deletions with a higher one, so an equal
    /// number read later in another transaction means that no write of the key came between.
    package static func writeSequence(_ db: Database, key: String) throws -> Int64 {
        let statement = try db.cachedStatement(
            sql: """
                SELECT MAX(sequence) FROM (
                    SELECT MAX(sequence) AS sequence FROM amber_records WHERE key = ?
                    UNION ALL SELECT MAX(sequence) FROM amber_deletions WHERE key = ?)
                """)
        return try Int64.fetchOne(statement, arguments: [key, key]) ?? 0
    }
}
