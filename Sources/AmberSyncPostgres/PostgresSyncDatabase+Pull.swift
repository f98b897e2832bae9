import AmberLock
import AmberSyncProtocol
import AmberSyncServer
import Foundation
import PostgresNIO

extension PostgresSyncDatabase {
    /// The user's changes after `cursor`, in version order, each record once in its latest state.
    ///
    /// One statement reads both the prune horizon and the changes, so a prune running at the same
    /// moment cannot remove a deletion from the page without the cursor check seeing it. The
    /// statement sums the values' sizes (without reading them) and sends only the values that
    /// fit in `maximumBytes`, so the memory a pull takes is bounded by that.
    ///
    /// - Parameters:
    ///   - user: The user whose records to read.
    ///   - cursor: The last version the client has seen; 0 for everything.
    ///   - limit: The most changes to return; values above `SyncLimits.maximumPullLimit` count as it.
    ///   - maximumBytes: The most bytes of record values to return; the page holds at least one change.
    /// - Returns: The changes, the next cursor and whether more changes follow.
    /// - Throws: `SyncServerError.cursorExpired(cursor:prunedThrough:)` when deletions after
    ///   `cursor` were pruned.
    public func pull(for user: SyncUser, after cursor: Int64, limit: Int, maximumBytes: Int) async throws
        -> PullResponse
    {
        let limit = min(max(limit, 1), SyncLimits.maximumPullLimit)
        // The page's rows are chosen before the running sum is taken over them: a plan that does
        // not read the index in order (statistics not yet analyzed, see `RecordStatistics`) then
        // keeps the first rows in a bounded sort, instead of sorting every row after the cursor.
        let rows = try await collect(
            """
            SELECT u.pruned_version, r.collection, r.id, r.version, CASE WHEN r.fits THEN r.value END, r.fits
            FROM amber_sync_users u
            LEFT JOIN LATERAL (
                SELECT collection, id, version, value,
                    row_number() OVER w = 1
                        OR sum(coalesce(octet_length(value), 0)) OVER w <= \(Int64(maximumBytes)) AS fits
                FROM (
                    SELECT collection, id, version, value FROM amber_sync_records
                    WHERE user_id = u.id AND version > \(cursor)
                    ORDER BY version LIMIT \(limit + 1)
                ) page
                WINDOW w AS (ORDER BY version ROWS UNBOUNDED PRECEDING)
            ) r ON true
            WHERE u.id = \(user.id)
            ORDER BY r.version
            """
        )
        var prunedVersion: Int64 = 0
        var changes: [RecordChange] = []
        changes.reserveCapacity(min(rows.count, limit))
        var hasMore = false
        for row in rows {
            let (pruned, collection, id, version, value, fits) = try row.decode(
                (Int64, String?, String?, Int64?, String?, Bool?).self)
            prunedVersion = pruned
            guard let collection, let id, let version else { continue }
            guard !hasMore, changes.count < limit, fits == true else {
                hasMore = true
                continue
            }
            changes.append(
                RecordChange(
                    collection: collection, id: id, version: version,
                    // The text as stored, checked when pushed: never read here.
                    record: value.map(JSONRecord.init(unchecked:))
                )
            )
        }
        if cursor > 0, cursor < prunedVersion {
            throw SyncServerError.cursorExpired(cursor: cursor, prunedThrough: prunedVersion)
        }
        // A pull from 0 says how many records it lists in all, for the client's progress.
        var total: Int64? = cursor == 0 ? Int64(changes.count) : nil
        if cursor == 0, hasMore {
            total = try await collect("SELECT count(*) FROM amber_sync_records WHERE user_id = \(user.id)")
                .first?.decode(Int64.self)
        }
        return PullResponse(
            changes: changes, cursor: changes.last?.version ?? cursor, hasMore: hasMore, total: total)
    }

    /// The database's identity, made when its tables were created.
    public func databaseID() async throws -> String {
        if let known = identity.withLock({ $0 }) { return known }
        let rows = try await collect("SELECT id FROM amber_sync_database")
        let id = try rows.first?.decode(String.self) ?? ""
        identity.withLock { $0 = id }
        return id
    }

    /// The tag of the push that made `version`, or `nil` when the user's history does not reach it.
    public func historyTag(for user: SyncUser, at version: Int64) async throws -> String? {
        try await historyTags(for: user, at: [version])[0]
    }

    /// The tags of the push that made each of `versions`, in one statement (one round trip);
    /// `nil` where the user's history does not reach it.
    public func historyTags(for user: SyncUser, at versions: [Int64]) async throws -> [String?] {
        let rows = try await collect(
            """
            SELECT (
                SELECT history.tag FROM amber_sync_history history
                WHERE history.user_id = \(user.id) AND history.version >= wanted.version
                ORDER BY history.version LIMIT 1
            ) FROM unnest(\(versions)::int8[]) WITH ORDINALITY AS wanted(version, position) ORDER BY wanted.position
            """
        )
        return try rows.map { try $0.decode(String?.self) }
    }

    /// Forgets deleted records whose deletion is older than `date`, and remembers, per user, the
    /// newest version it forgot so that older cursors are told to pull again from 0.
    ///
    /// - Parameter date: Deletions before this moment are forgotten.
    /// - Returns: How many deleted records were forgotten.
    public func prune(deletionsOlderThan date: Date) async throws -> Int {
        let logger = self.logger
        return try await transaction { connection in
            let rows = try await connection.query(
                """
                WITH forgotten AS (
                    DELETE FROM amber_sync_records WHERE value IS NULL AND changed_at < \(date)
                    RETURNING user_id, version
                ), horizons AS (
                    SELECT user_id, max(version) AS version, count(*) AS forgotten_count FROM forgotten GROUP BY user_id
                ), updated AS (
                    UPDATE amber_sync_users SET pruned_version = greatest(pruned_version, horizons.version)
                    FROM horizons WHERE amber_sync_users.id = horizons.user_id
                    RETURNING horizons.forgotten_count
                )
                SELECT coalesce(sum(forgotten_count), 0)::int8 FROM updated
                """,
                logger: logger
            ).collect()
            return Int(try rows.first?.decode(Int64.self) ?? 0)
        }
    }
}
