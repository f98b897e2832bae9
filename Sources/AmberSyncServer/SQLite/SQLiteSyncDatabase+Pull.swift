import AmberLock
import AmberSyncProtocol
import Foundation
import GRDB

extension SQLiteSyncDatabase {
    /// The user's changes after `cursor`, in version order, each record once in its latest state.
    ///
    /// Rows are read one at a time and the page ends once `maximumBytes` of values are read, so
    /// the memory a pull takes is bounded by that, not by `limit` times the largest record.
    ///
    /// - Parameters:
    ///   - user: The user whose records to read.
    ///   - cursor: The last version the client has seen; 0 for everything.
    ///   - limit: The most changes to return; values above `SyncLimits.maximumPullLimit` count as it.
    ///   - maximumBytes: The most bytes of record values to return; the page holds at least one change.
    /// - Returns: The changes, the next cursor and whether more changes follow.
    /// - Throws: ``SyncServerError/cursorExpired(cursor:prunedThrough:)`` when deletions after
    ///   `cursor` were pruned.
    public func pull(for user: SyncUser, after cursor: Int64, limit: Int, maximumBytes: Int) async throws
        -> PullResponse
    {
        let limit = min(max(limit, 1), SyncLimits.maximumPullLimit)
        return try await pool.read { db in
            let prunedVersion =
                try Int64.fetchOne(
                    db.cachedStatement(sql: "SELECT pruned_version FROM amber_sync_users WHERE id = ?"),
                    arguments: [user.id]) ?? 0
            if cursor > 0, cursor < prunedVersion {
                throw SyncServerError.cursorExpired(cursor: cursor, prunedThrough: prunedVersion)
            }
            let rows = try Row.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT collection, id, version, value FROM amber_sync_records
                        WHERE user_id = ? AND version > ? ORDER BY version LIMIT ?
                        """),
                arguments: [user.id, cursor, limit + 1]
            )
            var changes: [RecordChange] = []
            var bytes = 0
            var hasMore = false
            while let row = try rows.next() {
                let valueText: String? = row[3]
                let size = valueText?.utf8.count ?? 0
                guard changes.count < limit, changes.isEmpty || bytes + size <= maximumBytes else {
                    hasMore = true
                    break
                }
                bytes += size
                changes.append(
                    RecordChange(
                        collection: row[0],
                        id: row[1],
                        version: row[2],
                        // The text as stored, checked when pushed: never read here.
                        record: valueText.map(JSONRecord.init(unchecked:))
                    ))
            }
            // A pull from 0 says how many records it lists in all, for the client's progress.
            let total =
                cursor == 0 && hasMore
                ? try Int64.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM amber_sync_records WHERE user_id = ?", arguments: [user.id])
                : cursor == 0 ? Int64(changes.count) : nil
            return PullResponse(
                changes: changes, cursor: changes.last?.version ?? cursor, hasMore: hasMore, total: total)
        }
    }

    /// The database's identity, made when its tables were created.
    public func databaseID() async throws -> String {
        if let known = identity.withLock({ $0 }) { return known }
        let id = try await pool.read { db in
            try String.fetchOne(db, sql: "SELECT id FROM amber_sync_database") ?? ""
        }
        identity.withLock { $0 = id }
        return id
    }

    /// The tag of the push that made `version`, or `nil` when the user's history does not reach it.
    public func historyTag(for user: SyncUser, at version: Int64) async throws -> String? {
        try await historyTags(for: user, at: [version])[0]
    }

    /// The tags of the push that made each of `versions`, read in one transaction; `nil` where
    /// the user's history does not reach it.
    public func historyTags(for user: SyncUser, at versions: [Int64]) async throws -> [String?] {
        try await pool.read { db in
            let statement = try db.cachedStatement(
                sql: "SELECT tag FROM amber_sync_history WHERE user_id = ? AND version >= ? ORDER BY version LIMIT 1")
            return try versions.map { version in
                try String.fetchOne(statement, arguments: [user.id, version])
            }
        }
    }

    /// Forgets deleted records whose deletion is older than `date`, and remembers, per user, the
    /// newest version it forgot so that older cursors are told to pull again from 0.
    ///
    /// - Parameter date: Deletions before this moment are forgotten.
    /// - Returns: How many deleted records were forgotten.
    public func prune(deletionsOlderThan date: Date) async throws -> Int {
        let cutoff = date.timeIntervalSince1970
        return try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE amber_sync_users SET pruned_version = MAX(pruned_version, (
                        SELECT MAX(version) FROM amber_sync_records
                        WHERE amber_sync_records.user_id = amber_sync_users.id AND value IS NULL AND changed_at < :cutoff
                    ))
                    WHERE id IN (SELECT user_id FROM amber_sync_records WHERE value IS NULL AND changed_at < :cutoff)
                    """,
                arguments: ["cutoff": cutoff]
            )
            try db.execute(
                sql: "DELETE FROM amber_sync_records WHERE value IS NULL AND changed_at < ?", arguments: [cutoff])
            return db.changesCount
        }
    }
}
