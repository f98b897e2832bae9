import AmberSyncProtocol
import AmberSyncServer
import PostgresNIO

extension PostgresSyncDatabase {
    /// Applies a client's mutations, in order, in one transaction that holds the user's counter
    /// row, then tells the other server processes.
    ///
    /// A batch of any size costs the same round trips: the lock on the counter row; one query
    /// that reads the stored answers and the current records; the decisions, made in memory by
    /// `MutationResolver`; and one statement that writes records, answers and the counter.
    ///
    /// - Parameters:
    ///   - mutations: Mutations with increasing ids.
    ///   - clientID: The client that sends them.
    ///   - user: The user whose records they change.
    /// - Returns: One result per mutation, in the same order.
    /// - Throws: `SyncServerError.invalidRequest(_:)` for invalid mutations, changing nothing.
    public func push(_ mutations: [Mutation], clientID: String, for user: SyncUser) async throws -> [MutationResult] {
        try PushValidation.validate(mutations, clientID: clientID)
        guard let smallestID = mutations.first?.mutationID else { return [] }
        let logger = self.logger
        let notifications = self.notifications
        let announce: @Sendable (PostgresConnection, Bool) async -> Void = { connection, applied in
            if applied { await notifications.announce(userID: user.id, on: connection) }
        }
        return try await transaction(afterCommit: announce) { connection in
            // Holding the row until commit makes this user's versions commit in order. It is its
            // own statement so that the reads after it see what the previous holder committed.
            let versionRows = try await connection.query(
                "SELECT version FROM amber_sync_users WHERE id = \(user.id) FOR UPDATE", logger: logger
            ).collect()
            guard var version = try versionRows.first?.decode(Int64.self) else { throw SyncServerError.unauthorized }
            let (stored, found) = try await Self.read(
                mutations, clientID: clientID, userID: user.id, connection: connection, logger: logger
            )
            var records = found
            var changed: Set<RecordKey> = []
            var newResults: [(mutationID: Int64, result: MutationResult)] = []
            var results: [MutationResult] = []
            results.reserveCapacity(mutations.count)
            for mutation in mutations {
                if let result = stored[mutation.mutationID] {
                    results.append(result)
                    continue
                }
                let key = RecordKey(collection: mutation.collection, id: mutation.id)
                let outcome = MutationResolver.resolve(mutation, against: records[key], newVersion: version + 1)
                if case .applied(let record, _) = outcome {
                    version = record.version
                    records[key] = record
                    changed.insert(key)
                }
                newResults.append((mutation.mutationID, outcome.result))
                results.append(outcome.result)
            }
            try await Self.write(
                records: changed.map { ($0, records[$0]!) }, results: newResults, version: version,
                forgettingResultsBelow: smallestID, clientID: clientID, userID: user.id,
                connection: connection, logger: logger
            )
            return (results, !changed.isEmpty)
        }
    }

    /// A record's place: its collection and id.
    struct RecordKey: Hashable, Sendable {
        var collection: String
        var id: String
    }

    /// In one query: the answers already given to any of `mutations`, by mutation id, and the
    /// current state of every record they touch. The caller holds the user's counter row, so
    /// neither changes until commit.
    private static func read(
        _ mutations: [Mutation], clientID: String, userID: Int64, connection: PostgresConnection, logger: Logger
    ) async throws -> (stored: [Int64: MutationResult], records: [RecordKey: ServerRecord]) {
        let rows = try await connection.query(
            """
            SELECT mutation_id, result, NULL, NULL, NULL, NULL::int8, NULL::int8, NULL
            FROM amber_sync_mutation_results
            WHERE user_id = \(userID) AND client_id = \(clientID) AND mutation_id = ANY(\(mutations.map(\.mutationID))::int8[])
            UNION ALL
            SELECT NULL, NULL, collection, id, value, version, created_version, field_versions
            FROM amber_sync_records
            WHERE user_id = \(userID)
              AND (collection, id) IN (SELECT * FROM unnest(\(mutations.map(\.collection))::text[], \(mutations.map(\.id))::text[]))
            """,
            logger: logger
        )
        var stored: [Int64: MutationResult] = [:]
        var records: [RecordKey: ServerRecord] = [:]
        for try await row in rows.decode((Int64?, String?, String?, String?, String?, Int64?, Int64?, String?).self) {
            let (mutationID, result, collection, id, value, version, createdVersion, fieldVersions) = row
            if let mutationID, let result {
                stored[mutationID] = try JSONText.decode(MutationResult.self, from: result)
            } else if let collection, let id, let version, let createdVersion, let fieldVersions {
                records[RecordKey(collection: collection, id: id)] = ServerRecord(
                    value: try value.map { try JSONText.decode(JSONObject.self, from: $0) },
                    version: version,
                    createdVersion: createdVersion,
                    fieldVersions: try JSONText.decode([String: Int64].self, from: fieldVersions)
                )
            }
        }
        return (stored, records)
    }

    /// In one statement: the records' new states, the answers given (so a re-sent mutation gets
    /// the same one), the user's counter, and the forgetting of answers the client already got
    /// (those of mutations below `smallestID`: it sends a batch only after the previous was answered).
    private static func write(
        records: [(key: RecordKey, record: ServerRecord)], results: [(mutationID: Int64, result: MutationResult)],
        version: Int64, forgettingResultsBelow smallestID: Int64, clientID: String, userID: Int64,
        connection: PostgresConnection, logger: Logger
    ) async throws {
        let values = try records.map { try $0.record.value.map(JSONText.encode) ?? "" }
        let deleted = records.map { $0.record.value == nil }
        let fieldVersions = try records.map { try JSONText.encode($0.record.fieldVersions) }
        let resultTexts = try results.map { try JSONText.encode($0.result) }
        try await connection.query(
            """
            WITH forgotten AS (
                DELETE FROM amber_sync_mutation_results
                WHERE user_id = \(userID) AND client_id = \(clientID) AND mutation_id < \(smallestID)
            ), stored_records AS (
                INSERT INTO amber_sync_records
                    (user_id, collection, id, version, created_version, value, field_versions, changed_at)
                SELECT \(userID), c, i, v, cv, CASE WHEN d THEN NULL ELSE val END, fv, now()
                FROM unnest(
                    \(records.map(\.key.collection))::text[], \(records.map(\.key.id))::text[],
                    \(records.map(\.record.version))::int8[], \(records.map(\.record.createdVersion))::int8[],
                    \(values)::text[], \(deleted)::bool[], \(fieldVersions)::text[]
                ) AS t(c, i, v, cv, val, d, fv)
                ON CONFLICT (user_id, collection, id) DO UPDATE SET
                    version = excluded.version,
                    created_version = excluded.created_version,
                    value = excluded.value,
                    field_versions = excluded.field_versions,
                    changed_at = excluded.changed_at
            ), stored_results AS (
                INSERT INTO amber_sync_mutation_results (user_id, client_id, mutation_id, result)
                SELECT \(userID), \(clientID), m, r
                FROM unnest(\(results.map(\.mutationID))::int8[], \(resultTexts)::text[]) AS t(m, r)
            )
            UPDATE amber_sync_users SET version = \(version) WHERE id = \(userID) AND version <> \(version)
            """,
            logger: logger
        )
    }
}
