import Amber
import Foundation
import GRDB

/// The records of one key in an ``SQLiteStorage``.
///
/// Every write takes the key's next sequence number (one more than the highest stamped on its
/// records and deletions, read from their indexes) and stamps the records it upserts and the
/// deletions it records with it; a watcher reads what changed after the last number it saw.
/// Deletions are kept, so the numbers never go back.
final class SQLiteStorageKey: StoreStorageKey, Sendable {
    private let storage: SQLiteStorage
    private let key: String
    private let watch = LockedValue(WatchState())

    private struct WatchState {
        /// The highest sequence number whose changes this key has (loaded, written or reported).
        var lastSequence: Int64 = 0
        var dataVersion: Int64?
        var localWrites = 0
        var timer: DispatchSourceTimer?
    }

    init(storage: SQLiteStorage, key: String) throws {
        self.storage = storage
        self.key = key
    }

    func load() throws -> [StoredRecord] {
        do {
            return try storage.database.read { db in
                let sequence = try self.sequence(db)
                let records = try Row.fetchCursor(
                    db, sql: "SELECT id, value FROM amber_records WHERE key = ? ORDER BY position", arguments: [key]
                ).map { StoredRecord(id: $0[0], data: Data(($0[1] as String).utf8)) }
                let all = try Array(records)
                watch.withLock { $0.lastSequence = sequence }
                return all
            }
        } catch {
            throw StoreError.unreadableStorage(path: storage.path, reason: SQLiteStorage.reason(error))
        }
    }

    func write(_ batch: StorageBatch) throws {
        guard !batch.isEmpty else { return }
        do {
            let sequence = try storage.database.write { db -> Int64 in
                let sequence = try self.sequence(db) + 1
                if !batch.deletions.isEmpty {
                    let delete = try db.cachedStatement(sql: "DELETE FROM amber_records WHERE key = ? AND id = ?")
                    let tombstone = try db.cachedStatement(
                        sql: "INSERT OR REPLACE INTO amber_deletions (key, id, sequence) VALUES (?, ?, ?)")
                    for id in batch.deletions {
                        try delete.execute(arguments: [key, id])
                        try tombstone.execute(arguments: [key, id, sequence])
                    }
                }
                if !batch.upserts.isEmpty {
                    var position = try Int64.fetchOne(
                        db.cachedStatement(sql: "SELECT MAX(position) FROM amber_records WHERE key = ?"),
                        arguments: [key]) ?? 0
                    // An existing record keeps its position: the conflict clause leaves it alone.
                    let upsert = try db.cachedStatement(sql: """
                        INSERT INTO amber_records (key, id, position, sequence, value) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT (key, id) DO UPDATE SET sequence = excluded.sequence, value = excluded.value
                        """)
                    for record in batch.upserts {
                        position += 1
                        try upsert.execute(arguments: [
                            key, record.id, position, sequence, String(decoding: record.data, as: UTF8.self),
                        ])
                    }
                }
                return sequence
            }
            watch.withLock { state in
                // When nobody else wrote since we last looked, our own write needs no reporting.
                if state.lastSequence == sequence - 1 { state.lastSequence = sequence }
            }
            storage.localWrites.withLock { $0 += 1 }
        } catch {
            throw StoreError.writeFailed(path: storage.path, key: key, reason: SQLiteStorage.reason(error))
        }
    }

    func startWatching(_ signal: @escaping @Sendable () -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "amber.sqlite-storage.\(key)"))
        timer.schedule(deadline: .now() + .milliseconds(100), repeating: .milliseconds(100), leeway: .milliseconds(20))
        timer.setEventHandler { [weak self] in
            if self?.mayHaveExternalChanges() == true { signal() }
        }
        watch.withLock { $0.timer = timer }
        timer.resume()
    }

    func stopWatching() {
        watch.withLock { state in
            state.timer?.cancel()
            state.timer = nil
        }
    }

    /// Whether the file changed since the last look: a cheap check, made without the store's lock.
    private func mayHaveExternalChanges() -> Bool {
        let localWrites = storage.localWrites.withLock { $0 }
        let dataVersion = try? storage.database.read { try Int64.fetchOne($0, sql: "PRAGMA data_version") }
        return watch.withLock { $0.dataVersion != dataVersion || $0.localWrites != localWrites }
    }

    func externalChanges() throws -> ExternalChange? {
        let localWrites = storage.localWrites.withLock { $0 }
        return try storage.database.read { db -> ExternalChange? in
            let dataVersion = try Int64.fetchOne(db, sql: "PRAGMA data_version")
            let (since, unchanged) = watch.withLock { state in
                (state.lastSequence, state.dataVersion == dataVersion && state.localWrites == localWrites)
            }
            guard !unchanged else { return nil }
            let sequence = try self.sequence(db)
            var change: ExternalChange?
            if sequence > since {
                let deletions = try String.fetchAll(
                    db, sql: "SELECT id FROM amber_deletions WHERE key = ? AND sequence > ?", arguments: [key, since])
                let upserts = try Row.fetchAll(
                    db, sql: "SELECT id, value FROM amber_records WHERE key = ? AND sequence > ? ORDER BY position",
                    arguments: [key, since]
                ).map { StoredRecord(id: $0[0], data: Data(($0[1] as String).utf8)) }
                if !deletions.isEmpty || !upserts.isEmpty { change = .records(upserts: upserts, deletions: deletions) }
            }
            watch.withLock { state in
                state.lastSequence = max(state.lastSequence, sequence)
                state.dataVersion = dataVersion
                state.localWrites = localWrites
            }
            return change
        }
    }

    /// The highest sequence number of this key, from the tails of two indexes.
    private func sequence(_ db: Database) throws -> Int64 {
        let statement = try db.cachedStatement(sql: """
            SELECT MAX(sequence) FROM (
                SELECT MAX(sequence) AS sequence FROM amber_records WHERE key = ?
                UNION ALL SELECT MAX(sequence) FROM amber_deletions WHERE key = ?)
            """)
        return try Int64.fetchOne(statement, arguments: [key, key]) ?? 0
    }
}
