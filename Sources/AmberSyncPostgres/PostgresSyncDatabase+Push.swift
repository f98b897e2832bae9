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
        let fingerprints = mutations.map(MutationFingerprint.of)
        let tag = HistoryTag.random()
        let announce: @Sendable (PostgresConnection, Bool) async -> Void = { connection, applied in
            if applied { await notifications.announce(userID: user.id, on: connection) }
        }
        return try await transaction(afterCommit: announce) { connection in
            // Holding the row until commit makes this user's versions commit in order. It is its
            // own statement so that the reads after it see what the previous holder committed.
            let versionRows = try await connection.query(
                "SELECT version FROM amber_sync_users WHERE id = \(user.id) FOR UPDATE", logger: logger
            ).collect()
            guard let version = try versionRows.first?.decode(Int64.self) else { throw SyncServerError.unauthorized }
            let (stored, found, lastMutationID) = try await Self.read(
                mutations, clientID: clientID, userID: user.id, connection: connection, logger: logger
            )
            var records = found
            var changed: Set<RecordKey> = []
            var newResults: [(mutationID: Int64, result: MutationResult, fingerprint: String)] = []
            var results: [MutationResult] = []
            results.reserveCapacity(mutations.count)
            var resolution = PushResolution(clientID: clientID, version: version, lastMutationID: lastMutationID)
            for (mutation, fingerprint) in zip(mutations, fingerprints) {
                let key = RecordKey(collection: mutation.collection, id: mutation.id)
                let step = try resolution.resolve(
                    mutation, fingerprint: fingerprint, answered: stored[mutation.mutationID].map { ($0.0, $0.1) }
                ) { records[key] }
                guard case .decided(let outcome) = step else {
                    if case .answeredBefore(let result) = step { results.append(result) }
                    continue
                }
                if case .applied(let record, _) = outcome {
                    records[key] = record
                    changed.insert(key)
                }
                newResults.append((mutation.mutationID, outcome.result, fingerprint))
                results.append(outcome.result)
            }
            try await Self.write(
                records: changed.map { ($0, records[$0]!) }, results: newResults, version: resolution.version,
                historyTag: changed.isEmpty ? nil : tag,
                forgettingResultsBelow: smallestID, clientID: clientID, userID: user.id,
                connection: connection, logger: logger
            )
            return (results, !changed.isEmpty)
        }
    }

    /// A record's place: its collection and id, compared by their UTF-8 bytes as the database
    /// compares them (Swift's `String` would take `"\u{e9}"` and `"e\u{301}"` for one id).
    struct RecordKey: Hashable, Sendable {
        var collection: String
        var id: String

        static func == (lhs: RecordKey, rhs: RecordKey) -> Bool {
            lhs.collection.utf8.elementsEqual(rhs.collection.utf8) && lhs.id.utf8.elementsEqual(rhs.id.utf8)
        }

        func hash(into hasher: inout Hasher) {
            for text in [collection, id] {
                var text = text
                text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
                hasher.combine(0xFF as UInt8)  // never in UTF-8: ends each part
            }
        }
    }

    /// In one query: the answers already given to any of `mutations` (with the fingerprints of
    /// what they answered), by mutation id; the current state of every record they touch; and
    /// the last mutation id the client sent. The caller holds the user's counter row, so none of
    /// them changes until commit.
    private static func read(
        _ mutations: [Mutation], clientID: String, userID: Int64, connection: PostgresConnection, logger: Logger
    ) async throws -> (
        stored: [Int64: (MutationResult, String?)], records: [RecordKey: ServerRecord], lastMutationID: Int64?
    ) {
        let rows = try await connection.query(
            """
            SELECT 'r', mutation_id, result, fingerprint, NULL, NULL::int8, NULL::int8, NULL
            FROM amber_sync_mutation_results
            WHERE user_id = \(userID) AND client_id = \(clientID) AND mutation_id = ANY(\(mutations.map(\.mutationID))::int8[])
            UNION ALL
            SELECT 'm', max(mutation_id), NULL, NULL, NULL, NULL::int8, NULL::int8, NULL
            FROM amber_sync_mutation_results
            WHERE user_id = \(userID) AND client_id = \(clientID)
            UNION ALL
            SELECT 'c', NULL, collection, id, value, version, created_version, field_versions
            FROM amber_sync_records
            WHERE user_id = \(userID)
              AND (collection, id) IN (SELECT * FROM unnest(\(mutations.map(\.collection))::text[], \(mutations.map(\.id))::text[]))
            """,
            logger: logger
        )
        var stored: [Int64: (MutationResult, String?)] = [:]
        var records: [RecordKey: ServerRecord] = [:]
        var lastMutationID: Int64?
        for try await row in rows.decode((String, Int64?, String?, String?, String?, Int64?, Int64?, String?).self) {
            switch row {
            case ("r", let mutationID?, let result?, let fingerprint, _, _, _, _):
                stored[mutationID] = (try JSONText.decode(MutationResult.self, from: result), fingerprint)
            case ("m", let mutationID, _, _, _, _, _, _):
                lastMutationID = mutationID
            case ("c", _, let collection?, let id?, let value, let version?, let createdVersion?, let fieldVersions?):
                records[RecordKey(collection: collection, id: id)] = ServerRecord(
                    value: try value.map { try JSONText.decode(JSONObject.self, from: $0) },
                    version: version,
                    createdVersion: createdVersion,
                    fieldVersions: try JSONText.decode([String: Int64].self, from: fieldVersions)
                )
            default:
                continue
            }
        }
        return (stored, records, lastMutationID)
    }

    /// In one statement: the records' new states, the answers given (so a re-sent mutation gets
    /// the same one), the user's counter, and the forgetting of answers the client already got
    /// (those of mutations below `smallestID`: it sends a batch only after the previous was answered).
    private static func write(
        records: [(key: RecordKey, record: ServerRecord)],
        results: [(mutationID: Int64, result: MutationResult, fingerprint: String)],
        version: Int64, historyTag: String?, forgettingResultsBelow smallestID: Int64, clientID: String, userID: Int64,
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
                INSERT INTO amber_sync_mutation_results (user_id, client_id, mutation_id, result, fingerprint)
                SELECT \(userID), \(clientID), m, r, f
                FROM unnest(
                    \(results.map(\.mutationID))::int8[], \(resultTexts)::text[], \(results.map(\.fingerprint))::text[]
                ) AS t(m, r, f)
            ), stored_history AS (
                INSERT INTO amber_sync_history (user_id, version, tag)
                SELECT \(userID), \(version), \(historyTag) WHERE \(historyTag)::text IS NOT NULL
            )
            UPDATE amber_sync_users SET version = \(version) WHERE id = \(userID) AND version <> \(version)
            """,
            logger: logger
        )
    }
}
