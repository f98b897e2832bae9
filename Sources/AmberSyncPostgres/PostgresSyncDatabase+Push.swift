import AmberSyncProtocol
import AmberSyncServer
import PostgresNIO

extension PostgresSyncDatabase {
    /// Applies a client's mutations, in order, in one transaction that holds the user's counter
    /// row, then tells the other server processes.
    ///
    /// The whole batch costs a fixed number of round trips: the stored answers and the current
    /// records are read in one query each, decided in memory by ``MutationResolver``, and written
    /// back in one statement each.
    ///
    /// - Parameters:
    ///   - mutations: Mutations with increasing ids.
    ///   - clientID: The client that sends them.
    ///   - user: The user whose records they change.
    /// - Returns: One result per mutation, in the same order.
    /// - Throws: ``SyncServerError/invalidRequest(_:)`` for invalid mutations, changing nothing.
    public func push(_ mutations: [Mutation], clientID: String, for user: SyncUser) async throws -> [MutationResult] {
        try PushValidation.validate(mutations, clientID: clientID)
        guard let smallestID = mutations.first?.mutationID else { return [] }
        let logger = self.logger
        let notifications = self.notifications
        return try await transaction(afterCommit: { connection, applied in
            if applied { await notifications.announce(userID: user.id, on: connection) }
        }) { connection in
            // Holding the row until commit makes this user's versions commit in order.
            let versionRows = try await connection.query(
                "SELECT version FROM amber_sync_users WHERE id = \(user.id) FOR UPDATE", logger: logger
            ).collect()
            guard var version = try versionRows.first?.decode(Int64.self) else { throw SyncServerError.unauthorized }
            // The client got the answers to its earlier batches before sending this one.
            try await connection.query(
                """
                DELETE FROM amber_sync_mutation_results
                WHERE user_id = \(user.id) AND client_id = \(clientID) AND mutation_id < \(smallestID)
                """,
                logger: logger
            )
            let stored = try await Self.storedResults(
                of: mutations, clientID: clientID, userID: user.id, connection: connection, logger: logger
            )
            var records = try await Self.records(
                touchedBy: mutations, userID: user.id, connection: connection, logger: logger
            )
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
            try await Self.store(changed.map { ($0, records[$0]!) }, userID: user.id, connection: connection, logger: logger)
            try await Self.store(newResults, clientID: clientID, userID: user.id, connection: connection, logger: logger)
            if !changed.isEmpty {
                try await connection.query(
                    "UPDATE amber_sync_users SET version = \(version) WHERE id = \(user.id)", logger: logger
                )
            }
            return (results, !changed.isEmpty)
        }
    }

    /// A record's place: its collection and id.
    struct RecordKey: Hashable, Sendable {
        var collection: String
        var id: String
    }

    /// The answers already given to any of `mutations`, by mutation id.
    private static func storedResults(
        of mutations: [Mutation], clientID: String, userID: Int64, connection: PostgresConnection, logger: Logger
    ) async throws -> [Int64: MutationResult] {
        let ids = mutations.map(\.mutationID)
        let rows = try await connection.query(
            """
            SELECT mutation_id, result FROM amber_sync_mutation_results
            WHERE user_id = \(userID) AND client_id = \(clientID) AND mutation_id = ANY(\(ids)::int8[])
            """,
            logger: logger
        )
        var results: [Int64: MutationResult] = [:]
        for try await (mutationID, text) in rows.decode((Int64, String).self) {
            results[mutationID] = try JSONText.decode(MutationResult.self, from: text)
        }
        return results
    }

    /// The current state of every record `mutations` touch; the user's locked row keeps them so until commit.
    private static func records(
        touchedBy mutations: [Mutation], userID: Int64, connection: PostgresConnection, logger: Logger
    ) async throws -> [RecordKey: ServerRecord] {
        let rows = try await connection.query(
            """
            SELECT collection, id, value, version, created_version, field_versions FROM amber_sync_records
            WHERE user_id = \(userID)
              AND (collection, id) IN (SELECT * FROM unnest(\(mutations.map(\.collection))::text[], \(mutations.map(\.id))::text[]))
            """,
            logger: logger
        )
        var records: [RecordKey: ServerRecord] = [:]
        for try await (collection, id, value, version, createdVersion, fieldVersions) in rows.decode(
            (String, String, String?, Int64, Int64, String).self
        ) {
            records[RecordKey(collection: collection, id: id)] = ServerRecord(
                value: try value.map { try JSONText.decode(JSONObject.self, from: $0) },
                version: version,
                createdVersion: createdVersion,
                fieldVersions: try JSONText.decode([String: Int64].self, from: fieldVersions)
            )
        }
        return records
    }

    /// Writes records' new states in one statement.
    private static func store(
        _ records: [(key: RecordKey, record: ServerRecord)], userID: Int64, connection: PostgresConnection,
        logger: Logger
    ) async throws {
        guard !records.isEmpty else { return }
        let values = try records.map { try $0.record.value.map(JSONText.encode) ?? "" }
        let deleted = records.map { $0.record.value == nil }
        let fieldVersions = try records.map { try JSONText.encode($0.record.fieldVersions) }
        try await connection.query(
            """
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
            """,
            logger: logger
        )
    }

    /// Remembers the answers given, so a re-sent mutation gets the same one.
    private static func store(
        _ results: [(mutationID: Int64, result: MutationResult)], clientID: String, userID: Int64,
        connection: PostgresConnection, logger: Logger
    ) async throws {
        guard !results.isEmpty else { return }
        let texts = try results.map { try JSONText.encode($0.result) }
        try await connection.query(
            """
            INSERT INTO amber_sync_mutation_results (user_id, client_id, mutation_id, result)
            SELECT \(userID), \(clientID), m, r FROM unnest(\(results.map(\.mutationID))::int8[], \(texts)::text[]) AS t(m, r)
            """,
            logger: logger
        )
    }
}
