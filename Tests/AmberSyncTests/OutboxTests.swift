import Amber
import AmberLock
import AmberSQLite
import AmberSyncProtocol
import AmberTestSupport
import Foundation
import GRDB
import Testing

@testable import AmberSync

/// The pending-mutation bookkeeping on its own: a storage file with a synced notes store, and no server.
@Suite(.boundedConcurrency) struct OutboxTests {
    let storage: SQLiteStorage
    let notes: IdentityStore<Note>
    let collections: [String: any SyncedCollection]

    init() throws {
        storage = try SQLiteStorage(path: temporaryDirectory().appendingPathComponent("outbox.sqlite").path)
        notes = try IdentityStore(key: "notes", storage: storage)
        try storage.database.write { db in
            try SyncSchema.prepare(db)
            _ = try SyncSchema.register(db, key: "notes")
        }
        collections = [
            "notes": TypedCollection(store: notes, key: "notes") { _, mine, _ in (mine, nil) }
        ]
    }

    /// Gives `notes` bases equal to their stored text, at `version`: what the server last agreed on.
    func agree(on notes: [Note], version: Int64) throws {
        try storage.database.write { db in
            for note in notes {
                let id = note.id.uuidString
                let text = try #require(try SyncSchema.storedText(db, key: "notes", id: id))
                try SyncSchema.setBase(db, key: "notes", id: id, version: version, value: JSONRecord(unchecked: text))
                try SyncSchema.setPending(db, key: "notes", id: id, true)
            }
        }
    }

    /// A record kept as the server's text (a field this model does not know, keys in another
    /// order) is measured against its base as this model writes both: nothing to send until the
    /// app changes a field it knows, and then only that field.
    @Test func aRecordKeptAsTheServersTextPlansOnlyFieldsThisModelChanged() throws {
        let collection = try #require(collections["notes"])
        let id = UUID()
        let server = JSONRecord(
            unchecked: #"{"pinned":false,"color":"amber","text":"t","tagIDs":[],"id":"\#(id.uuidString)"}"#)
        let base = SyncSchema.Base(version: 3, value: server)
        guard case .upToDate = collection.plan(local: server, base: base) else {
            Issue.record("the server's own text planned a mutation")
            return
        }
        let edited = JSONRecord(
            unchecked: #"{"id":"\#(id.uuidString)","text":"edited","tagIDs":[],"pinned":false}"#)
        guard case .send(let version, _, let fields) = collection.plan(local: edited, base: base) else {
            Issue.record("an edit planned nothing")
            return
        }
        #expect(version == 3 && fields == ["text"])
    }

    @Test func aBatchIsSentAgainAsItWasUntilAnsweredThenNewMutationsTakeTheNextIDs() throws {
        try notes.add(contentsOf: [note("a"), note("b"), note("c")])
        let outbox = Outbox(storage: storage, clientID: "phone", batchSize: 2)
        #expect(try outbox.pendingCount() == 3)

        let first = try outbox.nextBatch(for: collections)
        #expect(first.mutations.map(\.mutationID) == [1, 2])
        #expect(first.mutations.allSatisfy { $0.baseVersion == nil && $0.fields == nil && $0.record != nil })
        #expect(first.bytes == JSONWriter.text(of: MutationRun(first.mutations)).utf8.count)
        let again = try outbox.nextBatch(for: collections)
        #expect(again.mutations == first.mutations && again.bytes == first.bytes, "sent again, as it was")

        try storage.database.write { db in
            for mutation in first.mutations { try Outbox.markAnswered(mutation.mutationID, in: db) }
        }
        // The records are still pending (nothing applied the answers): planned again, under new ids.
        #expect(try outbox.nextBatch(for: collections).mutations.map(\.mutationID) == [3, 4])
    }

    /// Plans batches with `outbox` until nothing is pending, marking each one answered and pushed;
    /// returns the ids and the record bytes of each batch.
    func sendAll(_ outbox: Outbox) throws -> [(ids: [String], sizes: [Int])] {
        var sent: [(ids: [String], sizes: [Int])] = []
        while true {
            let batch = try outbox.nextBatch(for: collections)
            guard !batch.isEmpty else { return sent }
            sent.append((batch.mutations.map(\.id), batch.mutations.map { $0.record?.text.utf8.count ?? 0 }))
            try storage.database.write { db in
                for mutation in batch.mutations {
                    try Outbox.markAnswered(mutation.mutationID, in: db)
                    try SyncSchema.setPending(db, key: "notes", id: mutation.id, false)
                }
            }
        }
    }

    @Test func aBatchPlansNoMoreRecordsThanFillItsBytesAndALargerRecordGoesAlone() throws {
        // The records are planned in the order of their random ids: every check holds in any order.
        let large = note(String(repeating: "x", count: 300))
        try notes.add(contentsOf: [note("a"), note("b"), note("c"), large])
        let sent = try sendAll(Outbox(storage: storage, clientID: "phone", batchSize: 10, batchBytes: 100))
        #expect(
            sent.allSatisfy { $0.sizes.dropLast().reduce(0, +) < 100 }, "the last record went in while there was room")
        #expect(sent.dropLast().allSatisfy { $0.sizes.reduce(0, +) >= 100 }, "a batch stops only when full")
        #expect(sent.count >= 2, "four records of 70 bytes or more do not fit 100 bytes")
        #expect(Set(sent.flatMap(\.ids)).count == 4 && sent.flatMap(\.ids).count == 4, "every record sent, once")

        // A bound smaller than any record: one record a batch, the large one too.
        try notes.add(contentsOf: [note("d"), note("e"), large.with(text: large.text + "y")])
        let tight = try sendAll(Outbox(storage: storage, clientID: "phone", batchSize: 10, batchBytes: 10))
        #expect(tight.map(\.ids.count) == [1, 1, 1])
        #expect(
            tight.contains { $0.ids == [large.id.uuidString] && $0.sizes[0] > 300 }, "the larger record went, alone")

        try notes.add(contentsOf: [note("f"), note("g"), note("h")])
        let roomy = Outbox(storage: storage, clientID: "phone", batchSize: 10, batchBytes: 1_000_000)
        #expect(try roomy.nextBatch(for: collections).mutations.count == 3, "room for all: one batch")
    }

    /// A batch limited to fewer mutations than a full one plans that many, and as large a share
    /// of the batch's bytes; the records after it stay pending for the next.
    @Test func aLimitedBatchPlansFewerRecordsAndAShareOfTheBytes() throws {
        try notes.add(contentsOf: (0..<6).map { note("note \($0)") })
        let outbox = Outbox(storage: storage, clientID: "phone", batchSize: 4, batchBytes: 1_000_000)
        let small = try outbox.nextBatch(for: collections, most: 2)
        #expect(small.mutations.count == 2)
        let rest = try outbox.nextBatch(for: collections, after: small.last, most: 10)
        #expect(rest.mutations.count == 4, "a limit above a full batch is a full batch")
        #expect(Set((small.mutations + rest.mutations).map(\.id)).count == 6)

        // Records of `size` bytes, batches of 4 mutations or 2 records' bytes: half a batch is
        // 2 mutations, and one record's bytes, which one record fills.
        let more = (0..<4).map { note("more \($0)") }
        try notes.add(contentsOf: more)
        try storage.syncWrite { try SyncSchema.clearOutbox($0) }
        let size = try #require(
            try storage.syncWrite { try SyncSchema.storedText($0, key: "notes", id: more[0].id.uuidString) }?.utf8.count
        )
        let tight = Outbox(storage: storage, clientID: "phone", batchSize: 4, batchBytes: 2 * size)
        let half = try tight.nextBatch(for: collections, most: 2)
        #expect(half.mutations.count == 1, "half the bytes")
        let full = try tight.nextBatch(for: collections, after: half.last)
        #expect(full.mutations.count == 2, "all the bytes")
        let least = try tight.nextBatch(for: collections, after: full.last, most: 0)
        #expect(least.mutations.count == 1, "at least one")
    }

    /// Whether a batch may name an attachment is looked at as it is planned: a push uploads
    /// attachments only for a batch that may name one.
    @Test(arguments: [
        ([#"{"id":"a","text":"x"}"#, nil], false),
        ([#"{"id":"a","photo":{"sha256":"ab","size":1}}"#], true),
        ([nil, #"{"id":"b","text":"x"}"#, #"{"id":"c","file":{"sha256":"cd","size":2}}"#], true),
        ([], false),
    ])
    func aBatchKnowsWhetherARecordMayNameAnAttachment(texts: [String?], expected: Bool) {
        let mutations = texts.enumerated().map { offset, text in
            Mutation(
                mutationID: Int64(offset + 1), collection: "notes", id: "n\(offset)", baseVersion: nil,
                record: text.map(JSONRecord.init(unchecked:)), fields: nil)
        }
        #expect(Outbox.Batch(mutations: mutations, bytes: 0).mayNameAttachments == expected)
    }

    @Test func renewingTheClientIDDropsTheUnansweredBatch() throws {
        try notes.add(contentsOf: [note("a"), note("b")])
        var outbox = Outbox(storage: storage, clientID: "phone")
        let sent = try outbox.nextBatch(for: collections)
        #expect(sent.mutations.map(\.mutationID) == [1, 2])
        // A record of the batch edited after it was planned: its text as sent is kept.
        let edited = try #require(notes.all.first { $0.id.uuidString == sent.mutations[0].id })
        try notes.add(edited.with(text: "edited"))
        func kept() throws -> Int? {
            try storage.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM amber_sync_outbox_kept") }
        }
        #expect(try kept() == 1)

        try outbox.renewClientID()
        #expect(try kept() == 0, "the texts kept for the dropped batch go with it")
        #expect(outbox.clientID != "phone")
        #expect(
            try storage.database.read { try SyncSchema.meta($0, "clientID") } == outbox.clientID, "kept in the file")
        let replanned = try outbox.nextBatch(for: collections)
        #expect(replanned.mutations.map(\.mutationID) == [3, 4])
        #expect(Set(replanned.mutations.map(\.id)) == Set(sent.mutations.map(\.id)))
    }

    @Test func recordsThatNeedNoPushStopBeingPendingAndAChangeBehindThemIsFound() throws {
        let all = (0..<7).map { note("note \($0)") }.sorted { $0.id.uuidString < $1.id.uuidString }
        try notes.add(contentsOf: all)
        try agree(on: all, version: 4)
        let last = try #require(all.last)
        try notes.add(last.with(text: "changed"))
        let outbox = Outbox(storage: storage, clientID: "phone", batchSize: 2)

        let batch = try outbox.nextBatch(for: collections)
        let mutation = try #require(batch.mutations.first)
        #expect(batch.mutations.count == 1)
        #expect(mutation.id == last.id.uuidString && mutation.baseVersion == 4 && mutation.fields == ["text"])
        #expect(try outbox.pendingCount() == 1, "the unchanged ones are no longer pending")
    }

    @Test func nothingPendingIsAnEmptyBatch() throws {
        let outbox = Outbox(storage: storage, clientID: "phone")
        #expect(try outbox.nextBatch(for: collections).isEmpty)
        try notes.add(note("a"))
        #expect(try outbox.nextBatch(for: [:]).isEmpty, "no collection added: nothing to plan")
    }

    @Test func anUnansweredMutationOfACollectionNotAddedIsMisuse() throws {
        try notes.add(note("a"))
        let outbox = Outbox(storage: storage, clientID: "phone")
        _ = try outbox.nextBatch(for: collections)
        #expect {
            _ = try outbox.nextBatch(for: [:])
        } throws: { error in
            guard let error = error as? SyncError else { return false }
            return error.kind == .misuse && error.message.contains("notes")
        }
    }

    @Test func anUnreadableMutationInTheFileIsAnError() throws {
        try storage.database.write { db in
            try db.execute(
                sql:
                    "INSERT INTO amber_sync_outbox (mutation_id, collection, body) VALUES (1, 'notes', '{\"mutationID\":')"
            )
        }
        let outbox = Outbox(storage: storage, clientID: "phone")
        #expect(throws: SyncError.self) { _ = try outbox.nextBatch(for: collections) }
    }

    /// A broken run of mutations in the file is an error too, not a batch sent without them: a
    /// mutation cut short, a run with members besides its mutations, a run that is not JSON.
    @Test(arguments: [
        #"{"mutations":[{"mutationID":1}]}"#, #"{"mutations":[],"clientID":"phone"}"#, #"{"mutations":["#,
    ])
    func anUnreadableRunOfMutationsInTheFileIsAnError(body: String) throws {
        try storage.database.write { db in
            try db.execute(
                sql: "INSERT INTO amber_sync_outbox (mutation_id, collection, body) VALUES (1, 'notes', ?)",
                arguments: [body])
        }
        let outbox = Outbox(storage: storage, clientID: "phone")
        #expect(throws: SyncError.self) { _ = try outbox.nextBatch(for: collections) }
    }

    /// A batch is kept as one row for each run of one collection's mutations, keyed by the run's
    /// first id, and read back as it was planned; answering a run removes its row; a row of one
    /// mutation, as earlier versions kept them, is read and sent too.
    @Test func aBatchIsKeptAsOneRowForEachRunOfACollectionsMutations() throws {
        let archive = try IdentityStore<Note>(key: "archive", storage: storage)
        try storage.database.write { db in _ = try SyncSchema.register(db, key: "archive") }
        var collections = collections
        collections["archive"] = TypedCollection(store: archive, key: "archive") { _, mine, _ in (mine, nil) }
        try notes.add(contentsOf: [note("a"), note("b"), note("c")])
        try archive.add(contentsOf: [note("d"), note("e")])
        let outbox = Outbox(storage: storage, clientID: "phone")
        func rows() throws -> [String] {
            try storage.database.read { db in
                try Row.fetchAll(db, sql: "SELECT mutation_id, collection FROM amber_sync_outbox ORDER BY mutation_id")
                    .map { "\($0[0] as Int64) \($0[1] as String)" }
            }
        }

        let batch = try outbox.nextBatch(for: collections)
        #expect(batch.mutations.map(\.collection) == ["archive", "archive", "notes", "notes", "notes"])
        #expect(try rows() == ["1 archive", "3 notes"])
        #expect(try outbox.unanswered(for: collections) == batch.mutations)
        // Written once, for the rows and the request: each as the request writes them.
        var elements = JSONWriter()
        elements.writeElements(batch.mutations)
        #expect(batch.written == elements.bytes)
        let bodies = try storage.database.read { db in
            try String.fetchAll(db, sql: "SELECT body FROM amber_sync_outbox ORDER BY mutation_id")
        }
        // Each run's records are the store's texts: kept without them.
        #expect(
            bodies == [
                MutationRun.textWithoutValues(batch.mutations[..<2]),
                MutationRun.textWithoutValues(batch.mutations[2...]),
            ])
        #expect(bodies.allSatisfy { !$0.contains(#""text":"#) })

        try storage.database.write { db in try Outbox.markAnswered([1, 2], in: db) }
        #expect(try rows() == ["3 notes"])
        let earlier = Mutation(
            mutationID: 6, collection: "archive", id: "f", baseVersion: nil,
            record: JSONRecord(unchecked: #"{"text":"f"}"#))
        try storage.database.write { db in
            try db.execute(
                sql: "INSERT INTO amber_sync_outbox (mutation_id, collection, body) VALUES (6, 'archive', ?)",
                arguments: [JSONWriter.text(of: earlier)])
        }
        #expect(try outbox.unanswered(for: collections) == Array(batch.mutations[2...]) + [earlier])
        let again = try outbox.nextBatch(for: collections)
        #expect(again.mutations == Array(batch.mutations[2...]) + [earlier], "sent again, as they were")
        #expect(again.written == nil, "written again from the mutations read back")
    }

    /// The outbox keeps no copy of the texts a batch sends while the store holds them: a record
    /// changed or removed after its batch was planned is sent again with the text it was sent
    /// with, kept when it changed; the texts go when the batch is answered.
    @Test func aBatchSentAgainHasTheTextsItWasSentWithThoughTheStoreChanged() throws {
        let stored = [note("a"), note("b"), note("c"), note("d")]
        try notes.add(contentsOf: stored)
        let outbox = Outbox(storage: storage, clientID: "phone", batchSize: 3)
        let first = try outbox.nextBatch(for: collections)
        #expect(first.mutations.count == 3)
        func kept() throws -> Int {
            try storage.database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM amber_sync_outbox_kept") }
                ?? -1
        }
        #expect(try kept() == 0)

        // After planning: one record of the batch edited twice, one removed, one left; the
        // record not in the batch edited too.
        let byID = Dictionary(uniqueKeysWithValues: stored.map { ($0.id.uuidString, $0) })
        let (edited, removed) = (try #require(byID[first.mutations[0].id]), try #require(byID[first.mutations[1].id]))
        let outside = try #require(stored.first { !first.mutations.map(\.id).contains($0.id.uuidString) })
        try notes.add(edited.with(text: "edited once"))
        try notes.add(edited.with(text: "edited twice"))
        _ = try notes.remove(removed)
        try notes.add(outside.with(text: "edited outside"))
        #expect(try kept() == 3, "the two records of the batch, and the one outside it")

        #expect(try outbox.unanswered(for: collections) == first.mutations)
        let again = try outbox.nextBatch(for: collections)
        #expect(again.mutations == first.mutations && again.bytes == first.bytes, "sent again, as it was")

        // The batch after it is planned with the text the store holds now, not the one kept.
        let second = try outbox.nextBatch(
            for: collections, after: Outbox.Position(key: "notes", id: first.mutations[2].id))
        #expect(second.mutations.map(\.id) == [outside.id.uuidString])
        #expect(second.mutations[0].record?.text.contains("edited outside") == true)
        #expect(try kept() == 2)
        #expect(try outbox.unanswered(for: collections) == first.mutations + second.mutations)

        try storage.database.write { db in try Outbox.markAnswered(first.mutations.map(\.mutationID), in: db) }
        #expect(try kept() == 2, "kept while a run of the collection is unanswered")
        try storage.database.write { db in try Outbox.markAnswered(second.mutations.map(\.mutationID), in: db) }
        #expect(try kept() == 0)
        try notes.add(outside.with(text: "edited with nothing unanswered"))
        #expect(try kept() == 0, "nothing kept with no run unanswered")
    }

    /// Another connection to the file (an app extension's store) that edits a record of an
    /// unanswered batch fires the same triggers: the batch is sent again with the text it was
    /// sent with. A text gone by other means (the file edited by hand) is a storage error, not a
    /// mutation sent with another value.
    @Test func anotherConnectionsEditKeepsTheTextSentAndALostTextIsAnError() throws {
        let stored = [note("a"), note("b")]
        try notes.add(contentsOf: stored)
        let outbox = Outbox(storage: storage, clientID: "phone")
        let batch = try outbox.nextBatch(for: collections)
        #expect(batch.mutations.count == 2)

        let widgetStorage = try SQLiteStorage(path: storage.path)
        let widget = try IdentityStore<Note>(key: "notes", storage: widgetStorage)
        try widget.update(id: stored[0].id) { $0.with(text: "edited in the widget") }
        _ = try widget.remove(id: stored[1].id)
        #expect(try outbox.unanswered(for: collections) == batch.mutations)

        try storage.database.write { db in try db.execute(sql: "DELETE FROM amber_sync_outbox_kept") }
        #expect {
            _ = try outbox.unanswered(for: collections)
        } throws: { error in
            guard let error = error as? SyncError else { return false }
            return error.kind == .storage && error.message.contains("is gone from the file")
        }
    }

    /// A run written without its values is refused by a reader that knows only runs with them,
    /// and by this one when its mark is not the one it writes.
    @Test func aRunWithoutItsValuesIsNeverReadAsDeletions() throws {
        let mutation = Mutation(
            mutationID: 1, collection: "notes", id: "a", baseVersion: nil, record: JSONRecord(unchecked: "{}"))
        let text = MutationRun.textWithoutValues([mutation])
        #expect(
            text
                == #"{"mutations":[{"baseVersion":null,"collection":"notes","id":"a","mutationID":1,"value":null}],"values":"apart"}"#
        )
        let run = try MutationRun(jsonBytes: text.utf8)
        #expect(run.valuesKeptApart && run.mutations.map(\.record) == [nil])
        #expect(!(try MutationRun(jsonBytes: JSONWriter.text(of: MutationRun([mutation])).utf8).valuesKeptApart))
        for other in [#","values":"here"}"#, #","other":1}"#] {
            let marked = text.replacingOccurrences(of: #","values":"apart"}"#, with: other)
            #expect(throws: JSONWireError.self) { try MutationRun(jsonBytes: marked.utf8) }
        }
    }

    /// A request whose mutations were written already is the same bytes as one written whole.
    @Test func aPushWithItsMutationsWrittenAlreadyIsTheSameBytes() {
        let mutations = [
            Mutation(
                mutationID: 1, collection: "notes", id: "caf\u{e9}", baseVersion: nil,
                record: JSONRecord(unchecked: #"{"n":123456789012345678901234567890}"#)),
            Mutation(mutationID: 2, collection: "notes", id: "b", baseVersion: 3, record: nil, fields: ["text"]),
        ]
        var elements = JSONWriter()
        elements.writeElements(mutations)
        for (cursor, tag) in [(nil, nil), (Int64(7), nil), (7, "tag")] as [(Int64?, String?)] {
            let request = PushRequest(clientID: "phone", mutations: mutations, cursor: cursor, cursorTag: tag)
            var spliced = JSONWriter()
            PushRequest.write(clientID: "phone", cursor: cursor, cursorTag: tag, to: &spliced) {
                $0.rawBytes(elements.bytes)
            }
            #expect(spliced.bytes == JSONWriter.bytes(of: request))
        }
        #expect(MutationRun.text(elements: elements.bytes) == JSONWriter.text(of: MutationRun(mutations)))
    }

    @Test func answersMatchEachMutationWithItsResultByCollection() throws {
        let created = JSONRecord(unchecked: #"{"text":"new"}"#)
        let mutations = [
            Mutation(mutationID: 7, collection: "notes", id: "a", baseVersion: nil, record: created),
            Mutation(mutationID: 8, collection: "tags", id: "t", baseVersion: 2, record: created, fields: ["text"]),
            Mutation(mutationID: 9, collection: "notes", id: "b", baseVersion: 3, record: nil),
        ]
        let merged: JSONObject = ["text": .string("new"), "color": .string("red")]
        let results = [
            MutationResult(mutationID: 7, status: .applied, version: 10),
            MutationResult(mutationID: 8, status: .applied, version: 11, value: merged),
            MutationResult(mutationID: 9, status: .conflict, version: 5, value: ["text": .string("theirs")]),
        ]
        let answers = Outbox.answers(to: mutations, results: results)
        #expect(answers.order == ["notes", "tags"])
        #expect((answers.applied, answers.refused) == (2, 1))
        let notes = try #require(answers.states["notes"])
        #expect(notes.map(\.id) == ["a", "b"] && notes.map(\.answered) == [7, 9])
        #expect(notes[0].version == 10 && notes[0].value == created, "applied as sent: the record sent")
        #expect(notes[0].applied?.asSent == true)
        #expect(notes[1].value?.object == ["text": .string("theirs")] && notes[1].applied == nil, "a conflict")
        let tags = try #require(answers.states["tags"])
        #expect(tags[0].value?.object == merged && tags[0].applied?.asSent == false, "merged on the server")
    }
}

extension OutboxTests {
    /// Answered mutations leave the outbox by runs of consecutive ids, whatever their order and
    /// with gaps and repeats; the others stay.
    @Test func answeredMutationsLeaveTheOutboxAndTheOthersStay() throws {
        let remaining = try storage.database.write { db in
            for id in 1...9 {
                try db.execute(
                    sql: "INSERT INTO amber_sync_outbox (mutation_id, collection, body) VALUES (?, 'notes', '{}')",
                    arguments: [id])
            }
            try Outbox.markAnswered([6, 2, 1, 2, 4, 5, 9], in: db)
            try Outbox.markAnswered([], in: db)
            return try Int64.fetchAll(db, sql: "SELECT mutation_id FROM amber_sync_outbox ORDER BY mutation_id")
        }
        #expect(remaining == [3, 7, 8])
    }

    /// The bases and stored texts of many records are read in one statement each: those that
    /// have one, keyed by id, whatever the ids hold (quotes, non-ASCII) and in any order; ids that
    /// differ only in Unicode normalization are two records.
    @Test func basesAndStoredTextsAreReadForManyRecordsAtOnce() throws {
        let stored = [note("a"), note("b"), note("c")]
        try notes.add(contentsOf: stored)
        let ids = stored.map(\.id.uuidString)
        let odd = #"an "odd" id, \n"#
        let (composed, decomposed) = ("caf\u{e9}", "cafe\u{301}")
        let (bases, texts, one) = try storage.database.write { db in
            try SyncSchema.setBase(db, key: "notes", id: ids[0], version: 4, value: JSONRecord(unchecked: #"{"x":1}"#))
            try SyncSchema.setBase(db, key: "notes", id: odd, version: 5, value: nil)
            try SyncSchema.setBase(db, key: "notes", id: composed, version: 7, value: nil)
            try SyncSchema.setBase(db, key: "notes", id: decomposed, version: 8, value: nil)
            try SyncSchema.setBase(db, key: "other", id: ids[1], version: 6, value: nil)
            let asked = [ids[2], odd, "missing", decomposed, ids[0], composed, ids[1]]
            return (
                try SyncSchema.bases(db, key: "notes", ids: asked),
                try SyncSchema.storedTexts(db, key: "notes", ids: asked),
                try SyncSchema.storedText(db, key: "notes", id: ids[1])
            )
        }
        #expect(bases.count == 4)
        #expect(bases[ExactText(ids[0])]?.version == 4 && bases[ExactText(ids[0])]?.value?.text == #"{"x":1}"#)
        #expect(bases[ExactText(odd)]?.version == 5 && bases[ExactText(odd)]?.value == nil)
        #expect(bases[ExactText(composed)]?.version == 7 && bases[ExactText(decomposed)]?.version == 8)
        #expect(Set(texts.keys.map(\.text)) == Set(ids))
        #expect(texts[ExactText(ids[1])] == one && one?.contains("\"b\"") == true)
    }

    /// Bases known to be the stored text are written without it, in one statement, beside the
    /// others; marks are cleared for the listed records only.
    @Test func sharedBasesAreWrittenWithoutTheirTextAndMarksClearedTogether() throws {
        let stored = [note("a"), note("b"), note("c")]
        try notes.add(contentsOf: stored)
        let ids = stored.map(\.id.uuidString)
        let (rows, pending) = try storage.database.write { db in
            let text = try #require(try SyncSchema.storedText(db, key: "notes", id: ids[0]))
            let bases: [ExactText: SyncSchema.Base?] = [
                ExactText(ids[0]): SyncSchema.Base(version: 7, value: JSONRecord(unchecked: text)),
                ExactText(ids[1]): SyncSchema.Base(version: 8, value: JSONRecord(unchecked: #"{"x":1}"#)),
                ExactText(ids[2]): nil,
            ]
            try SyncSchema.writeBases(db, key: "notes", bases, shared: [ExactText(ids[0])])
            try SyncSchema.clearPending(db, key: "notes", ids: [ids[0], ids[2], "missing"])
            return (
                try Row.fetchAll(db, sql: "SELECT id, version, value, same FROM amber_sync_base ORDER BY version"),
                try String.fetchAll(db, sql: "SELECT id FROM amber_sync_pending WHERE key = 'notes'")
            )
        }
        #expect(rows.count == 2)
        #expect(rows[0]["id"] == ids[0] && rows[0]["version"] == 7 && rows[0]["same"] == 1)
        #expect((rows[0]["value"] as String?) == nil)
        #expect(rows[1]["id"] == ids[1] && rows[1]["same"] == 0 && rows[1]["value"] == #"{"x":1}"#)
        #expect(pending == [ids[1]])
    }

    /// More shared bases than one statement writes, among bases that are not shared: every one is
    /// written, with its own version, in statements of ``SyncSchema/sharedBasesPerStatement``
    /// (one statement for them all kept every page it changed in its journal).
    @Test func sharedBasesBeyondOneStatementAreAllWritten() throws {
        let count = SyncSchema.sharedBasesPerStatement * 2 + 17
        let ids = (0..<count).map { String(format: "id-%05d", $0) }
        let statements = LockedValue(0)
        let rows = try storage.database.write { db in
            db.trace { event in
                if case .statement(let statement) = event, statement.sql.contains("json_each(?2)") {
                    statements.withLock { $0 += 1 }
                }
            }
            defer { db.trace(options: .statement, nil) }
            var bases: [ExactText: SyncSchema.Base?] = [:]
            var shared: Set<ExactText> = []
            for (index, id) in ids.enumerated() {
                let text = index % 10 == 0 ? #"{"n":\#(index)}"# : "{}"
                bases[ExactText(id)] = SyncSchema.Base(version: Int64(index + 1), value: JSONRecord(unchecked: text))
                if index % 10 != 0 { shared.insert(ExactText(id)) }
            }
            try SyncSchema.writeBases(db, key: "notes", bases, shared: shared)
            return try Row.fetchAll(db, sql: "SELECT id, version, value, same FROM amber_sync_base ORDER BY id")
        }
        #expect(rows.count == count)
        // 1,815 shared bases: two statements.
        #expect(statements.withLock { $0 } == 2)
        for (index, row) in rows.enumerated() {
            #expect(row["id"] == ids[index] && row["version"] == Int64(index + 1))
            if index % 10 == 0 {
                #expect(row["same"] == 0 && row["value"] == #"{"n":\#(index)}"#)
            } else {
                #expect(row["same"] == 1 && (row["value"] as String?) == nil)
            }
        }
    }

    /// Bases written together, not known to be shared, are compared with the stored text each
    /// (as `setBase` does): equal text is shared, other text is kept, a deletion's base shares
    /// nothing even where the store has no record; odd texts and ids come back byte for byte.
    @Test func basesWrittenTogetherShareTheStoredTextOnlyWhereItIsEqual() throws {
        let stored = [note("a"), note("b \"quoted\" \\ back\u{0}slash é 🍮")]
        try notes.add(contentsOf: stored)
        let ids = stored.map(\.id.uuidString)
        let odd = #"an "odd" id, \n"#
        let (composed, decomposed) = ("caf\u{e9}", "cafe\u{301}")
        let otherText = #"{"text":"\"quotes\" and \\ and \u0000 and é","n":123456789012345678901234567890}"#
        let (rows, texts) = try storage.database.write { db in
            let texts = try ids.map { try #require(try SyncSchema.storedText(db, key: "notes", id: $0)) }
            let bases: [ExactText: SyncSchema.Base?] = [
                ExactText(ids[0]): SyncSchema.Base(version: 3, value: JSONRecord(unchecked: texts[0])),
                ExactText(ids[1]): SyncSchema.Base(version: 4, value: JSONRecord(unchecked: texts[1])),
                ExactText(odd): SyncSchema.Base(version: 5, value: JSONRecord(unchecked: otherText)),
                ExactText(composed): SyncSchema.Base(version: 6, value: nil),
                ExactText(decomposed): SyncSchema.Base(version: 7, value: JSONRecord(unchecked: "{}")),
            ]
            try SyncSchema.writeBases(db, key: "notes", bases)
            let rows = try Row.fetchAll(
                db, sql: "SELECT id, version, value, same FROM amber_sync_base ORDER BY version")
            return (rows, texts)
        }
        #expect(rows.count == 5)
        #expect(rows.map { $0["version"] as Int64 } == [3, 4, 5, 6, 7])
        #expect(rows.map { $0["same"] as Int } == [1, 1, 0, 0, 0])
        #expect(rows[0]["id"] == ids[0] && rows[1]["id"] == ids[1])
        #expect((rows[0]["value"] as String?) == nil && (rows[1]["value"] as String?) == nil)
        #expect((rows[2]["id"] as String?).map { Array($0.utf8) } == Array(odd.utf8))
        #expect((rows[2]["value"] as String?).map { Array($0.utf8) } == Array(otherText.utf8))
        #expect((rows[3]["id"] as String?).map { Array($0.utf8) } == Array(composed.utf8))
        #expect((rows[3]["value"] as String?) == nil)
        #expect((rows[4]["id"] as String?).map { Array($0.utf8) } == Array(decomposed.utf8))
        #expect(rows[4]["value"] == "{}")
        // Read back as the sync reads them: the shared ones are the stored text.
        let read = try storage.database.read { db in
            try SyncSchema.bases(db, key: "notes", ids: ByteOrder.sorted(ids + [odd, composed, decomposed]))
        }
        #expect(read.count == 5)
        #expect(read[ExactText(ids[1])]?.value?.text == texts[1])
        #expect(read[ExactText(composed)]?.value == nil)
        #expect(read[ExactText(odd)]?.value?.text == otherText)
    }
}
