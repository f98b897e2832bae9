import Amber
import AmberLock
import AmberSQLite
import AmberSyncProtocol
import Foundation
import GRDB

/// Pushes and pulls for one ``SyncClient``, one sync at a time.
///
/// Everything it does runs off the main actor: network, decoding, merging, and the store writes
/// that bring the server's records in.
actor SyncEngine {
    let storage: SQLiteStorage
    /// The protocol's calls, over HTTP or another transport.
    let api: SyncAPI
    /// The mutations to push and the client id they go under.
    private(set) var outbox: Outbox
    /// This file's client id; a new one when the server finds another device using it.
    var clientID: String { outbox.clientID }
    let collections: LockedValue<[String: any SyncedCollection]>
    /// Told how far a sync has got, after each page pulled and each batch pushed.
    let progress: @Sendable (SyncProgress) -> Void
    /// Uploads the attachments a push names before it, and fetches those pulled records name.
    let attachments: AttachmentTransfers?
    /// Serializes syncs: a live sync and one the app asked for never interleave.
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Most pulled records applied in one SQLite transaction (tests make it smaller).
    var recordsPerTransaction = 10_000
    /// Whether a long push's first and last batches are smaller than the others
    /// (``batchLimit(remaining:first:batchSize:)``; tests that build a state by hand turn it off).
    private(set) var smallerEdgeBatches = true
    /// Push rounds per sync beyond those the pending records need: a merge makes a record
    /// pending again, to be pushed in the next round.
    static let pushRounds = 4

    init(
        storage: SQLiteStorage, api: SyncAPI, clientID: String,
        collections: LockedValue<[String: any SyncedCollection]>,
        progress: @escaping @Sendable (SyncProgress) -> Void = { _ in },
        attachments: AttachmentTransfers? = nil
    ) {
        self.attachments = attachments
        self.storage = storage
        self.api = api
        self.outbox = Outbox(storage: storage, clientID: clientID)
        self.collections = collections
        self.progress = progress
    }

    /// Pushes what is pending, pulls until caught up, and pushes what merging made pending.
    func sync() async throws(SyncError) -> SyncReport {
        await acquire()
        defer { release() }
        var report = Tally()
        do {
            // Answers received before the process stopped, and not applied, go in first.
            try applyKeptAnswers(into: &report)
            // A reset cut short (offline, killed) goes on first: nothing is pushed against an
            // old history.
            if try database({ try SyncSchema.isResettingHistory($0) }) {
                try await finishHistoryReset(into: &report)
            }
            try await push(into: &report)
            try await pull(into: &report)
        } catch let error where error.code == SyncErrorCode.historyChanged {
            // The server's history is not the one this file followed: its database was restored
            // from a backup or replaced. Pull everything again, merging it with local changes,
            // and push back every record the server does not have.
            try database { try SyncSchema.forgetHistory($0, databaseID: error.databaseID) }
            try await finishHistoryReset(into: &report)
        }
        try await push(into: &report)
        try await attachments?.downloadWanted()
        return SyncReport(pushed: report.pushed, pulled: report.pulled, merged: report.merged)
    }

    /// Pulls from the cursor ``SyncSchema/forgetHistory(_:databaseID:)`` left (0, or where an
    /// interrupted reset got to) until caught up, then marks what the server lacks for pushing.
    private func finishHistoryReset(into report: inout Tally) async throws(SyncError) {
        try await pull(from: try database { try SyncSchema.cursor($0) }, into: &report)
        try database { try SyncSchema.finishHistoryReset($0) }
    }

    /// Checks the database an answer names against the one this file synced with; remembers
    /// it the first time.
    ///
    /// - Throws: A ``SyncError`` with code `history_changed` when it is another database.
    private func check(databaseID: String?) throws(SyncError) {
        guard let databaseID else { return }
        let known = try database { db in
            let known = try SyncSchema.databaseID(db)
            if known == nil { try SyncSchema.setMeta(db, "databaseID", databaseID) }
            return known
        }
        if let known, known != databaseID {
            throw SyncError(
                .server(status: 200),
                "the server's database changed (from \(known) to \(databaseID)): pulling everything again",
                code: SyncErrorCode.historyChanged, databaseID: databaseID)
        }
    }

    /// Waits for the server to have something newer than the cursor, for up to `seconds`.
    ///
    /// - Returns: Whether it has.
    func waitForServer(seconds: Int) async throws(SyncError) -> Bool {
        let (cursor, tag) = try database { (try SyncSchema.cursor($0), try SyncSchema.cursorTag($0)) }
        let answer = try await api.pull(cursor: cursor, tag: tag, limit: 1, wait: seconds)
        try check(databaseID: answer.databaseID)
        return !answer.body.changes.isEmpty
    }

    private struct Tally {
        var pushed = 0
        var pulled = 0
        var merged: [SyncConflict] = []
    }

    // MARK: Push

    /// A push's answer, kept in the file and not yet applied.
    private struct Received {
        let batch: Outbox.Batch
        let response: PushResponse
        /// The JSON `response` was read from, kept as it is; `nil` when the transport gave none.
        let text: Data?
        /// The cursor the push was sent with.
        let cursor: Int64
        /// The cursor and tag applying the answer leaves.
        let cursorAfter: (Int64, String?)
        /// Whether the answer is kept in the file (`amber_sync_answers`).
        var kept = false
    }

    /// Pushes until nothing is pending: as many rounds as the pending records fill, and a few
    /// more for the records merges make pending again.
    ///
    /// While the server applies a batch, this client applies the answer to the batch before it,
    /// then plans the batch after it (into the outbox), so the server does not wait for that
    /// planning between batches: a batch is planned from the records after the last one sent
    /// (those sent are still pending until their answer is applied). The first and last batches
    /// of a long push are smaller (``batchLimit(remaining:first:batchSize:)``). The answer is kept in the
    /// file before the next batch goes, since the server then forgets it. A process stopped in
    /// between applies the kept answer when it next syncs (``applyKeptAnswers(into:)``); one stopped
    /// after planning ahead sends both batches' mutations together, the server answering again
    /// those it answered.
    private func push(into report: inout Tally) async throws(SyncError) {
        let pending = try outbox.pendingCount()
        // Batches until the records pending now are sent (each holds at least one), then extra rounds.
        var unsent = pending
        var rounds = Self.pushRounds
        var renewedClientID = false
        var done = SyncProgress(phase: .pushing, completed: 0, total: pending, bytes: 0)
        var held: Received?
        // The batch after the one at the server, planned while the server applied that one.
        var ahead: Outbox.Batch?
        while true {
            let known = collections.withLock { $0 }
            let batch: Outbox.Batch
            if let last = held?.batch.last {
                if let planned = ahead {
                    batch = planned
                    ahead = nil
                } else {
                    batch = try outbox.nextBatch(
                        for: known, after: last,
                        most: batchLimit(remaining: unsent, first: false))
                }
            } else {
                if let received = held {
                    try apply(received, into: &report, done: &done)
                    held = nil
                }
                guard unsent > 0 || rounds > 0 else { return }
                if unsent <= 0 { rounds -= 1 }
                batch = try outbox.nextBatch(
                    for: known, most: batchLimit(remaining: unsent, first: true))
            }
            guard !batch.isEmpty else {
                if let received = held {
                    // The records after the last batch are all sent: its answer goes in, and
                    // the next batch is planned from the start again.
                    try apply(received, into: &report, done: &done)
                    held = nil
                    continue
                }
                return
            }
            unsent -= batch.mutations.count
            // A record never reaches the server before the files it names.
            if batch.mayNameAttachments { try await attachments?.upload(referencedBy: batch.mutations) }
            let (cursor, cursorTag) =
                if let after = held?.cursorAfter { after } else {
                    try database { (try SyncSchema.cursor($0), try SyncSchema.cursorTag($0)) }
                }
            let request = PushRequest(
                clientID: clientID, mutations: batch.mutations, cursor: cursor, cursorTag: cursorTag)
            let answer: SyncAPI.Answer<PushResponse>
            do throws(SyncError) {
                if var received = held {
                    // The server works on this batch while this client applies the answer before
                    // it. The server forgets that answer when this batch reaches it: it is kept
                    // in the file until applied.
                    try database { db in
                        try SyncSchema.keepAnswer(
                            db, firstMutationID: received.batch.mutations[0].mutationID, cursor: received.cursor,
                            text: received.text.map { String(decoding: $0, as: UTF8.self) }
                                ?? JSONWriter.text(of: received.response))
                    }
                    received.kept = true
                    held = received
                }
                let api = api
                async let sent = Self.result { () async throws(SyncError) -> SyncAPI.Answer<PushResponse> in
                    try await api.push(request, written: batch.written)
                }
                do {
                    if let received = held { try apply(received, into: &report, done: &done) }
                    // The batch after this one is planned (and kept in the outbox) meanwhile
                    // too; a stop before it is sent leaves it unanswered, sent with this one
                    // next time.
                    if let last = batch.last {
                        ahead = try outbox.nextBatch(
                            for: known, after: last,
                            most: batchLimit(remaining: unsent, first: false))
                    }
                } catch {
                    _ = await sent
                    throw error
                }
                held = nil
                answer = try await sent.get()
            } catch let error where error.code == SyncErrorCode.clientIDReused && !renewedClientID {
                // Another device uses this client id (this file was copied): nothing was applied.
                // Take a new id; the pending records are planned again under it.
                renewedClientID = true
                // The batch planned ahead leaves the outbox with this one.
                ahead = nil
                try outbox.renewClientID()
                unsent += batch.mutations.count
                continue
            } catch let error where error.kind == .server(status: 413) && batch.mutations.count > 1 {
                // The server's body limit is below this batch (`amber-sync serve --max-body`), and
                // it applied none of it: the pending records go again in smaller batches.
                ahead = nil
                guard try outbox.shrinkBatches() else { throw error }
                unsent += batch.mutations.count
                continue
            }
            try check(databaseID: answer.databaseID)
            let response = answer.body
            held = Received(
                batch: batch, response: response, text: answer.text, cursor: cursor,
                cursorAfter: Self.cursor(from: (cursor, cursorTag), over: response))
        }
    }

    /// The most mutations the next batch plans, when fewer than a full batch: `nil` for a full one.
    ///
    /// While the server applies a batch, this client applies the answer to the one before and
    /// plans the one after, so each waits on the other only at the ends of a push: for the server
    /// to apply the first batch, and for the client to apply the last answer. A push of more than
    /// a batch makes both of those batches an eighth of a full one (``edgeDivisor``).
    ///
    /// - Parameters:
    ///   - remaining: The pending records not sent yet (an estimate: some need no push).
    ///   - first: Whether the batch is a push's first (nothing is at the server meanwhile).
    ///   - batchSize: The outbox's full batch (``Outbox/batchSize``).
    static func batchLimit(remaining: Int, first: Bool, batchSize: Int) -> Int? {
        let edge = max(batchSize / edgeDivisor, 1)
        let limit: Int
        if first {
            guard remaining > batchSize else { return nil }
            limit = edge
        } else {
            // The batch before the last leaves about `edge` records for the last, unless it
            // would be smaller than that itself: a remainder of up to two edges goes whole.
            guard remaining > 2 * edge, remaining <= batchSize + edge else { return nil }
            limit = remaining - edge
        }
        return limit < batchSize ? limit : nil
    }

    /// A push's first and last batches, when it has more than one, are a full batch divided by
    /// this (``batchLimit(remaining:first:batchSize:)``).
    static let edgeDivisor = 8

    /// ``batchLimit(remaining:first:batchSize:)`` for this outbox; `nil` (full batches) when
    /// ``smallerEdgeBatches`` is off.
    private func batchLimit(remaining: Int, first: Bool) -> Int? {
        smallerEdgeBatches ? Self.batchLimit(remaining: remaining, first: first, batchSize: outbox.batchSize) : nil
    }

    /// What `body` returns or throws, as a value: an `async let` of it throws no untyped error.
    private static func result<Value: Sendable>(_ body: @Sendable () async throws(SyncError) -> Value) async -> Result<
        Value, SyncError
    > {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    /// Applies a push's answer: the server's states of the records pushed, the cursor moved past
    /// this client's own changes, the kept answer dropped.
    private func apply(_ received: Received, into report: inout Tally, done: inout SyncProgress) throws(SyncError) {
        try applyAnswer(
            received.response, to: received.batch.mutations, sentAt: received.cursor,
            plannedAt: received.batch.sequences, into: &report)
        if received.kept {
            try database { try SyncSchema.dropAnswer($0, firstMutationID: received.batch.mutations[0].mutationID) }
        }
        done.completed += received.batch.mutations.count
        done.total = max(done.total ?? 0, done.completed)
        done.bytes += received.batch.bytes
        progress(done)
    }

    /// - Parameter sequences: Each key's write sequence when the mutations were planned, if known.
    private func applyAnswer(
        _ response: PushResponse, to mutations: [Mutation], sentAt cursor: Int64,
        plannedAt sequences: [String: Int64] = [:], into report: inout Tally
    ) throws(SyncError) {
        let answers = Outbox.answers(to: mutations, results: response.results)
        report.pushed += answers.applied
        report.pulled += answers.refused
        for key in answers.order {
            report.merged += try apply(answers.states[key] ?? [], to: key, plannedAt: sequences[key])
        }
        try moveCursor(from: cursor, over: response)
    }

    /// Applies the push answers kept and not applied (the process stopped in between), to the
    /// mutations of theirs still unanswered in the outbox.
    private func applyKeptAnswers(into report: inout Tally) throws(SyncError) {
        for kept in try database({ try SyncSchema.keptAnswers($0) }) {
            let mutations = try outbox.unanswered(for: collections.withLock { $0 })
            let byID = Dictionary(mutations.map { ($0.mutationID, $0) }, uniquingKeysWith: { first, _ in first })
            // Those of collections applied before the stop have left the outbox already.
            let answered = kept.response.results.filter { byID[$0.mutationID] != nil }
            let response = PushResponse(
                results: answered, cursor: kept.response.cursor, cursorTag: kept.response.cursorTag)
            try applyAnswer(
                response, to: answered.compactMap { byID[$0.mutationID] }, sentAt: kept.cursor, into: &report)
            try database { try SyncSchema.dropAnswer($0, firstMutationID: kept.firstMutationID) }
        }
    }

    /// The cursor and tag that applying `answer` to a push sent at `cursor` leaves: past this
    /// client's own changes when ``moveCursor(from:over:)`` moves it.
    private static func cursor(from cursor: (Int64, String?), over answer: PushResponse) -> (Int64, String?) {
        guard let moved = answer.cursor, let tag = answer.cursorTag, moved > cursor.0,
            PushResponse.cursor(after: cursor.0, applying: answer.results) == moved
        else { return cursor }
        return (moved, tag)
    }

    /// Moves the cursor past this client's own changes when the push's answer says that the
    /// versions right after `cursor` are all theirs (and the results agree): pulling them would
    /// only bring back what this file already holds.
    private func moveCursor(from cursor: Int64, over answer: PushResponse) throws(SyncError) {
        let (moved, tag) = Self.cursor(from: (cursor, nil), over: answer)
        guard moved != cursor else { return }
        try database { db in
            // Only from where the push began: a pull in between already moved it.
            guard try SyncSchema.cursor(db) == cursor else { return }
            try SyncSchema.setCursor(db, moved, tag: tag)
        }
    }

    // MARK: Pull

    private func pull(into report: inout Tally) async throws(SyncError) {
        do {
            try await pull(from: try database { try SyncSchema.cursor($0) }, into: &report)
        } catch let error where error.kind == .server(status: 410) && error.code != SyncErrorCode.historyChanged {
            // The server forgot deletions older than the cursor: pull everything again, then
            // remove what it no longer has (records with local changes stay, to be pushed).
            var seen: [String: Set<String>] = [:]
            try await pull(from: 0, into: &report, seen: &seen)
            try forgetRecords(notIn: seen, report: &report)
        }
    }

    private func pull(from start: Int64, into report: inout Tally) async throws(SyncError) {
        var seen: [String: Set<String>]?
        try await pullPages(from: start, into: &report, seen: &seen)
    }

    private func pull(from start: Int64, into report: inout Tally, seen: inout [String: Set<String>])
        async throws(SyncError)
    {
        var collected: [String: Set<String>]? = [:]
        try await pullPages(from: start, into: &report, seen: &collected)
        seen = collected ?? [:]
    }

    /// Removes, as a deletion from the server, every record of a synced collection that the server
    /// once had and did not list in a pull from 0.
    private func forgetRecords(notIn seen: [String: Set<String>], report: inout Tally) throws(SyncError) {
        for key in collections.withLock({ Array($0.keys) }) {
            let known = try database { db in
                try String.fetchAll(db, sql: "SELECT id FROM amber_sync_base WHERE key = ?", arguments: [key])
            }
            let gone = known.filter { !(seen[key]?.contains($0) ?? false) }
            guard !gone.isEmpty else { continue }
            report.pulled += gone.count
            report.merged += try apply(
                gone.map { ServerState(id: $0, version: 0, value: nil) }, to: key)
        }
    }

    /// Pulls pages from `start` until caught up, applying them; collects the ids listed in `seen`.
    ///
    /// Pages are fetched ahead while pages are applied, by a task of their own (``PageFetcher``):
    /// the server reads and sends them, and this client parses them, while this client writes.
    /// It runs at most the pages of one transaction ahead. Pages are applied together,
    /// ``recordsPerTransaction`` records or a sixth of the records a pull from 0 lists, whichever
    /// is more, in one SQLite transaction with the cursor after them: a transaction rewrites every
    /// B-tree page its records land on, and records with random ids land on a new page each, so
    /// fewer, larger transactions write each page fewer times. The first page goes alone, and each
    /// transaction after it is no larger than what the pull wrote before, so the writing starts
    /// as soon as the first page is here. Progress is reported per page received.
    private func pullPages(from start: Int64, into report: inout Tally, seen: inout [String: Set<String>]?)
        async throws(SyncError)
    {
        var cursor = start
        let startTag = start == 0 ? nil : try database { try SyncSchema.cursorTag($0) }
        var tag = startTag
        var fetcher = PageFetcher(api: api, cursor: start, tag: startTag)
        defer { fetcher.stop() }
        var done = SyncProgress(phase: .pulling, completed: 0, total: nil, bytes: 0)
        var held = HeldPages()
        // Records of this pull applied so far.
        var applied = 0
        while true {
            let answer = try await fetcher.next()
            try check(databaseID: answer.databaseID)
            let page = answer.body
            if let total = page.total { done.total = Int(clamping: total) }
            for change in page.changes {
                guard change.version > cursor else {
                    throw SyncError(
                        .protocolViolation,
                        "the pull answered a change at version \(change.version), not after \(cursor)")
                }
            }
            let more = PageFetcher.hasMore(after: page)
            if page.cursor > cursor {
                (cursor, tag) = (page.cursor, page.cursorTag)
            }
            for change in page.changes { seen?[change.collection, default: []].insert(change.id) }
            held.add(page.changes)
            try attachments?.noteWanted(in: page.changes)
            done.completed += page.changes.count
            done.bytes += page.changes.reduce(0) { $0 + ($1.record?.text.utf8.count ?? 0) }
            if let total = done.total, done.completed > total { done.total = done.completed }
            // A pull that finds nothing (most of live sync's) reports nothing.
            if !page.changes.isEmpty { progress(done) }
            // A large first sync applies a sixth of the account at a time: the rewrites of
            // B-tree pages then stay a few per page however large the account.
            let largest = max(recordsPerTransaction, (done.total ?? 0) / 6)
            fetcher.allowAhead(pages: largest / SyncLimits.defaultPullLimit)
            // No larger than what this pull applied before: the first page is written as soon as
            // it is here, and the writing starts while the next pages are fetched. A transaction
            // rewrites each B-tree page its records land on, so while the tables are as small as
            // what it adds, a small one costs no more a record than a large one.
            let transactionSize = min(largest, max(1, applied))
            guard held.count >= transactionSize || !more else { continue }
            let known = collections.withLock { $0 }
            // A collection no store was added for is skipped: adding its store later pulls from 0.
            for key in held.order where known[key] != nil {
                report.pulled += held.states[key]?.count ?? 0
                report.merged += try apply(held.states[key] ?? [], to: key)
            }
            try database { [cursor, tag] in try SyncSchema.setCursor($0, cursor, tag: tag) }
            applied += held.count
            held = HeldPages()
            guard more else { return }
        }
    }

    /// Records pulled and not yet applied, by collection in the order they came.
    private struct HeldPages {
        var states: [String: [ServerState]] = [:]
        var order: [String] = []
        var count = 0

        mutating func add(_ changes: [RecordChange]) {
            for change in changes {
                if states[change.collection] == nil { order.append(change.collection) }
                states[change.collection, default: []].append(
                    ServerState(id: change.id, version: change.version, value: change.record))
            }
            count += changes.count
        }
    }

    /// Plans push batches of at most `count` mutations (tests make them smaller), the first and
    /// last of a long push smaller still unless `smallerEdges` is `false`.
    func apply(pushBatchSize count: Int, smallerEdges: Bool = true) {
        outbox = Outbox(storage: storage, clientID: outbox.clientID, batchSize: count)
        smallerEdgeBatches = smallerEdges
    }

    /// Sets ``recordsPerTransaction``.
    func apply(recordsPerTransaction count: Int) {
        recordsPerTransaction = count
    }

    // MARK: Support

    private func apply(_ states: [ServerState], to key: String, plannedAt sequence: Int64? = nil) throws(SyncError)
        -> [SyncConflict]
    {
        guard let collection = collections.withLock({ $0[key] }) else { return [] }
        do {
            return try collection.apply(states, plannedAt: sequence)
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.storage, "cannot write the changes of \(key): \(error)", underlyingError: error)
        }
    }

    private func database<R>(_ body: (Database) throws -> R) throws(SyncError) -> R {
        try storage.syncWrite(body)
    }

    private func acquire() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}
