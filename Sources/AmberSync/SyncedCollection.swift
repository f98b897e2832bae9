import Amber
import AmberSQLite
import AmberSyncProtocol
import Foundation
import GRDB

/// The server's state of one record, to bring into a store.
struct ServerState: Sendable {
    let id: String
    /// The record's version on the server; 0 when the server does not have the record at all
    /// (its deletion was pruned, or its database lost it), which no base is newer than.
    let version: Int64
    /// The record on the server, `nil` when deleted.
    let value: JSONRecord?
    /// For the answer to a mutation of this client: its id, which leaves the outbox in the same
    /// transaction.
    var answered: Int64? = nil
    /// For a mutation the server applied: what was sent. The local value is then measured against
    /// it, not against the older base.
    var applied: Sent? = nil

    struct Sent {
        /// The record sent: the store's text when it was planned, `nil` for a deletion.
        let record: JSONRecord?
        /// Whether the server stored what was sent as it was (not merged with other fields).
        let asSent: Bool
    }
}

/// What to push for one pending record.
enum MutationPlan {
    /// Nothing to send: the record equals what the server has.
    case upToDate
    case send(baseVersion: Int64?, value: JSONRecord?, fields: [String]?)
}

/// A store that a ``SyncClient`` syncs, with its value type erased.
protocol SyncedCollection: Sendable {
    var key: String { get }
    /// What to push for a record, from its local JSON and the base it last agreed on.
    func plan(local: JSONRecord?, base: SyncSchema.Base?) -> MutationPlan
    /// Brings server states into the store as one transaction of origin `.sync`, with the sync
    /// tables updated in the same SQLite transaction.
    ///
    /// - Parameters:
    ///   - states: The server's states.
    ///   - sequence: For the answers to a push, the key's write sequence when its mutations were
    ///     planned, if known: when no write of the key came since, the store still holds what
    ///     was sent, and it is not read again.
    /// - Returns: The records merged with conflicting fields.
    func apply(_ states: [ServerState], plannedAt sequence: Int64?) throws -> [SyncConflict]
    /// Local writes (this process's and other processes'), as signals.
    func localWrites() -> AsyncStream<Void>
}

/// A store of `Value`s as sync sees it.
final class TypedCollection<Value: Identifiable & Sendable & Codable>: SyncedCollection
where Value.ID: Sendable & Codable {
    /// Returns the value to keep and the fields in conflict, or `nil` for "compare the JSON".
    typealias Resolve =
        @Sendable (_ base: Value?, _ mine: Value, _ theirs: Value) -> (value: Value, conflicts: [String]?)

    let key: String
    let store: IdentityStore<Value>
    let resolve: Resolve

    init(store: IdentityStore<Value>, key: String, resolve: @escaping Resolve) {
        self.store = store
        self.key = key
        self.resolve = resolve
    }

    // MARK: Coding

    private func decode(_ record: JSONRecord) -> Value? {
        try? JSONDecoder().decode(Value.self, from: Data(record.text.utf8))
    }

    private func encode(_ value: Value) throws -> JSONObject {
        try JSONCoding.object(try JSONEncoder().encode(value))
    }

    /// The server's object as this model writes it: fields the model does not know are dropped,
    /// so they never count as local changes. `nil` when it does not decode as a `Value`.
    private func localized(_ record: JSONRecord) -> JSONObject? {
        decode(record).flatMap { try? encode($0) }
    }

    // MARK: Pushing

    func plan(local record: JSONRecord?, base: SyncSchema.Base?) -> MutationPlan {
        guard let base else {
            return record.map { .send(baseVersion: nil, value: $0, fields: nil) } ?? .upToDate
        }
        guard let server = base.value else {
            // Deleted on the server: a local value comes back whole.
            return record.map { .send(baseVersion: base.version, value: $0, fields: nil) } ?? .upToDate
        }
        guard let record else { return .send(baseVersion: base.version, value: nil, fields: nil) }
        let local = record.object
        let fields: [String]
        if let agreed = localized(server) {
            // Both as this model writes them: a record kept as the server's text may hold keys
            // this model does not know, or numbers spelled otherwise, which are no local change.
            fields = JSONCoding.changedKeys(from: agreed, to: localized(record) ?? local)
        } else {
            // The server's record does not decode here (a newer shape): send only keys this
            // model wrote, never a removal of a key it may not know.
            let server = server.object
            fields = local.keys.filter { server[$0] != local[$0] }.sorted()
        }
        return fields.isEmpty ? .upToDate : .send(baseVersion: base.version, value: record, fields: fields)
    }

    // MARK: Applying

    /// Most records decoded on one thread before a transaction: a larger batch of pulled records
    /// is decoded on every core.
    static var decodedOnOneThread: Int { 512 }

    /// Records decoded one after another by one thread when a batch is decoded on every core.
    static var decodedInOneRun: Int { 64 }

    /// The values of the pulled records among `states` (not those answering a mutation of
    /// this client), decoded before the transaction that applies them: decoding is the largest
    /// part of applying a page, and a large batch is decoded on every core while the store's
    /// writer waits. `nil` where a state was not decoded ahead; `.some(nil)` where its record
    /// does not decode as a `Value`.
    private func decodeAhead(_ states: [ServerState]) -> [Value??] {
        var decoded = [Value??](repeating: nil, count: states.count)
        let wanted = states.indices.filter { states[$0].applied == nil && states[$0].value != nil }
        guard wanted.count > Self.decodedOnOneThread, ProcessInfo.processInfo.activeProcessorCount > 1 else {
            return decoded
        }
        // In runs of a few dozen records, taken by whichever thread is free: a core busy with
        // something else (the next page arriving) then holds up no more than one run, where
        // an equal share each left this thread waiting for the slower one.
        let runs = (wanted.count + Self.decodedInOneRun - 1) / Self.decodedInOneRun
        decoded.withUnsafeMutableBufferPointer { buffer in
            // Each index is written by one thread only.
            nonisolated(unsafe) let buffer = buffer
            DispatchQueue.concurrentPerform(iterations: runs) { run in
                for index in run * Self.decodedInOneRun..<min((run + 1) * Self.decodedInOneRun, wanted.count) {
                    let state = wanted[index]
                    buffer[state] = .some(states[state].value.flatMap(decode))
                }
            }
        }
        return decoded
    }

    func apply(_ states: [ServerState], plannedAt sequence: Int64? = nil) throws -> [SyncConflict] {
        let decodedAhead = decodeAhead(states)
        return try store.syncTransaction { (transaction, context: SQLiteWriteContext) -> [SyncConflict] in
            let db = context.database
            // Every record this writes gets its mark below, which says whether it is pending: the
            // change log's triggers pause for the key meanwhile. A pull from 0 then writes only
            // the record and its base, not also a pending entry and the delete that undoes it.
            let logged = try SQLiteChangeLog.pauseLogging(db, key: key)
            // Nothing pending before (a first sync): nothing to unmark either.
            let hadPending = try SQLiteChangeLog.hasWritten(db, key: key)
            var conflicts: [SyncConflict] = []
            var marks: [(id: String, pending: Bool)] = []
            marks.reserveCapacity(states.count)
            // A first sync has no bases yet: no look-up per record then.
            let hasBases = try SyncSchema.hasBases(db, key: key)
            // The stored bases, looked up in the table's order: a large batch of random ids then
            // reads each B-tree page once instead of coming back to it.
            let stored =
                hasBases
                ? try SyncSchema.bases(db, key: key, ids: ByteOrder.sorted(states.map(\.id)))
                : [:]
            // No write of the key since the mutations were planned: the store holds what was sent.
            let unchangedSincePlanned = sequence == context.sequence
            // Otherwise what the store holds for the records this client's pushes stored as
            // sent, to tell whether they changed since.
            let sentIDs =
                unchangedSincePlanned ? [] : states.compactMap { $0.applied?.asSent == true ? $0.id : nil }
            let storedTexts = sentIDs.isEmpty ? [:] : try SyncSchema.storedTexts(db, key: key, ids: sentIDs)
            try Outbox.markAnswered(states.compactMap(\.answered), in: db)
            if unchangedSincePlanned, Self.storedAsSentInOrder(states, stored: stored) {
                // Each base is the text the store holds, and nothing stays pending.
                context.afterRecordsWritten { [key] db, _ in
                    try SyncSchema.writeSharedBases(db, key: key, states.map { ($0.id, $0.version) })
                    if logged { try SQLiteChangeLog.resumeLogging(db, key: key) }
                    if hadPending { try SyncSchema.clearPending(db, key: key, ids: states.map(\.id)) }
                }
                return []
            }
            // New bases, written at the end in the order of their ids (see `writeBases`); the
            // last for a record listed twice.
            var bases: [ExactText: SyncSchema.Base?] = [:]
            bases.reserveCapacity(states.count)
            // Those of them known to be the text the store holds (a push stored as sent, the
            // record unchanged since): written without it, in one statement.
            var shared: Set<ExactText> = []
            shared.reserveCapacity(states.count)
            for (index, state) in states.enumerated() {
                // The record's id as the tables compare it, hashed once.
                let recordID = ExactText(state.id)
                let base = bases[recordID] ?? (stored.isEmpty ? nil : stored[recordID])
                if let base, state.version > 0, base.version >= state.version { continue }
                // A base of a history the server no longer has (a restored backup) has a negated
                // version. A server version below it is an older state than this client agreed
                // on: the client's copy is the newer one and goes back to the server.
                let serverWentBack =
                    base.map { $0.version < 0 && state.version > 0 && state.version < -$0.version } ?? false
                // Unknown to the server (version 0): a local value goes back as a new record.
                bases.updateValue(
                    state.version > 0 ? SyncSchema.Base(version: state.version, value: state.value) : nil,
                    forKey: recordID)
                if !shared.isEmpty { shared.remove(recordID) }
                if let applied = state.applied, applied.asSent {
                    // The server stored what was sent, and it is still the local value: the store
                    // has it already.
                    let sentText = applied.record?.text
                    if unchangedSincePlanned || storedTexts[recordID] == sentText {
                        // The base is the sent text, which the store holds as it is.
                        if sentText != nil, state.version > 0 { shared.insert(recordID) }
                        marks.append((state.id, false))
                        continue
                    }
                    if try isUnchanged(applied.record, id: state.id, in: transaction) {
                        marks.append((state.id, false))
                        continue
                    }
                }
                let theirs = decodedAhead[index] ?? state.value.flatMap(decode)
                if state.value != nil, theirs == nil { continue }  // a shape this model cannot read: left alone
                guard let identity = theirs?.id ?? store.identity(ofRecord: state.id) ?? base?.value.flatMap(decode)?.id
                else { continue }
                let mine = transaction[id: identity]
                let mineObject = try mine.map(encode)
                // What the local value is measured against: what this client sent, or the base.
                let agreed: JSONObject? =
                    if let applied = state.applied {
                        applied.record.map(modelForm)
                    } else {
                        base?.value.flatMap(localized)
                    }
                // The server's value as this model writes it, encoded once when needed.
                var theirsObject: JSONObject??
                func theirsLocalized() -> JSONObject? {
                    if let theirsObject { return theirsObject }
                    let object = theirs.flatMap { try? encode($0) }
                    theirsObject = .some(object)
                    return object
                }
                var result: Value?
                // Taking the server's value leaves nothing to push; only a merge or a kept local
                // change may differ from it. The store then writes the server's text as it is.
                var keptTheirs = false
                switch RecordMerge.decide(
                    agreed: agreed, mine: mineObject, theirs: theirsLocalized, serverWentBack: serverWentBack)
                {
                case .takeTheirs:
                    result = theirs
                    keptTheirs = true
                case .keepMine:
                    result = mine
                case .keepDeletion:
                    result = nil
                case .merge:
                    guard let mine, let theirs else { continue }  // `merge` has both
                    let merged = resolve(agreed.flatMap { decode(JSONRecord($0)) }, mine, theirs)
                    result = merged.value
                    let fields =
                        merged.conflicts
                        ?? Self.conflictingKeys(base: agreed, mine: mineObject ?? [:], theirs: theirsLocalized() ?? [:])
                    if !fields.isEmpty {
                        conflicts.append(SyncConflict(collection: key, id: state.id, fields: fields))
                    }
                }
                switch result {
                case let value?:
                    if keptTheirs, let text = state.value?.text {
                        transaction.add(value, encodedAs: text)
                    } else {
                        transaction.add(value)
                    }
                case nil: transaction.remove(id: identity)
                }
                let pending = keptTheirs ? false : try result.map(encode) != theirsLocalized()
                marks.append((state.id, pending))
            }
            context.afterRecordsWritten { [key, bases, shared] db, written in
                // After the records: a base whose value is the text now stored shares it. That
                // of a record the store wrote in this transaction is the text it wrote (most of
                // a pull's, taken as the server sent them): no look-up of the record then.
                var sharing = shared
                var writtenIDs: [ExactText] = []
                writtenIDs.reserveCapacity(written.deletions.count + written.upserts.count)
                for id in written.deletions {
                    let recordID = ExactText(id)
                    sharing.remove(recordID)
                    writtenIDs.append(recordID)
                }
                for record in written.upserts {
                    let recordID = ExactText(record.id)
                    writtenIDs.append(recordID)
                    if let base = bases[recordID] ?? nil, let value = base.value,
                        record.data.withUnsafeBytes({ value.text.hasSameUTF8(asBytes: $0) })
                    {
                        sharing.insert(recordID)
                    } else {
                        sharing.remove(recordID)
                    }
                }
                try SyncSchema.writeBases(db, key: key, bases, shared: sharing)
                if logged { try SQLiteChangeLog.resumeLogging(db, key: key) }
                // A record listed twice gets its last mark.
                var last: [ExactText: Bool] = [:]
                last.reserveCapacity(marks.count + writtenIDs.count)
                for mark in marks { last[ExactText(mark.id)] = mark.pending }
                // A record the store wrote under another id than its state's (an identity held
                // under a record id of its own) is logged as written, as the triggers would.
                for id in writtenIDs where last[id] == nil { last[id] = true }
                var cleared: [String] = []
                // Only the marks that change something: with nothing pending before (a first
                // sync), the records left pending.
                let entries = Array(hadPending ? last : last.filter(\.value))
                for (id, pending) in ByteOrder.sortedIndices(entries.map(\.key.text)).map({ entries[$0] }) {
                    if pending {
                        try SyncSchema.setPending(db, key: key, id: id.text, true)
                    } else {
                        cleared.append(id.text)
                    }
                }
                try SyncSchema.clearPending(db, key: key, ids: cleared)
            }
            return conflicts
        }
    }

    /// Whether `states` answer a push whose every record the server stored as sent (none
    /// deleted), each newer than its stored base, in the order of their ids' bytes (so each
    /// once): most answers, a first push's all. With the store unchanged since the push was
    /// planned, applying them writes each base as sharing the store's text and leaves nothing
    /// pending, with no look-up or sort per record.
    static func storedAsSentInOrder(_ states: [ServerState], stored: [ExactText: SyncSchema.Base]) -> Bool {
        for (index, state) in states.enumerated() {
            guard let applied = state.applied, applied.asSent, applied.record != nil, state.version > 0 else {
                return false
            }
            if index > 0, !states[index - 1].id.precedesInUTF8(state.id) { return false }
            if !stored.isEmpty, let base = stored[ExactText(state.id)], base.version >= state.version { return false }
        }
        return true
    }

    /// Whether the local value of record `id` is still `sent` (`nil`: absent), as this model writes it.
    private func isUnchanged(_ sent: JSONRecord?, id: String, in transaction: StoreTransaction<Value>) throws -> Bool {
        guard let identity = store.identity(ofRecord: id) else { return false }
        return try transaction[id: identity].map(encode) == sent.map(modelForm)
    }

    /// A record as this model writes it, or as it is when it does not decode as a `Value`.
    private func modelForm(_ record: JSONRecord) -> JSONObject {
        localized(record) ?? record.object
    }

    /// Keys both sides changed from `base` to different values; every differing key without a base.
    static func conflictingKeys(base: JSONObject?, mine: JSONObject, theirs: JSONObject) -> [String] {
        JSONCoding.changedKeys(from: mine, to: theirs).filter { key in
            guard let base else { return true }
            return mine[key] != base[key] && theirs[key] != base[key]
        }
    }

    func localWrites() -> AsyncStream<Void> {
        let changes = store.changes()
        return AsyncStream { continuation in
            let task = Task {
                for await change in changes where change.origin != .sync {
                    continuation.yield()
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
