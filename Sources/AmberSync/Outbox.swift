import AmberSQLite
import AmberSyncProtocol
import Foundation
import GRDB

/// What a client has to push, kept in its storage file: the mutations planned from the pending
/// records, each with an id of its own, and the client id they are sent under.
///
/// A batch, once planned, is written to `amber_sync_outbox` before it is sent, and leaves it in
/// the transaction that applies its answer (``markAnswered(_:in:)``). Each run of its mutations of
/// one collection is one row, keyed by the run's first mutation id (a `MutationRun`); rows of one
/// mutation each, written by earlier versions, are read too. A run of records as the store holds
/// them is written without their texts (`MutationRun.textWithoutValues(_:)`), which the store
/// keeps, or `amber_sync_outbox_kept` once a record changes (see `SyncSchema`). A batch sent and not
/// answered (a crash, a lost connection) is sent again exactly as it was, with the same mutation
/// ids, so the server never applies it twice. When the server finds another device using the
/// client id (this file was copied), ``renewClientID()`` takes a new one and drops the unanswered
/// batch, to be planned again under it.
struct Outbox: Sendable {
    let storage: SQLiteStorage
    /// Most mutations per batch.
    private(set) var batchSize: Int
    /// Most bytes of records a new batch plans; a larger record still goes, alone.
    private(set) var batchBytes: Int
    /// This file's client id.
    private(set) var clientID: String

    /// Most mutations per push. Each push costs the client three small transactions and the
    /// server one, whatever its size: a phone's first push of 100,000 notes of about 250 bytes
    /// takes 25 of them at 4,000 a push, where ``defaultBatchBytes`` is reached too.
    static let defaultBatchSize = 4_000
    /// Most bytes of records per push: well under the server's default body limit
    /// (``SyncLimits/defaultMaximumBody``, 8 MiB), so a batch of large records is not refused.
    static let defaultBatchBytes = 1_048_576

    init(
        storage: SQLiteStorage, clientID: String, batchSize: Int = Outbox.defaultBatchSize,
        batchBytes: Int = Outbox.defaultBatchBytes
    ) {
        precondition(batchSize > 0 && batchBytes > 0, "A batch holds at least one mutation.")
        self.storage = storage
        self.clientID = clientID
        self.batchSize = batchSize
        self.batchBytes = batchBytes
    }

    /// Mutations to send, with the size of their JSON.
    struct Batch: Sendable {
        let mutations: [Mutation]
        let bytes: Int
        /// For a batch planned from the pending records, the last record it holds, in the order
        /// of planning: the next batch may be planned after it while this one is unanswered.
        var last: Position? = nil
        /// For a batch planned from the pending records, each of its keys' write sequence
        /// (`SQLiteStorage.writeSequence(_:key:)`) when it was planned.
        var sequences: [String: Int64] = [:]
        /// For a batch planned here, its mutations as a push writes them (the elements of its
        /// array), written once for the outbox and the request.
        var written: [UInt8]? = nil
        /// Whether a record of the batch may name an attachment (``AttachmentReference/mayOccur(in:)``):
        /// looked at as the batch is planned, which for all but a push's first batch happens while
        /// the server applies the batch before, rather than as it is sent.
        let mayNameAttachments: Bool

        init(
            mutations: [Mutation], bytes: Int, last: Position? = nil, sequences: [String: Int64] = [:],
            written: [UInt8]? = nil
        ) {
            self.mutations = mutations
            self.bytes = bytes
            self.last = last
            self.sequences = sequences
            self.written = written
            mayNameAttachments = mutations.contains { mutation in
                mutation.record.map { AttachmentReference.mayOccur(in: $0.text) } ?? false
            }
        }

        var isEmpty: Bool { mutations.isEmpty }
    }

    /// The records of any collection written here since they last agreed with the server.
    func pendingCount() throws(SyncError) -> Int {
        try storage.syncWrite { try SQLiteChangeLog.writtenCount($0) }
    }

    /// The mutations to send: those sent before and not answered, as they were, or else new ones
    /// for the records of `collections` written since they last agreed: at most ``batchSize``,
    /// and no more records than fill ``batchBytes`` (at least one).
    ///
    /// Pending records that need no push (equal to what the server has) stop being pending as
    /// they are looked at, so a real change behind many unchanged records is found too.
    ///
    /// - Throws: ``SyncError`` of kind ``SyncError/Kind/misuse`` when an unanswered mutation is of
    ///   a collection not in `collections`; of kind ``SyncError/Kind/storage`` when the file fails.
    ///
    /// - Parameters:
    ///   - collections: The synced collections.
    ///   - position: Plan only records after this one, and leave the mutations sent and not
    ///     answered alone: the batch that ended there is still at the server, and its records
    ///     are still pending.
    ///   - most: Plan at most this many mutations (at least one), and as large a share of
    ///     ``batchBytes``, when it is below ``batchSize``: a push's first and last batches are
    ///     smaller, so that neither side waits long for the other (``SyncEngine``).
    func nextBatch(
        for collections: [String: any SyncedCollection], after position: Position? = nil, most: Int? = nil
    ) throws(SyncError) -> Batch {
        try storage.syncWrite { db in
            if position == nil, let unanswered = try unansweredBatch(db, collections: collections) { return unanswered }
            guard !collections.isEmpty else { return Batch(mutations: [], bytes: 0) }
            let size = min(max(most ?? batchSize, 1), batchSize)
            let planned = try plan(
                db, collections: collections, after: position, size: size,
                bytes: max(Int((Double(batchBytes) * Double(size) / Double(batchSize)).rounded(.up)), 1))
            guard !planned.isEmpty else { return Batch(mutations: [], bytes: 0) }
            let first = try SyncSchema.takeMutationIDs(db, count: planned.count)
            // Texts kept for mutations sent before are not these records' now.
            try Self.forgetKeptTexts(db, of: planned.filter(\.shared))
            let insert = try db.cachedStatement(
                sql: "INSERT INTO amber_sync_outbox (mutation_id, collection, body, shared) VALUES (?, ?, ?, ?)")
            let mutations = planned.enumerated().map { offset, plan in
                Mutation(
                    mutationID: first + Int64(offset), collection: plan.key, id: plan.id,
                    baseVersion: plan.baseVersion, record: plan.value, fields: plan.fields)
            }
            var bytes = 0
            var written = JSONWriter(
                capacity: planned.reduce(planned.count * 128) { $0 + ($1.value?.text.utf8.count ?? 0) })
            // One row for each run of one collection's mutations (the planned records come in
            // the order of their keys): a batch is a few statements, not one a mutation. A run of
            // values the store holds is written without them (see `SyncSchema`): the outbox then
            // keeps no second copy of each record pushed.
            var start = 0
            while start < mutations.count {
                var end = start + 1
                while end < mutations.count, mutations[end].collection == mutations[start].collection,
                    planned[end].shared == planned[start].shared
                {
                    end += 1
                }
                if start > 0 { written.raw(",") }
                let runStart = written.bytes.endIndex
                written.writeElements(mutations[start..<end])
                bytes += Self.emptyRunBytes + (written.bytes.endIndex - runStart)
                let shared = planned[start].shared
                let body =
                    shared
                    ? MutationRun.textWithoutValues(mutations[start..<end])
                    : MutationRun.text(elements: written.bytes[runStart...])
                try insert.execute(arguments: [
                    mutations[start].mutationID, mutations[start].collection, body, shared,
                ])
                start = end
            }
            var sequences: [String: Int64] = [:]
            // The planned records come in the order of their keys.
            for (offset, plan) in planned.enumerated() where offset == 0 || planned[offset - 1].key != plan.key {
                sequences[plan.key] = try SQLiteStorage.writeSequence(db, key: plan.key)
            }
            return Batch(
                mutations: mutations, bytes: bytes, last: planned.last.map { Position(key: $0.key, id: $0.id) },
                sequences: sequences, written: written.bytes)
        }
    }

    /// The mutations sent and not answered, in the order of their ids.
    ///
    /// - Throws: ``SyncError`` of kind ``SyncError/Kind/misuse`` when one is of a collection not
    ///   in `collections`.
    func unanswered(for collections: [String: any SyncedCollection]) throws(SyncError) -> [Mutation] {
        try storage.syncWrite { db in try unansweredBatch(db, collections: collections)?.mutations ?? [] }
    }

    /// Plans batches half as large from now on, for a server that refused a batch as too large
    /// (`413`, applying none of it): the mutations sent and not answered are dropped, to be
    /// planned again from the pending records.
    ///
    /// - Returns: Whether the batches could shrink; not when they already hold one mutation.
    mutating func shrinkBatches() throws(SyncError) -> Bool {
        guard batchSize > 1 else { return false }
        batchSize = max(batchSize / 2, 1)
        batchBytes = max(batchBytes / 2, 1)
        try storage.syncWrite { try SyncSchema.clearOutbox($0) }
        return true
    }

    /// Takes a new client id, for a file whose id another device uses too; the mutations sent
    /// under the old one and not answered are dropped, to be planned again from the pending records.
    mutating func renewClientID() throws(SyncError) {
        clientID = try storage.syncWrite { try SyncSchema.renewClientID($0) }
    }

    /// The server's states of the records `mutations` pushed, by collection in the order the
    /// collections first appear, each marked as the answer to its mutation.
    ///
    /// - Parameters:
    ///   - mutations: The batch sent.
    ///   - results: The server's results, one per mutation in the same order.
    /// - Returns: The states, and how many mutations the server applied and how many it refused
    ///   (a conflict: the server's record comes back instead).
    static func answers(to mutations: [Mutation], results: [MutationResult]) -> Answers {
        precondition(
            mutations.map(\.mutationID) == results.map(\.mutationID),
            "The results answer the mutations one by one, in order.")
        var answers = Answers()
        for (mutation, result) in zip(mutations, results) {
            let applied = result.status == .applied
            // An applied mutation's answer carries a value only when the server merged it.
            let value: JSONRecord? =
                applied && result.value == nil ? mutation.record : result.value.map(JSONRecord.init)
            if applied { answers.applied += 1 } else { answers.refused += 1 }
            var state = ServerState(id: mutation.id, version: result.version, value: value)
            state.answered = mutation.mutationID
            // A conflict is measured against the base the mutation was made from, as a pulled change is.
            if applied { state.applied = .init(record: mutation.record, asSent: result.value == nil) }
            if answers.states[mutation.collection] == nil { answers.order.append(mutation.collection) }
            answers.states[mutation.collection, default: []].append(state)
        }
        return answers
    }

    /// What a push's answer brings back: the server's states of the records pushed.
    struct Answers: Sendable {
        var states: [String: [ServerState]] = [:]
        /// The collections in the order they first appear in the batch.
        var order: [String] = []
        var applied = 0
        var refused = 0
    }

    /// Removes an answered mutation from the outbox, in the transaction that applies its answer.
    static func markAnswered(_ mutationID: Int64, in db: Database) throws {
        try markAnswered([mutationID], in: db)
    }

    /// Removes answered mutations from the outbox: one statement for each run of consecutive ids
    /// (a batch's mutations of one collection are one run). A row holding a run of mutations goes
    /// with its first one: a run's mutations are answered together.
    static func markAnswered(_ mutationIDs: [Int64], in db: Database) throws {
        let delete = try db.cachedStatement(sql: "DELETE FROM amber_sync_outbox WHERE mutation_id BETWEEN ? AND ?")
        var ids = mutationIDs.sorted()[...]
        while let first = ids.first {
            var last = first
            ids = ids.dropFirst()
            while ids.first == last + 1 || ids.first == last {
                last = ids.removeFirst()
            }
            try delete.execute(arguments: [first, last])
        }
        // The texts kept for runs of collections none of whose runs is left.
        try db.cachedStatement(
            sql: """
                DELETE FROM amber_sync_outbox_kept
                WHERE key NOT IN (SELECT collection FROM amber_sync_outbox WHERE shared = 1)
                """
        ).execute()
    }

    /// The bytes of a run's text beside its mutations', `{"mutations":[]}`.
    private static let emptyRunBytes = MutationRun.text(elements: EmptyCollection()).utf8.count

    /// Forgets the texts kept for the records of `planned`, planned again with the text the store
    /// holds now; nothing to do, and one look, when no text is kept (most batches).
    private static func forgetKeptTexts(_ db: Database, of planned: [Plan]) throws {
        guard !planned.isEmpty,
            try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM amber_sync_outbox_kept)")) == true
        else { return }
        let delete = try db.cachedStatement(sql: "DELETE FROM amber_sync_outbox_kept WHERE key = ? AND id = ?")
        for plan in planned {
            try delete.execute(arguments: [plan.key, plan.id])
        }
    }

    /// The mutations of a run written without their values, each given the text it was sent
    /// with: the one kept when the record changed or went since, else the store's.
    ///
    /// - Throws: ``SyncError`` of kind ``SyncError/Kind/storage`` when neither has a record's
    ///   text (the file was changed by other means than this library).
    private static func withKeptValues(_ mutations: [Mutation], _ db: Database) throws -> [Mutation] {
        guard let collection = mutations.first?.collection else { return mutations }
        var ids = JSONWriter(capacity: mutations.count * 40)
        ids.write(mutations.map(\.id))
        let texts = try String?.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT coalesce(k.value, r.value) FROM json_each(?1) j
                    LEFT JOIN amber_sync_outbox_kept k ON k.key = ?2 AND k.id = j.value
                    LEFT JOIN amber_records r ON r.key = ?2 AND r.id = j.value
                    ORDER BY j.key
                    """),
            arguments: [String(decoding: ids.bytes, as: UTF8.self), collection])
        guard texts.count == mutations.count else {
            throw SyncError(.storage, "the outbox's records of \(collection) could not be read back")
        }
        return try zip(mutations, texts).map { mutation, text in
            guard let text else {
                throw SyncError(
                    .storage,
                    "the text of record \(mutation.id) of \(collection), sent and not yet answered, is gone from the file"
                )
            }
            // The store's text, checked when it was written.
            return Mutation(
                mutationID: mutation.mutationID, collection: mutation.collection, id: mutation.id,
                baseVersion: mutation.baseVersion, record: JSONRecord(unchecked: text), fields: mutation.fields)
        }
    }

    // MARK: Planning

    private func unansweredBatch(_ db: Database, collections: [String: any SyncedCollection]) throws -> Batch? {
        let unanswered = try Row.fetchAll(
            db, sql: "SELECT collection, body FROM amber_sync_outbox ORDER BY mutation_id")
        guard !unanswered.isEmpty else { return nil }
        var bytes = 0
        let mutations = try unanswered.flatMap { row in
            let collection: String = row[0]
            guard collections[collection] != nil else {
                throw SyncError(
                    .misuse,
                    "changes of the store with key \(collection) were sent and not yet answered; add that store to the client before syncing"
                )
            }
            let body: String = row[1]
            guard MutationRun.isRun(body) else {
                bytes += body.utf8.count
                return [try Mutation(jsonBytes: body.utf8)]
            }
            let run = try MutationRun(jsonBytes: body.utf8)
            guard run.valuesKeptApart else {
                bytes += body.utf8.count
                return run.mutations
            }
            let mutations = try Self.withKeptValues(run.mutations, db)
            bytes += JSONWriter.text(of: MutationRun(mutations)).utf8.count
            return mutations
        }
        return Batch(mutations: mutations, bytes: bytes)
    }

    /// A pending record's place in the order batches are planned in: by key, then id, as SQLite
    /// orders their bytes.
    struct Position: Sendable, Equatable {
        let key: String
        let id: String
    }

    /// A planned mutation; `shared` when its value is the very text the store holds for the record.
    private typealias Plan = (
        key: String, id: String, baseVersion: Int64?, value: JSONRecord?, fields: [String]?, shared: Bool
    )

    /// Plans at most `size` mutations, of at most `bytes` bytes of records (at least one).
    private func plan(
        _ db: Database, collections: [String: any SyncedCollection], after position: Position?, size: Int,
        bytes limit: Int
    ) throws -> [Plan] {
        let keys = Array(collections.keys)
        var arguments = StatementArguments(keys)
        if let position { arguments += [position.key, position.id] }
        var planned: [Plan] = []
        var bytes = 0
        // Records that need no push leave the pending list as they are looked at, so the next
        // look finds the ones after them: a real change behind many unchanged ones is pushed too.
        var looked = size
        while planned.isEmpty, looked == size {
            // Each row's columns taken as it is stepped, not copied into a `Row` first.
            var rows: [(key: String, id: String, localText: String?, baseVersion: Int64?, baseText: String?)] = []
            let cursor = try Row.fetchCursor(
                db,
                sql: """
                    SELECT p.key, p.id, r.value, b.version, \(SyncSchema.baseValue) FROM \(SQLiteChangeLog.table) p
                    LEFT JOIN amber_records r ON r.key = p.key AND r.id = p.id
                    LEFT JOIN amber_sync_base b ON b.key = p.key AND b.id = p.id
                    WHERE p.key IN (\(keys.map { _ in "?" }.joined(separator: ", ")))
                    \(position == nil ? "" : "AND (p.key, p.id) > (?, ?)")
                    ORDER BY p.key, p.id LIMIT \(size)
                    """,
                arguments: arguments)
            while let row = try cursor.next() {
                rows.append((row[0], row[1], row[2], row[3], row[4]))
            }
            looked = rows.count
            for (key, id, localText, baseVersion, baseText) in rows {
                // Full: the records left stay pending, for the next batch.
                guard bytes < limit else { break }
                // The store's own text, sent as it is; read only to compare it with a base.
                let local = localText.map(JSONRecord.init(unchecked:))
                let base = baseVersion.map { version in
                    SyncSchema.Base(version: version, value: baseText.map(JSONRecord.init(unchecked:)))
                }
                switch collections[key]?.plan(local: local, base: base) ?? .upToDate {
                case .upToDate:
                    try SyncSchema.setPending(db, key: key, id: id, false)
                case .send(let baseVersion, let value, let fields):
                    let shared =
                        value.map { value in localText.map { value.text.hasSameUTF8(as: $0) } ?? false } ?? false
                    planned.append((key, id, baseVersion, value, fields, shared))
                    bytes += value?.text.utf8.count ?? 0
                }
            }
        }
        return planned
    }
}
