import AmberSyncProtocol
import Foundation
import GRDB

extension SQLiteSyncDatabase {
    /// Applies a client's mutations, in order, in one SQLite transaction.
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
        let now = Date().timeIntervalSince1970
        let fingerprints = MutationFingerprint.ofEach(mutations)
        let tag = HistoryTag.random()
        // Every statement is GRDB's cached one for its text: prepared again for each push (with
        // GRDB's authorizer reading each column), they took about 40 % of the server's CPU for
        // single-record pushes.
        return try await pool.write { db in
            guard
                let startVersion = try Int64.fetchOne(
                    db.cachedStatement(sql: "SELECT version FROM amber_sync_users WHERE id = ?"), arguments: [user.id])
            else { throw SyncServerError.unauthorized }
            // The last mutation id this client sent, to tell a retry from another device's mutation.
            let lastMutationID = try Int64.fetchOne(
                db.cachedStatement(
                    sql: "SELECT MAX(last_mutation_id) FROM amber_sync_push_answers WHERE user_id = ? AND client_id = ?"
                ),
                arguments: [user.id, clientID])
            // The client got the answers to its earlier batches before sending this one.
            try db.cachedStatement(
                sql: """
                    DELETE FROM amber_sync_push_answers
                    WHERE user_id = ? AND client_id = ? AND last_mutation_id < ?
                    """
            ).execute(arguments: [user.id, clientID, smallestID])
            // Only ids up to the last one this client sent can have an answer kept: a push of new
            // mutations only (every push but a retry) looks nothing up.
            let kept =
                lastMutationID.map { smallestID <= $0 } ?? false
                ? try Self.keptAnswers(
                    in: db, userID: user.id, clientID: clientID, upTo: mutations.last?.mutationID ?? smallestID)
                : [:]
            // The records the batch names, read in one statement; those it stores are kept here
            // after, for a later mutation of the same record. A batch naming each record once (a
            // client plans its batches in the order of their names) keeps nothing, and does not
            // read the records its mutations create: each is written as new, and read only when
            // a record is stored under its name already. A first push reads nothing.
            let namesRepeat = !PushValidation.namesIncrease(mutations)
            var records = try Self.records(
                in: db, userID: user.id, of: namesRepeat ? mutations : mutations.filter { !PushValidation.creates($0) })
            // Looked up once for the push, not by its SQL text for each record it stores.
            let recordStore = try RecordStore(db, userID: user.id, at: now)
            defer { recordStore.finish() }
            var resolution = PushResolution(clientID: clientID, version: startVersion, lastMutationID: lastMutationID)
            var results: [MutationResult] = []
            results.reserveCapacity(mutations.count)
            var answers = PushAnswers()
            for (mutation, fingerprint) in zip(mutations, fingerprints) {
                let answered = kept[mutation.mutationID]
                if !namesRepeat, PushValidation.creates(mutation) {
                    // Decided as for a record never stored, and written so unless one is.
                    var asNew = resolution
                    let step = try asNew.resolve(mutation, fingerprint: fingerprint, answered: answered) { nil }
                    let settled: Bool
                    switch step {
                    case .answeredBefore(let result):
                        results.append(result)
                        settled = true
                    case .decided(let outcome):
                        if case .applied(let record, _) = outcome {
                            settled = try recordStore.storeNew(record, collection: mutation.collection, id: mutation.id)
                        } else {
                            settled = false
                        }
                        if settled {
                            answers.append(outcome.result, fingerprint: fingerprint)
                            results.append(outcome.result)
                        }
                    }
                    if settled {
                        resolution = asNew
                        continue
                    }
                    // A record is stored under its name: decided against it below.
                    records.merge(try Self.records(in: db, userID: user.id, of: [mutation])) { _, read in read }
                }
                let step = try resolution.resolve(mutation, fingerprint: fingerprint, answered: answered) {
                    records.isEmpty ? nil : records[NamedRecord(collection: mutation.collection, id: mutation.id)]
                }
                guard case .decided(let outcome) = step else {
                    if case .answeredBefore(let result) = step { results.append(result) }
                    continue
                }
                if case .applied(let record, _) = outcome {
                    try recordStore.store(record, collection: mutation.collection, id: mutation.id)
                    if namesRepeat { records[NamedRecord(collection: mutation.collection, id: mutation.id)] = record }
                }
                answers.append(outcome.result, fingerprint: fingerprint)
                results.append(outcome.result)
            }
            if let first = answers.firstMutationID, let last = answers.lastMutationID {
                try db.cachedStatement(
                    sql: """
                        INSERT INTO amber_sync_push_answers
                            (user_id, client_id, last_mutation_id, first_mutation_id, results, fingerprints)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """
                ).execute(arguments: [user.id, clientID, last, first, answers.resultsText, answers.fingerprintsText])
            }
            let version = resolution.version
            if version != startVersion {
                try db.cachedStatement(sql: "UPDATE amber_sync_users SET version = ? WHERE id = ?").execute(
                    arguments: [version, user.id])
                try db.cachedStatement(sql: "INSERT INTO amber_sync_history (user_id, version, tag) VALUES (?, ?, ?)")
                    .execute(arguments: [user.id, version, tag])
            }
            return results
        }
    }

    /// The answers kept for a client in the rows that can hold ids up to `last`: those of its
    /// pushes not yet known to have reached it (the rows below the batch were forgotten before).
    private static func keptAnswers(in db: Database, userID: Int64, clientID: String, upTo last: Int64) throws
        -> [Int64: (result: MutationResult, fingerprint: String?)]
    {
        var kept: [Int64: (result: MutationResult, fingerprint: String?)] = [:]
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT results, fingerprints FROM amber_sync_push_answers
                WHERE user_id = ? AND client_id = ? AND first_mutation_id <= ?
                """,
            arguments: [userID, clientID, last])
        while let row = try rows.next() {
            kept.merge(try PushAnswers.read(results: row[0], fingerprints: row[1])) { first, _ in first }
        }
        return kept
    }

    /// The stored records (tombstones included) that `mutations` name, read in one statement
    /// (none for no mutations).
    private static func records(in db: Database, userID: Int64, of mutations: [Mutation]) throws -> [NamedRecord:
        ServerRecord]
    {
        guard !mutations.isEmpty else { return [:] }
        // `[[collection, id], ...]`, for `json_each`.
        var names = JSONWriter(capacity: mutations.count * 64)
        names.raw("[")
        for (offset, mutation) in mutations.enumerated() {
            if offset > 0 { names.raw(",") }
            names.write([mutation.collection, mutation.id])
        }
        names.raw("]")
        let rows = try Row.fetchCursor(
            db.cachedStatement(
                sql: """
                    SELECT r.collection, r.id, r.value, r.version, r.created_version, r.field_versions
                    FROM json_each(?) j CROSS JOIN amber_sync_records r
                    ON r.user_id = ? AND r.collection = j.value ->> 0 AND r.id = j.value ->> 1
                    """),
            arguments: [String(decoding: names.bytes, as: UTF8.self), userID])
        var records: [NamedRecord: ServerRecord] = [:]
        while let row = try rows.next() {
            let valueText: String? = row[2]
            records[NamedRecord(collection: row[0], id: row[1])] = ServerRecord(
                record: try valueText.map {
                    JSONRecord(text: $0, object: try JSONText.decode(JSONObject.self, from: $0))
                },
                version: row[3],
                createdVersion: row[4],
                fieldVersions: try JSONText.decode([String: Int64].self, from: row[5])
            )
        }
        return records
    }
}

/// A record's name within a user's records, compared by its bytes as the database compares it.
private struct NamedRecord: Hashable {
    let collection: ExactText
    let id: ExactText

    init(collection: String, id: String) {
        self.collection = ExactText(collection)
        self.id = ExactText(id)
    }
}
