import AmberLock
import AmberSyncProtocol
import AmberSyncServer
import PostgresNIO

extension PostgresSyncDatabase {
    /// Applies a client's mutations, in order, then tells the other server processes.
    ///
    /// Pushes that arrive while others are being applied wait and are then applied together
    /// (group commit), in two statements: one reads their users' counters, the stored answers
    /// and the current records, as of one moment; `MutationResolver` decides in memory, push
    /// after push in the order they came; one statement, a transaction of its own, locks the
    /// users' counter rows in the order of their ids and writes records, answers, history and
    /// counters for each user whose counter is still the one read. The pushes of a user another
    /// transaction wrote for in between (another server process) are decided again. Holding a
    /// user's counter row until commit makes that user's versions commit in order, across server
    /// processes too. Each user is in one batch at a time; pushes arriving while a batch of few
    /// mutations is applied wait for the next, and only next to a large batch (a phone's first
    /// push) does another start beside it (see `WaitingPushes`). A push refused for its own
    /// reasons (a reused client id) changes nothing and does not hold up the others.
    ///
    /// - Parameters:
    ///   - mutations: Mutations with increasing ids.
    ///   - clientID: The client that sends them.
    ///   - user: The user whose records they change.
    /// - Returns: One result per mutation, in the same order.
    /// - Throws: `SyncServerError.invalidRequest(_:)` for invalid mutations, changing nothing.
    public func push(_ mutations: [Mutation], clientID: String, for user: SyncUser) async throws -> [MutationResult] {
        try await push(mutations, clientID: clientID, userID: user.id, tokenHash: nil)
    }

    /// Applies a client's mutations as ``push(_:clientID:for:)`` does, checking in the push's own
    /// transaction that `token` still belongs to `user`: the token costs no query of its own.
    ///
    /// - Parameters:
    ///   - mutations: Mutations with increasing ids.
    ///   - clientID: The client that sends them.
    ///   - user: The user ``rememberedUser(forToken:)`` gave for `token`.
    ///   - token: The bearer token of the request.
    /// - Returns: One result per mutation, in the same order.
    /// - Throws: `SyncServerError.unauthorized` when the token no longer belongs to `user` (it was
    ///   revoked), changing nothing; `SyncServerError.invalidRequest(_:)` for invalid mutations.
    public func push(_ mutations: [Mutation], clientID: String, for user: SyncUser, checkingToken token: String)
        async throws -> [MutationResult]
    {
        guard !mutations.isEmpty else {
            // Nothing to apply, so no transaction to check the token in.
            guard try await self.user(forToken: token)?.id == user.id else { throw SyncServerError.unauthorized }
            return try await push(mutations, clientID: clientID, for: user)
        }
        return try await push(mutations, clientID: clientID, userID: user.id, tokenHash: AccessToken.hash(token))
    }

    private func push(_ mutations: [Mutation], clientID: String, userID: Int64, tokenHash: String?) async throws
        -> [MutationResult]
    {
        try PushValidation.validate(mutations, clientID: clientID)
        guard !mutations.isEmpty else { return [] }
        let fingerprints = MutationFingerprint.ofEach(mutations)
        return try await withCheckedThrowingContinuation { continuation in
            let push = WaitingPushes.Push(
                mutations: mutations, fingerprints: fingerprints, clientID: clientID, userID: userID,
                tokenHash: tokenHash, continuation: continuation)
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

    /// How many batches of pushes were decided again, reading the records their creations name,
    /// because one of those records was stored (``applyBatch(_:waitingForLocks:readingCreations:connection:logger:betweenReadAndWrite:)``).
    package var creationsReadAgain: Int {
        waitingPushes.creationsReadAgain
    }

    /// How many pushes wait to be taken into a batch: those of users whose batch is being applied.
    package var waitingPushCount: Int {
        waitingPushes.waitingCount
    }

    /// SQLSTATE `unique_violation`: an insert found a row under its key.
    private static let uniqueViolation = "23505"

    /// Applies waiting pushes, a batch at a time, until none this call may take waits (one whose
    /// user is in another batch being applied is left to that batch's caller).
    ///
    /// A batch waits for no lock: the pushes of a user whose counter row another transaction holds
    /// (another server process writing that user's push), or whose counter moved since the batch
    /// read it, are applied again each on its own (``applyAlone(_:)``), so that one user's wait
    /// holds up no other user.
    private func applyWaitingPushes() async {
        var finished: [WaitingPushes.Push] = []
        while let batch = waitingPushes.nextBatch(after: finished) {
            let outcomes = await apply(batch, waitingForLocks: false)
            for (push, outcome) in zip(batch, outcomes) {
                if let outcome {
                    resume(push, with: outcome)
                } else {
                    Task { self.resume(push, with: await self.applyAlone(push)) }
                }
            }
            finished = batch
        }
    }

    /// The most times ``applyAlone(_:)`` decides a push again after other transactions committed
    /// for its user between its read and its write.
    package static let maximumRetries = 50

    /// Applies `push` in batches of its own, waiting for its user's counter row, until one finds
    /// the counter it read: each try after the first follows a commit of another transaction for
    /// that user, so some process makes progress with every try.
    private func applyAlone(_ push: WaitingPushes.Push) async -> Result<[MutationResult], any Error> {
        for _ in 0..<Self.maximumRetries {
            if let outcome = await apply([push], waitingForLocks: true)[0] { return outcome }
        }
        return .failure(
            SyncServerError.databaseUnavailable(
                location: location,
                reason: "other transactions kept changing the user's records while a push was decided"))
    }

    /// Answers `push`; a push refused for its token makes this process forget the token.
    private func resume(_ push: WaitingPushes.Push, with outcome: Result<[MutationResult], any Error>) {
        if case .failure(let error) = outcome, error as? SyncServerError == .unauthorized, let hash = push.tokenHash {
            knownTokens.forget(hash)
        }
        push.continuation.resume(with: outcome)
    }

    /// Applies `batch`: each push's outcome, `nil` for those of users whose counter row was held
    /// elsewhere (when not `waitingForLocks`) or had moved since the batch read it. The other
    /// server processes are told about the changed users after the commit, without holding up
    /// the answers.
    private func apply(_ batch: [WaitingPushes.Push], waitingForLocks: Bool) async -> [Result<
        [MutationResult], any Error
    >?] {
        let (logger, notifications, waitingPushes) = (logger, notifications, waitingPushes)
        let betweenReadAndWrite = betweenReadAndWrite.withLock { $0 }
        waitingPushes.count(transactionOf: batch.count)
        do {
            let (outcomes, changedUsers) = try await withConnection { connection in
                do {
                    return try await Self.applyBatch(
                        batch, waitingForLocks: waitingForLocks, readingCreations: false, connection: connection,
                        logger: logger, betweenReadAndWrite: betweenReadAndWrite)
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == Self.uniqueViolation {
                    // A record that a mutation created as new is stored under its name: the
                    // write changed nothing, and the batch is decided again against the records
                    // its creations name too.
                    waitingPushes.countCreationsReadAgain()
                    return try await Self.applyBatch(
                        batch, waitingForLocks: waitingForLocks, readingCreations: true, connection: connection,
                        logger: logger, betweenReadAndWrite: betweenReadAndWrite)
                }
            }
            if !changedUsers.isEmpty {
                Task { await notifications.announce(userIDs: changedUsers) }
            }
            let written = zip(batch, outcomes).reduce(0) { sum, pair in
                guard case .success(let results)? = pair.1 else { return sum }
                return sum + results.count { $0.status == .applied }
            }
            if recordStatistics.wrote(written) {
                Task { await self.analyzeRecords() }
            }
            return outcomes
        } catch {
            return batch.map { _ in .failure(error) }
        }
    }

    /// Applies `batch` on `connection` in two statements, each its own transaction: one reads
    /// (``read(_:userIDs:readingCreations:connection:logger:)``), this process decides, one writes
    /// (``writeQuery(_:counters:versions:waitingForLocks:)``) for the users whose counter rows it locks at
    /// the counter read. Returns the outcome of each push, in order (`nil` for a push whose user's
    /// row was held elsewhere or had moved), and the users whose records changed.
    ///
    /// Unless `readingCreations`, the records that mutations create (``PushValidation/creates(_:)``)
    /// are not read: each is decided as for a record never stored, and inserted plainly. Where a
    /// record is stored under its name after all, the insert fails with a unique violation and
    /// the write changes nothing; the caller decides the batch again, reading them. A phone's
    /// first push creates every record it sends, and reads none.
    ///
    /// The write's answer comes after its commit: a push is answered only once what it decided is
    /// in the database.
    private static func applyBatch(
        _ batch: [WaitingPushes.Push], waitingForLocks: Bool, readingCreations: Bool, connection: PostgresConnection,
        logger: Logger, betweenReadAndWrite: (@Sendable () async throws -> Void)?
    ) async throws -> ([Result<[MutationResult], any Error>?], Set<Int64>) {
        let userIDs = Set(batch.map(\.userID)).sorted()
        var (state, versions) = try await read(
            batch, userIDs: userIDs, readingCreations: readingCreations, connection: connection, logger: logger)
        let counters = versions
        var outcomes: [Result<[MutationResult], any Error>?] = []
        outcomes.reserveCapacity(batch.count)
        for push in batch {
            guard let version = versions[push.userID] else {
                // The user is gone.
                outcomes.append(.failure(SyncServerError.unauthorized))
                continue
            }
            if let hash = push.tokenHash, state.tokenUsers[hash] != push.userID {
                // The token was revoked since this process looked it up.
                outcomes.append(.failure(SyncServerError.unauthorized))
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
        guard !state.forgotten.isEmpty else { return (outcomes, state.changedUsers) }
        try await betweenReadAndWrite?()
        let rows = try await connection.query(
            try writeQuery(state, counters: counters, versions: versions, waitingForLocks: waitingForLocks),
            logger: logger)
        var missed: Set<Int64> = []
        for try await users in rows.decode([Int64].self) {
            missed.formUnion(users)
        }
        guard !missed.isEmpty else { return (outcomes, state.changedUsers) }
        // Decided on what another transaction has changed since, or held: decided again.
        for (index, push) in batch.enumerated() where missed.contains(push.userID) {
            outcomes[index] = nil
        }
        return (outcomes, state.changedUsers.subtracting(missed))
    }

    /// What a batch of pushes reads and decides, before it is written.
    ///
    /// A batch of one push naming each record once (a phone's first push: thousands of
    /// creations) decides each mutation without a look-up of the ones before it: what earlier
    /// pushes of the batch decided and answered is indexed by record and by mutation only when a
    /// later push of the batch may need it.
    struct BatchState {
        /// Answers given before (read), with the fingerprints of what they answered, and those
        /// given to earlier pushes of a client that pushed again in this batch.
        var answers: [AnswerKey: (result: MutationResult, fingerprint: String?)] = [:]
        /// The highest mutation id answered to each client.
        var lastMutationIDs: [ClientKey: Int64] = [:]
        /// The records the database held when the batch read them (with their users' rows
        /// locked, so no other batch can add one of theirs before this one commits). A record
        /// that only creations name is not read, and not here: it is written as new.
        var stored: [UserRecordKey: ServerRecord] = [:]
        /// The records changed, each once with its last state, in the order first changed.
        private(set) var changed: [(key: UserRecordKey, record: ServerRecord)] = []
        var changedUsers: Set<Int64> = []
        /// The user of each token hash of the batch that is still in the database.
        var tokenUsers: [String: Int64] = [:]
        /// Answers to store: one row for each client, in the order its first push came.
        var newAnswers: [ClientKey: PushAnswers] = [:]
        var newAnswersOrder: [ClientKey] = []
        /// For each push, the answers its client already got: those below its smallest id.
        var forgotten: [(client: ClientKey, below: Int64)] = []
        /// The last version of each user that changed, for its history row.
        var historyTags: [Int64: String] = [:]

        /// Where each record of ``changed`` is in it, for the first ``indexedCount`` of them.
        private var changedIndex: [UserRecordKey: Int] = [:]
        private var indexedCount = 0

        /// Decides `push` against what the batch holds so far (with the rules of
        /// `PushResolution`): its results and the user's new counter. Throws, changing nothing,
        /// when the push reuses a client id.
        mutating func apply(_ push: WaitingPushes.Push, after version: Int64) throws -> ([MutationResult], Int64) {
            let client = ClientKey(userID: push.userID, clientID: push.clientID)
            let earlierAnswers = newAnswers[client]
            if let earlierAnswers {
                // This client pushed before in the batch: a retry of those mutations is
                // answered as they were.
                for (result, fingerprint) in zip(earlierAnswers.results, earlierAnswers.fingerprints) {
                    answers[AnswerKey(client: client, mutationID: result.mutationID)] = (result, fingerprint)
                }
            }
            indexChanged()
            var resolution = PushResolution(
                clientID: push.clientID, version: version, lastMutationID: lastMutationIDs[client])
            // What this push decides, kept apart until it is known not to be refused. A push
            // naming each record once never looks up its own decisions.
            let namesRepeat = !PushValidation.namesIncrease(push.mutations)
            var decided: [UserRecordKey: Int] = [:]
            var decisions: [(key: UserRecordKey, record: ServerRecord)] = []
            var pushAnswers = PushAnswers()
            var results: [MutationResult] = []
            // Sized once: a push of thousands of mutations otherwise grows each a dozen times.
            if namesRepeat { decided.reserveCapacity(push.mutations.count) }
            decisions.reserveCapacity(push.mutations.count)
            results.reserveCapacity(push.mutations.count)
            let (noAnswers, noRecords) = (answers.isEmpty, stored.isEmpty && changedIndex.isEmpty)
            for (mutation, fingerprint) in zip(push.mutations, push.fingerprints) {
                let key = UserRecordKey(
                    userID: push.userID, record: RecordKey(collection: mutation.collection, id: mutation.id))
                let answered = noAnswers ? nil : answers[AnswerKey(client: client, mutationID: mutation.mutationID)]
                let step = try resolution.resolve(mutation, fingerprint: fingerprint, answered: answered) {
                    if namesRepeat, let index = decided[key] { return decisions[index].record }
                    return noRecords ? nil : current(key)
                }
                switch step {
                case .answeredBefore(let result):
                    results.append(result)
                case .decided(let outcome):
                    if case .applied(let record, _) = outcome {
                        if namesRepeat, let index = decided[key] {
                            decisions[index].record = record
                        } else {
                            if namesRepeat { decided[key] = decisions.count }
                            decisions.append((key, record))
                        }
                    }
                    pushAnswers.append(outcome.result, fingerprint: fingerprint)
                    results.append(outcome.result)
                }
            }
            if changed.isEmpty {
                changed = decisions
            } else {
                for decision in decisions {
                    if let index = changedIndex[decision.key] {
                        changed[index].record = decision.record
                    } else {
                        changed.append(decision)
                    }
                }
            }
            if !decisions.isEmpty {
                changedUsers.insert(push.userID)
                historyTags[push.userID] = historyTags[push.userID] ?? HistoryTag.random()
            }
            if !pushAnswers.isEmpty {
                if var all = earlierAnswers {
                    for (result, fingerprint) in zip(pushAnswers.results, pushAnswers.fingerprints) {
                        all.append(result, fingerprint: fingerprint)
                    }
                    newAnswers[client] = all
                } else {
                    newAnswersOrder.append(client)
                    newAnswers[client] = pushAnswers
                }
            }
            if let last = push.mutations.last?.mutationID {
                lastMutationIDs[client] = max(lastMutationIDs[client] ?? last, last)
            }
            if let first = push.mutations.first?.mutationID {
                forgotten.append((client, first))
            }
            return (results, resolution.version)
        }

        /// The state of record `key` as the batch left it so far (``indexChanged()`` first).
        private func current(_ key: UserRecordKey) -> ServerRecord? {
            if let index = changedIndex[key] { return changed[index].record }
            return stored[key]
        }

        /// Indexes the records changed by the pushes decided so far.
        private mutating func indexChanged() {
            guard indexedCount < changed.count else { return }
            changedIndex.reserveCapacity(changed.count)
            for index in indexedCount..<changed.count {
                changedIndex[changed[index].key] = index
            }
            indexedCount = changed.count
        }

        /// Sizes the collections that grow with each mutation for a batch of `mutations`.
        mutating func reserveCapacity(mutations: Int) {
            changed.reserveCapacity(mutations)
        }
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

    /// Through `amber_sync_read_batch` (``PushFunctions/read``), one statement, locking nothing:
    /// the counter of each user of `userIDs` still in the database, and the state the batch is
    /// decided on: the users of the pushes' tokens, the answers already given to any mutation of
    /// `batch` (with the fingerprints of what they answered), the last mutation id each of its
    /// clients sent, and the current state of every record it touches, all as of one moment.
    ///
    /// Unless `readingCreations`, the records only creations name are not read: the write inserts
    /// them plainly, and fails where one is stored.
    private static func read(
        _ batch: [WaitingPushes.Push], userIDs: [Int64], readingCreations: Bool, connection: PostgresConnection,
        logger: Logger
    ) async throws -> (BatchState, versions: [Int64: Int64]) {
        var tokenHashes: [String] = []
        var clientUsers: [Int64] = []
        var clients: [String] = []
        var firstIDs: [Int64] = []
        var lastIDs: [Int64] = []
        var recordUsers: [Int64] = []
        var collections: [String] = []
        var ids: [String] = []
        for push in batch {
            if let hash = push.tokenHash { tokenHashes.append(hash) }
            clientUsers.append(push.userID)
            clients.append(push.clientID)
            firstIDs.append(push.mutations.first?.mutationID ?? 0)
            lastIDs.append(push.mutations.last?.mutationID ?? 0)
            for mutation in push.mutations where readingCreations || !PushValidation.creates(mutation) {
                recordUsers.append(push.userID)
                collections.append(mutation.collection)
                ids.append(mutation.id)
            }
        }
        let arguments = ReadBatch(
            userIDs: userIDs, tokenHashes: tokenHashes, clientUsers: clientUsers, clients: clients,
            firstIDs: firstIDs, lastIDs: lastIDs, recordUsers: recordUsers, collections: collections, ids: ids)
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: ReadBatch.sql, binds: arguments.bindings), logger: logger)
        var (state, versions) = (BatchState(), [Int64: Int64]())
        state.reserveCapacity(mutations: recordUsers.count)
        for try await row in rows.decode(ReadBatch.Row.self) {
            switch row {
            case ("u", let userID, _, let version?, _, _, _, _, _):
                versions[userID] = version
            case ("t", let userID, let hash, _, _, _, _, _, _):
                state.tokenUsers[hash] = userID
            case ("r", let userID, let clientID, _, let results?, let fingerprints?, _, _, _):
                let client = ClientKey(userID: userID, clientID: clientID)
                for (mutationID, answer) in try PushAnswers.read(results: results, fingerprints: fingerprints) {
                    state.answers[AnswerKey(client: client, mutationID: mutationID)] = answer
                }
            case ("m", let userID, let clientID, let mutationID?, _, _, _, _, _):
                state.lastMutationIDs[ClientKey(userID: userID, clientID: clientID)] = mutationID
            case (
                "c", let userID, let collection, _, let id?, let value, let version?, let createdVersion?,
                let fieldVersions?
            ):
                let key = UserRecordKey(userID: userID, record: RecordKey(collection: collection, id: id))
                state.stored[key] = ServerRecord(
                    record: try value.map {
                        JSONRecord(text: $0, object: try JSONText.decode(JSONObject.self, from: $0))
                    },
                    version: version,
                    createdVersion: createdVersion,
                    fieldVersions: try JSONText.decode([String: Int64].self, from: fieldVersions)
                )
            default:
                continue
            }
        }
        return (state, versions)
    }

    /// The arguments of the statement that reads a batch.
    struct ReadBatch: Sendable {
        var userIDs: [Int64]
        var tokenHashes: [String]
        /// The user and client id of each push, with its first and last mutation id.
        var clientUsers: [Int64]
        var clients: [String]
        var firstIDs: [Int64]
        var lastIDs: [Int64]
        var recordUsers: [Int64]
        var collections: [String]
        var ids: [String]

        /// What a row holds: its kind (`u` a user's counter, `t` a token, `r` a push's answers
        /// (``PushAnswers``), `m` a client's last mutation id, `c` a record) and the columns of that kind.
        typealias Row = (String, Int64, String, Int64?, String?, String?, Int64?, Int64?, String?)

        /// The statement: a call of `amber_sync_read_batch`.
        static let sql =
            "SELECT * FROM amber_sync_read_batch($1::int8[], $2::text[], $3::int8[], $4::text[], $5::int8[], "
            + "$6::int8[], $7::int8[], $8::text[], $9::text[])"

        var bindings: PostgresBindings {
            var bindings = PostgresBindings(capacity: 9)
            bindings.append(userIDs)
            bindings.append(tokenHashes)
            bindings.append(clientUsers)
            bindings.append(clients)
            bindings.append(firstIDs)
            bindings.append(lastIDs)
            bindings.append(recordUsers)
            bindings.append(collections)
            bindings.append(ids)
            return bindings
        }
    }

    /// Through `amber_sync_write_checked` (``PushFunctions/checkedWrite``), for the users whose
    /// counter is still the one the batch read (`counters`): the records' new states, the answers
    /// given (so a re-sent mutation gets the same one), a history row and the new counter of each
    /// user whose records changed (a batch that changed nothing of a user leaves its row as it
    /// is), and the forgetting of answers the clients already got (those of mutations below the
    /// smallest id of each push: a client sends a batch only after the previous was answered).
    /// Its one row holds the ids of the other users, for whom it wrote nothing.
    ///
    /// Records the database did not hold when the batch read them are inserted plainly: a record
    /// of a user written since would have moved the user's counter.
    private static func writeQuery(
        _ state: BatchState, counters: [Int64: Int64], versions: [Int64: Int64], waitingForLocks: Bool
    ) throws -> PostgresQuery {
        let (new, records): (RecordColumns, RecordColumns)
        if state.stored.isEmpty {
            (new, records) = (try RecordColumns(state.changed), try RecordColumns([]))
        } else {
            let stored = state.changed.filter { state.stored[$0.key] != nil }
            let unstored = state.changed.filter { state.stored[$0.key] == nil }
            (new, records) = (try RecordColumns(unstored), try RecordColumns(stored))
        }
        let answers = state.newAnswersOrder.map { ($0, state.newAnswers[$0]!) }
        let changedUsers = state.changedUsers.sorted()
        let users = counters.keys.sorted()
        return """
            SELECT amber_sync_write_checked(
                \(users)::int8[], \(users.map { counters[$0]! })::int8[], \(!waitingForLocks)::bool,
                \(state.forgotten.map(\.client.userID))::int8[], \(state.forgotten.map(\.client.clientID))::text[],
                \(state.forgotten.map(\.below))::int8[],
                \(ArrayBind(new.users))::int8[], \(ArrayBind(new.collections))::text[],
                \(ArrayBind(new.ids))::text[], \(ArrayBind(new.versions))::int8[],
                \(ArrayBind(new.createdVersions))::int8[], \(ArrayBind(new.values))::text[],
                \(new.deleted)::bool[], \(ArrayBind(new.fieldVersions))::text[],
                \(ArrayBind(records.users))::int8[], \(ArrayBind(records.collections))::text[],
                \(ArrayBind(records.ids))::text[], \(ArrayBind(records.versions))::int8[],
                \(ArrayBind(records.createdVersions))::int8[], \(ArrayBind(records.values))::text[],
                \(records.deleted)::bool[], \(ArrayBind(records.fieldVersions))::text[],
                \(answers.map(\.0.userID))::int8[], \(answers.map(\.0.clientID))::text[],
                \(answers.map { $0.1.lastMutationID! })::int8[], \(answers.map { $0.1.firstMutationID! })::int8[],
                \(answers.map(\.1.resultsText))::text[], \(answers.map(\.1.fingerprintsText))::text[],
                \(changedUsers)::int8[], \(changedUsers.map { versions[$0]! })::int8[],
                \(changedUsers.map { state.historyTags[$0]! })::text[],
                \(changedUsers)::int8[], \(changedUsers.map { versions[$0]! })::int8[]
            )
            """
    }
}

/// Records to write, as the columns of an `unnest`.
private struct RecordColumns {
    var users: [Int64] = []
    var collections: [String] = []
    var ids: [String] = []
    var versions: [Int64] = []
    var createdVersions: [Int64] = []
    /// The value's JSON text; empty for a deleted record (`deleted`).
    var values: [String] = []
    var deleted: [Bool] = []
    var fieldVersions: [String] = []

    init(_ records: [(PostgresSyncDatabase.UserRecordKey, ServerRecord)]) throws {
        for (key, record) in records {
            users.append(key.userID)
            collections.append(key.record.collection)
            ids.append(key.record.id)
            versions.append(record.version)
            createdVersions.append(record.createdVersion)
            values.append(record.record?.text ?? "")
            deleted.append(!record.isLive)
            fieldVersions.append(JSONText.encode(record.fieldVersions))
        }
    }
}

/// Pushes waiting to be applied on one server process, taken a batch at a time.
///
/// A user is in one batch at a time: the pushes of a user whose batch is being applied wait for
/// it to commit, and go together into a later batch, in the order they came.
///
/// A batch of few mutations takes about as long as its two round trips, whatever it holds, so
/// the pushes that arrive meanwhile wait for it and go together into the next: fewer, larger
/// batches cost the database and this process less than smaller ones applied side by side, each
/// paying its statements' fixed cost. Only next to large batches (``largeBatchMutations``: a
/// phone's first push), which take longer, does another batch start, up to ``maximumBatches``
/// at once, each on its own connection, so that other users' pushes are not held up behind
/// them.
final class WaitingPushes: Sendable {
    /// One push request, waiting for its outcome.
    struct Push: Sendable {
        let mutations: [Mutation]
        let fingerprints: [String]
        let clientID: String
        let userID: Int64
        /// The hash of the request's token, when the push checks it.
        let tokenHash: String?
        let continuation: CheckedContinuation<[MutationResult], any Error>
    }

    /// The most mutations in one batch, unless a single push has more.
    static let maximumMutations = 5_000

    /// The fewest mutations that make a batch large: next to batches as large, another batch
    /// may start.
    static let largeBatchMutations = 1_000

    /// The most batches applied at once.
    let maximumBatches: Int

    private struct State {
        var waiting: [Push] = []
        /// Batches being applied (including callers of ``nextBatch(after:)`` about to take one),
        /// how many of them are not large, and their users.
        var batches = 0
        var smallBatches = 0
        var busyUsers: Set<Int64> = []
        var applied = (transactions: 0, pushes: 0)
        var creationsReadAgain = 0
    }

    private let state = LockedValue(State())

    /// - Parameter maximumBatches: The most batches applied at once, at least 1.
    init(maximumBatches: Int) {
        self.maximumBatches = max(1, maximumBatches)
    }

    /// How many transactions have applied pushes, and how many pushes they applied.
    var applied: (transactions: Int, pushes: Int) {
        state.withLock { $0.applied }
    }

    /// How many pushes wait for a batch.
    var waitingCount: Int {
        state.withLock { $0.waiting.count }
    }

    /// How many batches were decided again because a record one of their mutations created as
    /// new was stored under its name.
    var creationsReadAgain: Int {
        state.withLock { $0.creationsReadAgain }
    }

    /// Counts a batch decided again, reading the records its creations name.
    func countCreationsReadAgain() {
        state.withLock { $0.creationsReadAgain += 1 }
    }

    /// Counts a transaction that applies `pushes` pushes.
    func count(transactionOf pushes: Int) {
        state.withLock {
            $0.applied.transactions += 1
            $0.applied.pushes += pushes
        }
    }

    /// Queues `push`; returns whether the caller must start applying batches (``nextBatch(after:)``
    /// until it returns `nil`): when the push's user is in no batch, fewer than
    /// ``maximumBatches`` are being applied, and all of those are large. Otherwise a caller
    /// applying batches takes it next.
    func add(_ push: Push) -> Bool {
        state.withLock { state in
            state.waiting.append(push)
            guard state.batches < maximumBatches, state.smallBatches == 0, !state.busyUsers.contains(push.userID)
            else { return false }
            // Small until it takes a batch: two callers that start together do not both start.
            state.batches += 1
            state.smallBatches += 1
            return true
        }
    }

    /// Ends the batch `finished` (empty for none) and takes the next: the pushes waiting whose
    /// users are in no other batch, in the order they came, up to ``maximumMutations`` mutations.
    /// `nil` when none can be taken; the caller then stops applying batches.
    func nextBatch(after finished: [Push]) -> [Push]? {
        state.withLock { state in
            for push in finished { state.busyUsers.remove(push.userID) }
            if Self.mutationCount(finished) >= Self.largeBatchMutations {
                // Counted as small again until it takes its next batch.
                state.smallBatches += 1
            }
            var batch: [Push] = []
            var left: [Push] = []
            var mutations = 0
            var full = false
            for push in state.waiting {
                if !full, !state.busyUsers.contains(push.userID) {
                    if batch.isEmpty || mutations + push.mutations.count <= Self.maximumMutations {
                        mutations += push.mutations.count
                        batch.append(push)
                        continue
                    }
                    // Full: every later push waits, so no user's push overtakes one left here.
                    full = true
                }
                left.append(push)
            }
            guard !batch.isEmpty else {
                state.batches -= 1
                state.smallBatches -= 1
                return nil
            }
            if mutations >= Self.largeBatchMutations { state.smallBatches -= 1 }
            for push in batch { state.busyUsers.insert(push.userID) }
            state.waiting = left
            return batch
        }
    }
}

extension WaitingPushes {
    /// How many mutations `pushes` hold.
    fileprivate static func mutationCount(_ pushes: [Push]) -> Int {
        pushes.reduce(0) { $0 + $1.mutations.count }
    }
}

extension PostgresSyncDatabase {
    /// Brings the planner's statistics of the records table up to date (see ``RecordStatistics``):
    /// its row count, and the statistics of the two columns a pull's plan depends on.
    func analyzeRecords() async {
        do {
            _ = try await collect("ANALYZE amber_sync_records (\(unescaped: RecordStatistics.analyzedColumns))")
            let rows = try await collect(
                "SELECT reltuples::int8 FROM pg_class WHERE oid = 'amber_sync_records'::regclass")
            recordStatistics.analyzed(rows: Int(try rows.first?.decode(Int64.self) ?? 0))
        } catch {
            logger.warning("cannot analyze the records table: \(error)")
            recordStatistics.analyzed(rows: nil)
        }
    }
}
