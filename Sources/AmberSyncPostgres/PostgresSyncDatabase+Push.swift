import AmberLock
import AmberSyncProtocol
import AmberSyncServer
import PostgresNIO

extension PostgresSyncDatabase {
    /// Applies a client's mutations, in order, then tells the other server processes.
    ///
    /// Pushes that arrive while others are being applied wait and are then applied together,
    /// in one transaction (group commit): one statement locks the counter rows of all their
    /// users, in the order of their ids; one query reads the stored answers and the current
    /// records; `MutationResolver` decides in memory, push after push in the order they came;
    /// one statement writes records, answers, history and counters; one commit. Holding a
    /// user's counter row until commit makes that user's versions commit in order, across
    /// server processes too. A push refused for its own reasons (a reused client id) changes
    /// nothing and does not hold up the others.
    ///
    /// - Parameters:
    ///   - mutations: Mutations with increasing ids.
    ///   - clientID: The client that sends them.
    ///   - user: The user whose records they change.
    /// - Returns: One result per mutation, in the same order.
    /// - Throws: `SyncServerError.invalidRequest(_:)` for invalid mutations, changing nothing.
    public func push(_ mutations: [Mutation], clientID: String, for user: SyncUser) async throws -> [MutationResult] {
        try PushValidation.validate(mutations, clientID: clientID)
        guard !mutations.isEmpty else { return [] }
        let fingerprints = mutations.map(MutationFingerprint.of)
        return try await withCheckedThrowingContinuation { continuation in
            let push = WaitingPushes.Push(
                mutations: mutations, fingerprints: fingerprints, clientID: clientID, userID: user.id,
                continuation: continuation)
            if waitingPushes.add(push) {
                Task { await self.applyWaitingPushes() }
            }
        }
    }

    /// How many transactions have applied pushes, and how many pushes they applied: their ratio is
    /// how many pushes commit together.
    package var pushTransactions: (transactions: Int, pushes: Int) {
        waitingPushes.applied
    }

    /// Applies waiting pushes, a batch at a time, until none wait.
    ///
    /// A batch waits for no lock: the pushes of a user whose counter row another transaction holds
    /// (another server process applying that user's push) are applied each on its own, waiting
    /// for that row, so that one user's wait holds up no other user.
    private func applyWaitingPushes() async {
        while let batch = waitingPushes.nextBatch() {
            let outcomes = await apply(batch, waitingForLocks: false)
            for (push, outcome) in zip(batch, outcomes) {
                if let outcome {
                    push.continuation.resume(with: outcome)
                } else {
                    Task {
                        let outcome = await self.apply([push], waitingForLocks: true)
                        push.continuation.resume(with: outcome[0] ?? .failure(SyncServerError.unauthorized))
                    }
                }
            }
        }
    }

    /// Applies `batch` in one transaction: each push's outcome, `nil` for those of users whose
    /// counter row is held elsewhere when not `waitingForLocks`.
    private func apply(_ batch: [WaitingPushes.Push], waitingForLocks: Bool) async -> [Result<
        [MutationResult], any Error
    >?] {
        let (logger, notifications) = (logger, notifications)
        waitingPushes.count(transactionOf: batch.count)
        do {
            return try await transaction(
                afterCommit: { connection, changedUsers in
                    if !changedUsers.isEmpty { await notifications.announce(userIDs: changedUsers, on: connection) }
                },
                { connection in
                    try await Self.apply(
                        batch, waitingForLocks: waitingForLocks, connection: connection, logger: logger)
                }
            )
        } catch {
            return batch.map { _ in .failure(error) }
        }
    }

    /// Applies `batch` in the caller's transaction: the outcome of each push, in order (`nil` for
    /// a push whose user's row was held elsewhere, unless `waitingForLocks`), and the users whose
    /// records changed.
    private static func apply(
        _ batch: [WaitingPushes.Push], waitingForLocks: Bool, connection: PostgresConnection, logger: Logger
    ) async throws -> ([Result<[MutationResult], any Error>?], Set<Int64>) {
        // Its own statement, so that the reads after it see what the previous holders committed.
        // Rows are locked in the order of their ids, so two batches never wait on each other.
        let userIDs = Set(batch.map(\.userID)).sorted()
        let versionRows =
            if waitingForLocks {
                try await connection.query(
                    "SELECT id, version FROM amber_sync_users WHERE id = ANY(\(userIDs)::int8[]) ORDER BY id FOR UPDATE",
                    logger: logger)
            } else {
                try await connection.query(
                    """
                    SELECT id, version FROM amber_sync_users WHERE id = ANY(\(userIDs)::int8[])
                    ORDER BY id FOR UPDATE SKIP LOCKED
                    """,
                    logger: logger)
            }
        var versions: [Int64: Int64] = [:]
        for try await (id, version) in versionRows.decode((Int64, Int64).self) { versions[id] = version }

        let locked = batch.filter { versions[$0.userID] != nil }
        // Every user held elsewhere: nothing to read or write here.
        var state = locked.isEmpty ? BatchState() : try await read(locked, connection: connection, logger: logger)
        var outcomes: [Result<[MutationResult], any Error>?] = []
        outcomes.reserveCapacity(batch.count)
        for push in batch {
            guard let version = versions[push.userID] else {
                // Held elsewhere, or gone: a push waiting for the row finds out which.
                outcomes.append(waitingForLocks ? .failure(SyncServerError.unauthorized) : nil)
                continue
            }
            do {
                let (results, newVersion) = try state.apply(push, after: version)
                versions[push.userID] = newVersion
                outcomes.append(.success(results))
            } catch {
                outcomes.append(.failure(error))
            }
        }
        if !state.forgotten.isEmpty {
            try await write(state, versions: versions, connection: connection, logger: logger)
        }
        return (outcomes, state.changedUsers)
    }

    /// What a batch of pushes reads and decides, before it is written.
    struct BatchState {
        /// Answers given before, with the fingerprints of what they answered, and those given now.
        var answers: [AnswerKey: (result: MutationResult, fingerprint: String?)] = [:]
        /// The highest mutation id answered to each client.
        var lastMutationIDs: [ClientKey: Int64] = [:]
        /// The current state of every record the batch touches.
        var records: [UserRecordKey: ServerRecord] = [:]
        /// The records changed, each once, in the order first changed.
        var changed: [UserRecordKey] = []
        var changedUsers: Set<Int64> = []
        /// Answers to store, in order.
        var newAnswers: [(key: AnswerKey, result: MutationResult, fingerprint: String)] = []
        /// For each push, the answers its client already got: those below its smallest id.
        var forgotten: [(client: ClientKey, below: Int64)] = []
        /// The last version of each user that changed, for its history row.
        var historyTags: [Int64: String] = [:]

        /// Decides `push` against what the batch holds so far (with the rules of
        /// `PushResolution`): its results and the user's new counter. Throws, changing nothing,
        /// when the push reuses a client id.
        mutating func apply(_ push: WaitingPushes.Push, after version: Int64) throws -> ([MutationResult], Int64) {
            let client = ClientKey(userID: push.userID, clientID: push.clientID)
            var resolution = PushResolution(
                clientID: push.clientID, version: version, lastMutationID: lastMutationIDs[client])
            // What this push decides, kept apart until it is known not to be refused.
            var decided: [UserRecordKey: ServerRecord] = [:]
            var decidedOrder: [UserRecordKey] = []
            var pushAnswers: [(key: AnswerKey, result: MutationResult, fingerprint: String)] = []
            var results: [MutationResult] = []
            results.reserveCapacity(push.mutations.count)
            for (mutation, fingerprint) in zip(push.mutations, push.fingerprints) {
                let answerKey = AnswerKey(client: client, mutationID: mutation.mutationID)
                let key = UserRecordKey(
                    userID: push.userID, record: RecordKey(collection: mutation.collection, id: mutation.id))
                let step = try resolution.resolve(mutation, fingerprint: fingerprint, answered: answers[answerKey]) {
                    decided[key] ?? records[key]
                }
                switch step {
                case .answeredBefore(let result):
                    results.append(result)
                case .decided(let outcome):
                    if case .applied(let record, _) = outcome {
                        if decided.updateValue(record, forKey: key) == nil { decidedOrder.append(key) }
                    }
                    pushAnswers.append((answerKey, outcome.result, fingerprint))
                    results.append(outcome.result)
                }
            }
            for key in decidedOrder {
                records[key] = decided[key]
                if changedKeys.insert(key).inserted { changed.append(key) }
            }
            if !decidedOrder.isEmpty {
                changedUsers.insert(push.userID)
                historyTags[push.userID] = historyTags[push.userID] ?? HistoryTag.random()
            }
            for answer in pushAnswers { answers[answer.key] = (answer.result, answer.fingerprint) }
            newAnswers += pushAnswers
            if let last = push.mutations.last?.mutationID {
                lastMutationIDs[client] = max(lastMutationIDs[client] ?? last, last)
            }
            if let first = push.mutations.first?.mutationID {
                forgotten.append((client, first))
            }
            return (results, resolution.version)
        }

        private var changedKeys: Set<UserRecordKey> = []
    }

    /// A client of a user; client ids compare by their UTF-8 bytes, as the database compares them.
    struct ClientKey: Hashable, Sendable {
        var userID: Int64
        var clientID: String

        static func == (lhs: ClientKey, rhs: ClientKey) -> Bool {
            lhs.userID == rhs.userID && lhs.clientID.hasSameUTF8(as: rhs.clientID)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(userID)
            var text = clientID
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    /// One mutation of a client.
    struct AnswerKey: Hashable, Sendable {
        var client: ClientKey
        var mutationID: Int64
    }

    /// A record of a user.
    struct UserRecordKey: Hashable, Sendable {
        var userID: Int64
        var record: RecordKey
    }

    /// A record's place: its collection and id, compared by their UTF-8 bytes as the database
    /// compares them (Swift's `String` would take `"\u{e9}"` and `"e\u{301}"` for one id).
    struct RecordKey: Hashable, Sendable {
        var collection: String
        var id: String

        static func == (lhs: RecordKey, rhs: RecordKey) -> Bool {
            lhs.collection.hasSameUTF8(as: rhs.collection) && lhs.id.hasSameUTF8(as: rhs.id)
        }

        func hash(into hasher: inout Hasher) {
            for text in [collection, id] {
                var text = text
                text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
                hasher.combine(0xFF as UInt8)  // never in UTF-8: ends each part
            }
        }
    }

    /// In one query: the answers already given to any mutation of `batch` (with the fingerprints
    /// of what they answered), the last mutation id each of its clients sent, and the current
    /// state of every record it touches. The caller holds the users' counter rows, so none of them
    /// changes until commit.
    private static func read(_ batch: [WaitingPushes.Push], connection: PostgresConnection, logger: Logger)
        async throws -> BatchState
    {
        var answerUsers: [Int64] = []
        var answerClients: [String] = []
        var answerIDs: [Int64] = []
        var clientUsers: [Int64] = []
        var clients: [String] = []
        var recordUsers: [Int64] = []
        var collections: [String] = []
        var ids: [String] = []
        for push in batch {
            clientUsers.append(push.userID)
            clients.append(push.clientID)
            for mutation in push.mutations {
                answerUsers.append(push.userID)
                answerClients.append(push.clientID)
                answerIDs.append(mutation.mutationID)
                recordUsers.append(push.userID)
                collections.append(mutation.collection)
                ids.append(mutation.id)
            }
        }
        let rows = try await connection.query(
            """
            SELECT 'r', user_id, client_id, mutation_id, result, fingerprint, NULL::int8, NULL::int8, NULL::text
            FROM amber_sync_mutation_results
            WHERE (user_id, client_id, mutation_id) IN (
                SELECT * FROM unnest(\(answerUsers)::int8[], \(answerClients)::text[], \(answerIDs)::int8[]))
            UNION ALL
            SELECT 'm', user_id, client_id, max(mutation_id), NULL, NULL, NULL, NULL, NULL
            FROM amber_sync_mutation_results
            WHERE (user_id, client_id) IN (SELECT * FROM unnest(\(clientUsers)::int8[], \(clients)::text[]))
            GROUP BY user_id, client_id
            UNION ALL
            SELECT 'c', user_id, collection, NULL, id, value, version, created_version, field_versions
            FROM amber_sync_records
            WHERE (user_id, collection, id) IN (
                SELECT * FROM unnest(\(recordUsers)::int8[], \(collections)::text[], \(ids)::text[]))
            """,
            logger: logger
        )
        var state = BatchState()
        for try await row in rows.decode(
            (String, Int64, String, Int64?, String?, String?, Int64?, Int64?, String?).self)
        {
            switch row {
            case ("r", let userID, let clientID, let mutationID?, let result?, let fingerprint, _, _, _):
                let key = AnswerKey(client: ClientKey(userID: userID, clientID: clientID), mutationID: mutationID)
                state.answers[key] = (try JSONText.decode(MutationResult.self, from: result), fingerprint)
            case ("m", let userID, let clientID, let mutationID?, _, _, _, _, _):
                state.lastMutationIDs[ClientKey(userID: userID, clientID: clientID)] = mutationID
            case (
                "c", let userID, let collection, _, let id?, let value, let version?, let createdVersion?,
                let fieldVersions?
            ):
                let key = UserRecordKey(userID: userID, record: RecordKey(collection: collection, id: id))
                state.records[key] = ServerRecord(
                    value: try value.map { try JSONText.decode(JSONObject.self, from: $0) },
                    version: version,
                    createdVersion: createdVersion,
                    fieldVersions: try JSONText.decode([String: Int64].self, from: fieldVersions)
                )
            default:
                continue
            }
        }
        return state
    }

    /// In one statement: the records' new states, the answers given (so a re-sent mutation gets
    /// the same one), a history row and the counter of each user whose records changed, and the
    /// forgetting of answers the clients already got (those of mutations below the smallest id
    /// of each push: a client sends a batch only after the previous was answered).
    private static func write(
        _ state: BatchState, versions: [Int64: Int64], connection: PostgresConnection, logger: Logger
    ) async throws {
        let records = state.changed.map { ($0, state.records[$0]!) }
        let values = try records.map { try $0.1.value.map(JSONText.encode) ?? "" }
        let deleted = records.map { $0.1.value == nil }
        let fieldVersions = try records.map { try JSONText.encode($0.1.fieldVersions) }
        let resultTexts = try state.newAnswers.map { try JSONText.encode($0.result) }
        let changedUsers = state.changedUsers.sorted()
        try await connection.query(
            """
            WITH forgotten AS (
                DELETE FROM amber_sync_mutation_results AS r
                USING unnest(
                    \(state.forgotten.map(\.client.userID))::int8[], \(state.forgotten.map(\.client.clientID))::text[],
                    \(state.forgotten.map(\.below))::int8[]
                ) AS f(u, c, m)
                WHERE r.user_id = f.u AND r.client_id = f.c AND r.mutation_id < f.m
            ), stored_records AS (
                INSERT INTO amber_sync_records
                    (user_id, collection, id, version, created_version, value, field_versions, changed_at)
                SELECT u, c, i, v, cv, CASE WHEN d THEN NULL ELSE val END, fv, now()
                FROM unnest(
                    \(records.map(\.0.userID))::int8[],
                    \(records.map(\.0.record.collection))::text[], \(records.map(\.0.record.id))::text[],
                    \(records.map(\.1.version))::int8[], \(records.map(\.1.createdVersion))::int8[],
                    \(values)::text[], \(deleted)::bool[], \(fieldVersions)::text[]
                ) AS t(u, c, i, v, cv, val, d, fv)
                ON CONFLICT (user_id, collection, id) DO UPDATE SET
                    version = excluded.version,
                    created_version = excluded.created_version,
                    value = excluded.value,
                    field_versions = excluded.field_versions,
                    changed_at = excluded.changed_at
            ), stored_results AS (
                INSERT INTO amber_sync_mutation_results (user_id, client_id, mutation_id, result, fingerprint)
                SELECT u, c, m, r, f
                FROM unnest(
                    \(state.newAnswers.map(\.key.client.userID))::int8[],
                    \(state.newAnswers.map(\.key.client.clientID))::text[],
                    \(state.newAnswers.map(\.key.mutationID))::int8[], \(resultTexts)::text[],
                    \(state.newAnswers.map(\.fingerprint))::text[]
                ) AS t(u, c, m, r, f)
            ), stored_history AS (
                INSERT INTO amber_sync_history (user_id, version, tag)
                SELECT u, v, t
                FROM unnest(
                    \(changedUsers)::int8[], \(changedUsers.map { versions[$0]! })::int8[],
                    \(changedUsers.map { state.historyTags[$0]! })::text[]
                ) AS h(u, v, t)
            )
            UPDATE amber_sync_users SET version = t.v
            FROM unnest(\(changedUsers)::int8[], \(changedUsers.map { versions[$0]! })::int8[]) AS t(u, v)
            WHERE id = t.u
            """,
            logger: logger
        )
    }
}

/// Pushes waiting to be applied on one server process, taken a batch at a time.
final class WaitingPushes: Sendable {
    /// One push request, waiting for its outcome.
    struct Push: Sendable {
        let mutations: [Mutation]
        let fingerprints: [String]
        let clientID: String
        let userID: Int64
        let continuation: CheckedContinuation<[MutationResult], any Error>
    }

    /// The most mutations in one batch, unless a single push has more.
    static let maximumMutations = 5_000

    private struct State {
        var waiting: [Push] = []
        var applying = false
        var applied = (transactions: 0, pushes: 0)
    }

    private let state = LockedValue(State())

    /// How many transactions have applied pushes, and how many pushes they applied.
    var applied: (transactions: Int, pushes: Int) {
        state.withLock { $0.applied }
    }

    /// Counts a transaction that applies `pushes` pushes.
    func count(transactionOf pushes: Int) {
        state.withLock {
            $0.applied.transactions += 1
            $0.applied.pushes += pushes
        }
    }

    /// Queues `push`; returns whether the caller must start applying batches (none is being applied).
    func add(_ push: Push) -> Bool {
        state.withLock { state in
            state.waiting.append(push)
            if state.applying { return false }
            state.applying = true
            return true
        }
    }

    /// The pushes waiting, in the order they came, up to ``maximumMutations`` mutations; `nil`
    /// when none wait, and then applying stops until the next ``add(_:)``.
    func nextBatch() -> [Push]? {
        state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.applying = false
                return nil
            }
            var mutations = 0
            var count = 0
            for push in state.waiting {
                if count > 0, mutations + push.mutations.count > Self.maximumMutations { break }
                mutations += push.mutations.count
                count += 1
            }
            let batch = Array(state.waiting.prefix(count))
            state.waiting.removeFirst(count)
            return batch
        }
    }
}
