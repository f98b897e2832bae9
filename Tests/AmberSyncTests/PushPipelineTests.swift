import Amber
import AmberLock
import AmberSQLite
import AmberSyncProtocol
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import GRDB
import Testing

@testable import AmberSync

/// A push of several batches sends the next batch while the client applies the answer to the
/// one before; the answer is kept in the file meanwhile, since the server then forgets it.
@Suite(.boundedConcurrency, .serialized) struct PushPipelineTests {
    /// Passes requests on, keeping each push's request and answer; answers pushes with `.offline`
    /// (after the server applied them) from the one numbered `losingFrom` on.
    final class RecordingTransport: SyncTransport {
        let inner: any SyncTransport
        let pushes = LockedValue<[(request: PushRequest, answer: PushResponse?)]>([])
        let losingFrom: Int
        let bodies = LockedValue<[Data]>([])

        init(_ inner: any SyncTransport, losingFrom: Int = .max) {
            self.inner = inner
            self.losingFrom = losingFrom
        }

        var server: URL { inner.server }

        func send(_ request: SyncTransportRequest) async throws(SyncError) -> SyncTransportResponse {
            let response = try await inner.send(request)
            guard request.path == "v1/push", let body = request.body else { return response }
            let sent = try! PushRequest(jsonBytes: body)
            let answer = response.status == 200 ? try? PushResponse(jsonBytes: response.body) : nil
            let number = pushes.withLock { pushes in
                pushes.append((sent, answer))
                return pushes.count
            }
            bodies.withLock { $0.append(response.body) }
            if number >= losingFrom { throw SyncError(.offline, "the answer was lost") }
            return response
        }
    }

    /// Holds each push numbered in `watched` until the client's outbox holds a mutation after the
    /// push's last (the next batch, planned meanwhile), for up to two seconds; records whether it did.
    final class PlanningWatch: SyncTransport {
        let inner: any SyncTransport
        let watched: Set<Int>
        let storage = LockedValue<SQLiteStorage?>(nil)
        let plannedAhead = LockedValue<[Bool]>([])
        let count = LockedValue(0)

        init(_ inner: any SyncTransport, watched: Set<Int>) {
            self.inner = inner
            self.watched = watched
        }

        var server: URL { inner.server }

        func send(_ request: SyncTransportRequest) async throws(SyncError) -> SyncTransportResponse {
            guard request.path == "v1/push", let body = request.body, let storage = storage.withLock({ $0 }) else {
                return try await inner.send(request)
            }
            let number = count.withLock { count in
                count += 1
                return count
            }
            if watched.contains(number) {
                let last = try! PushRequest(jsonBytes: body).mutations.last!.mutationID
                let planned = await eventually(within: 2) {
                    let newest = try? storage.syncWrite { db in
                        try Int64.fetchOne(db, sql: "SELECT MAX(mutation_id) FROM amber_sync_outbox")
                    }
                    return (newest ?? nil).map { $0 > last } ?? false
                }
                plannedAhead.withLock { $0.append(planned) }
            }
            return try await inner.send(request)
        }
    }

    /// While the server applies a batch, the client plans the next one and keeps it in its
    /// outbox: the server does not wait for that planning between batches.
    @Test func theNextBatchIsPlannedWhileTheServerAppliesOne() async throws {
        let server = try await TestServer.start(.sqlite, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        // Batches of 1, 10, 10, 10, 3 and 1 (the ends of a long push are smaller): the first
        // three have one after them.
        let transport = PlanningWatch(server.transport, watched: [1, 2, 3])
        let day = try Device(transport: transport, tokenProvider: { token })
        transport.storage.withLock { $0 = day.storage }
        try day.notes.add(contentsOf: (0..<35).map { note("note \($0)") })
        await day.client.engine.apply(pushBatchSize: 10)

        #expect(try await day.client.sync().pushed == 35)
        #expect(transport.plannedAhead.withLock { $0 } == [true, true, true])
        #expect(day.client.pendingCount == 0)
        let outbox = try day.storage.syncWrite { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM amber_sync_outbox") }
        #expect(outbox == 0, "every batch planned was sent and answered")
    }

    /// The answer to a batch is lost while the batch after it is planned: both stay in the outbox,
    /// unanswered, and the next sync sends them together. The server answers the first as before
    /// and applies the second; every note arrives once.
    @Test(arguments: Backend.allCases)
    func aBatchPlannedAheadOfALostAnswerGoesWithItNextTime(backend: Backend) async throws {
        let server = try await TestServer.start(backend, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let path = temporaryDirectory().appendingPathComponent("phone.sqlite").path
        let losing = RecordingTransport(server.transport, losingFrom: 2)
        let notes = (0..<35).map { note("note \($0)") }
        do {
            let phone = try Device(transport: losing, path: path, tokenProvider: { token })
            try phone.notes.add(contentsOf: notes)
            await phone.client.engine.apply(pushBatchSize: 10)
            await #expect(throws: SyncError.self) { try await phone.client.sync() }
            let outbox = try phone.storage.syncWrite {
                try Row.fetchOne(
                    $0, sql: "SELECT COUNT(*), SUM(json_array_length(body, '$.mutations')) FROM amber_sync_outbox")
            }
            #expect(
                outbox.map { [$0[0], $0[1]] } == [2, 20],
                "the batch whose answer was lost, and the one planned after it: a row each")
            #expect(losing.pushes.withLock { $0.map(\.request.mutations.count) } == [1, 10], "a small first batch")
        }
        let phone = try Device(server: server, token: token, path: path)
        #expect(try await phone.client.sync().pushed == 34)
        #expect(phone.client.pendingCount == 0)
        let night = try Device(server: server, token: token)
        #expect(try await night.client.sync().pulled == 35)
        #expect(Set(night.notes.all) == Set(notes))
        let cursor = try night.storage.syncWrite { try SyncSchema.cursor($0) }
        #expect(cursor == 35, "one version a note: none applied twice")
    }

    /// The answer to a batch is kept in the file, while the next batch is at the server, as the
    /// text the server sent (here spaced out by a proxy), not written again; it reads back as the
    /// same answer.
    @Test func anAnswerIsKeptAsTheTextTheServerSent() async throws {
        final class SpacingTransport: SyncTransport {
            let inner: any SyncTransport
            /// Each push's answer as this transport handed it on.
            let answers = LockedValue<[Data]>([])
            init(_ inner: any SyncTransport) { self.inner = inner }
            var server: URL { inner.server }
            func send(_ request: SyncTransportRequest) async throws(SyncError) -> SyncTransportResponse {
                var response = try await inner.send(request)
                guard request.path == "v1/push" else { return response }
                // The same JSON with a space after each comma and colon outside strings.
                var spaced = Data()
                var (inString, escaped) = (false, false)
                for byte in response.body {
                    spaced.append(byte)
                    if inString {
                        if escaped {
                            escaped = false
                        } else if byte == UInt8(ascii: "\\") {
                            escaped = true
                        } else if byte == UInt8(ascii: "\"") {
                            inString = false
                        }
                    } else if byte == UInt8(ascii: "\"") {
                        inString = true
                    } else if byte == UInt8(ascii: ",") || byte == UInt8(ascii: ":") {
                        spaced.append(UInt8(ascii: " "))
                    }
                }
                response.body = spaced
                answers.withLock { $0.append(spaced) }
                return response
            }
        }
        let server = try await TestServer.start(.sqlite, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let transport = SpacingTransport(server.transport)
        let day = try Device(transport: transport, tokenProvider: { token })
        // Every answer kept, in order (each is dropped once applied).
        try day.storage.syncWrite { db in
            try db.execute(
                sql: """
                    CREATE TABLE kept_log (body TEXT NOT NULL);
                    CREATE TRIGGER kept_log AFTER INSERT ON amber_sync_answers
                    BEGIN INSERT INTO kept_log (body) VALUES (NEW.body); END;
                    """)
        }
        try day.notes.add(contentsOf: (0..<25).map { note("note \($0)") })
        await day.client.engine.apply(pushBatchSize: 10, smallerEdges: false)

        #expect(try await day.client.sync().pushed == 25)
        let answers = transport.answers.withLock { $0 }
        try #require(answers.count == 3)
        #expect(answers[0].contains(Data(", ".utf8)), "the text was spaced out")
        let kept = try day.storage.syncWrite {
            try String.fetchAll($0, sql: "SELECT body FROM kept_log ORDER BY rowid")
        }
        // The first two answers were kept while the batch after each was at the server.
        #expect(kept == answers.prefix(2).map { String(decoding: $0, as: UTF8.self) })
        for (text, answer) in zip(kept, answers) {
            #expect(try PushResponse(jsonBytes: text.utf8) == PushResponse(jsonBytes: answer))
        }
        #expect(try day.storage.syncWrite { try SyncSchema.keptAnswers($0) }.isEmpty, "every answer was applied")
        #expect(day.client.pendingCount == 0)
    }

    /// The sizes of the batches a push plans from `pending` records: a long push's first and
    /// last an eighth of a full batch, so that the server starts soon and the client's last
    /// answer is short; a push that fits one batch goes whole.
    @Test(arguments: [
        (pending: 100_000, batchSize: 4_000, sizes: [500] + Array(repeating: 4_000, count: 24) + [3_000, 500]),
        (4_000, 4_000, [4_000]),
        (4_001, 4_000, [500, 3_001, 500]),
        (8_000, 4_000, [500, 4_000, 3_000, 500]),
        // A remainder of up to two edges after the full batches goes whole, not as a batch of 2.
        (9_002, 4_000, [500, 4_000, 4_000, 502]),
        (95, 10, [1] + Array(repeating: 10, count: 9) + [3, 1]),
        (3, 1, [1, 1, 1]),
    ])
    func aLongPushPlansSmallerFirstAndLastBatches(pending: Int, batchSize: Int, sizes: [Int]) {
        var planned: [Int] = []
        var remaining = pending
        while remaining > 0 {
            let most = SyncEngine.batchLimit(remaining: remaining, first: planned.isEmpty, batchSize: batchSize)
            #expect(most.map { $0 >= 1 && $0 < batchSize } ?? true, "a limit is below a full batch")
            let size = min(most ?? batchSize, remaining)
            planned.append(size)
            remaining -= size
        }
        #expect(planned == sizes)
        // Nothing or less left than counted (records that needed no push): full batches.
        #expect(SyncEngine.batchLimit(remaining: 0, first: true, batchSize: batchSize) == nil)
        #expect(SyncEngine.batchLimit(remaining: -3, first: false, batchSize: batchSize) == nil)
    }

    @Test(arguments: Backend.allCases)
    func aPushOfManyBatchesSendsEachRecordOnceAndLeavesNothingPending(backend: Backend) async throws {
        let server = try await TestServer.start(backend, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let transport = RecordingTransport(server.transport)
        let day = try Device(transport: transport, tokenProvider: { token })
        let night = try Device(server: server, token: token)
        let notes = (0..<95).map { note("note \($0)") }
        try day.notes.add(contentsOf: notes)
        await day.client.engine.apply(pushBatchSize: 10)

        let report = try await day.client.sync()
        #expect(report.pushed == 95 && report.pulled == 0 && report.merged.isEmpty)
        #expect(day.client.pendingCount == 0)
        let pushes = transport.pushes.withLock { $0 }
        // The first and last batches are smaller (`SyncEngine.batchLimit`): an eighth of a batch,
        // here 1; the one before the last leaves that for it, here of the 4 a full batch left.
        #expect(pushes.map(\.request.mutations.count) == [1] + Array(repeating: 10, count: 9) + [3, 1])
        let ids = pushes.flatMap { $0.request.mutations.map(\.id) }
        #expect(ids.count == 95 && Set(ids).count == 95, "each record in one batch only")
        // Each batch after the first names the cursor the answer before it leaves: past this
        // client's own changes, so that none comes back in the pull.
        for (before, push) in zip(pushes, pushes.dropFirst()) {
            #expect(push.request.cursor == before.answer?.cursor)
        }
        let kept = try day.storage.syncWrite { try SyncSchema.keptAnswers($0) }
        #expect(kept.isEmpty, "every answer was applied")
        #expect(try await day.client.sync().pushed == 0)

        #expect(try await night.client.sync().pulled == 95)
        #expect(Set(night.notes.all) == Set(notes))
    }

    /// A record edited or deleted (by another connection to the file) while its batch is at the
    /// server is not lost: applying the batch's answer keeps the change pending, and it goes out
    /// after.
    @Test(arguments: [false, true])
    func aRecordChangedWhileItsBatchIsAtTheServerGoesAgain(deleted: Bool) async throws {
        let server = try await TestServer.start(.sqlite, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let notes = (0..<30).map { note("note \($0)") }
        final class EditingTransport: SyncTransport {
            let inner: any SyncTransport
            let edit = LockedValue<(@Sendable () throws -> Void)?>(nil)
            init(_ inner: any SyncTransport) { self.inner = inner }
            var server: URL { inner.server }
            func send(_ request: SyncTransportRequest) async throws(SyncError) -> SyncTransportResponse {
                if request.path == "v1/push" {
                    // Once: the first push takes the edit.
                    let pending = edit.withLock { edit in
                        defer { edit = nil }
                        return edit
                    }
                    do { try pending?() } catch { throw SyncError(.storage, "the edit failed: \(error)") }
                }
                return try await inner.send(request)
            }
        }
        let transport = EditingTransport(server.transport)
        let day = try Device(transport: transport, tokenProvider: { token })
        try day.notes.add(contentsOf: notes)
        await day.client.engine.apply(pushBatchSize: 10)
        // The first record of the first batch, changed as the first batch goes out.
        let first = try day.storage.syncWrite { db in
            try String.fetchOne(db, sql: "SELECT id FROM amber_sync_pending ORDER BY key, id LIMIT 1")
        }
        let changed = try #require(day.notes.all.first { $0.id.uuidString == first })
        // Edited by another connection to the file, as an app extension would.
        let path = day.path
        transport.edit.withLock {
            $0 = {
                let extensionNotes = try IdentityStore<Note>(key: "notes", storage: SQLiteStorage(path: path))
                if deleted {
                    _ = try extensionNotes.remove(id: changed.id)
                } else {
                    try extensionNotes.update(id: changed.id) { $0.with(text: "edited in flight") }
                }
            }
        }

        let report = try await day.client.sync()
        #expect(report.merged.isEmpty)
        #expect(day.client.pendingCount == 0)
        let night = try Device(server: server, token: token)
        _ = try await night.client.sync()
        if deleted {
            #expect(night.notes[id: changed.id] == nil)
            #expect(day.notes[id: changed.id] == nil, "the answer to the create does not bring it back")
            #expect(night.notes.count == 29)
        } else {
            #expect(night.notes[id: changed.id]?.text == "edited in flight")
            #expect(night.notes.count == 30)
        }
    }

    /// Another process (an app extension) changes a record while its batch is at the server: the
    /// answer finds the key written since the batch was planned (its write sequence moved), so
    /// the record stays pending and the change goes with the next push.
    @Test func aRecordAnotherProcessChangesWhileItsBatchIsAtTheServerGoesAgain() async throws {
        let server = try await TestServer.start(.sqlite, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let path = temporaryDirectory().appendingPathComponent("app.sqlite").path
        let storage = try SQLiteStorage(path: path)
        let entries = try IdentityStore<Entry>(key: "entries", storage: storage)
        try entries.add(contentsOf: (0..<20).map { Entry(id: "e-\($0)", index: 0, payload: "p") })
        final class WritingTransport: SyncTransport {
            let inner: any SyncTransport
            let path: String
            let written = LockedValue(false)
            init(_ inner: any SyncTransport, path: String) {
                self.inner = inner
                self.path = path
            }
            var server: URL { inner.server }
            func send(_ request: SyncTransportRequest) async throws(SyncError) -> SyncTransportResponse {
                let first = written.withLock { written in
                    defer { written = true }
                    return !written
                }
                if request.path == "v1/push", first {
                    let writer = Process()
                    writer.executableURL = builtExecutable(named: "amber-sqlite-writer")
                    writer.arguments = [path, "entries", "increment", "e-0", "1"]
                    let result: ProcessResult
                    do { result = try await runToEndOnItsOwnThread(writer) } catch {
                        throw SyncError(.storage, "the writer did not run: \(error)")
                    }
                    guard result.status == 0 else { throw SyncError(.storage, "the writer failed: \(result.error)") }
                }
                return try await inner.send(request)
            }
        }
        let client = try SyncClient(
            storage: storage, transport: WritingTransport(server.transport, path: path), tokenProvider: { token })
        try client.add(entries) { _, mine, _ in mine }

        _ = try await client.sync()
        #expect(client.pendingCount == 0)
        let otherStorage = try SQLiteStorage(path: temporaryDirectory().appendingPathComponent("other.sqlite").path)
        let otherEntries = try IdentityStore<Entry>(key: "entries", storage: otherStorage)
        let other = try server.client(storage: otherStorage, token: token)
        try other.add(otherEntries) { _, mine, _ in mine }
        _ = try await other.sync()
        #expect(otherEntries.count == 20)
        #expect(otherEntries[id: "e-0"]?.index == 1, "the other process's change reached the server")
    }

    /// The state a process leaves when it stops after keeping a batch's answer and sending the
    /// next batch, before applying that answer: the server has applied both batches and forgot
    /// the first one's answers. The next sync applies the kept answer first; sending the first
    /// batch again would look like another device using this client id.
    @Test(arguments: Backend.allCases)
    func anAnswerKeptAndNotAppliedIsAppliedAtTheNextSync(backend: Backend) async throws {
        let server = try await TestServer.start(backend, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let path = temporaryDirectory().appendingPathComponent("phone.sqlite").path
        let notes = try await Self.leaveAKeptAnswer(at: path, transport: server.transport, token: token)
        let clientID = try SQLiteStorage(path: path).syncWrite { try SyncSchema.clientID($0) }

        let phone = try Device(server: server, token: token, path: path)
        let report = try await phone.client.sync()
        #expect(report.merged.isEmpty)
        #expect(report.pushed == 6, "three from the kept answer, three answered before")
        #expect(phone.client.pendingCount == 0)
        #expect(try phone.storage.syncWrite { try SyncSchema.clientID($0) } == clientID, "not taken for a copy")
        #expect(try phone.storage.syncWrite { try SyncSchema.keptAnswers($0) }.isEmpty)
        #expect(try await phone.client.sync().pushed == 0)
        let reader = try Device(server: server, token: token)
        #expect(try await reader.client.sync().pulled == 6)
        #expect(Set(reader.notes.all) == Set(notes))
    }

    /// Leaves at `path` the state a phone leaves when it stops after keeping the answer to its
    /// first batch of 3 notes and sending the next batch of 3, before applying that answer: the
    /// server (through `transport`) has applied both batches and forgot the first one's answers.
    /// Returns the 6 notes.
    static func leaveAKeptAnswer(at path: String, transport: any SyncTransport, token: String) async throws
        -> [Note]
    {
        let notes = (0..<6).map { note("note \($0)") }
        // Every answer is lost: the first batch's answer is kept by hand below, as the client
        // keeps it before it sends the next batch.
        let recording = RecordingTransport(transport, losingFrom: 1)
        let phone = try Device(transport: recording, path: path, tokenProvider: { token })
        try phone.notes.add(contentsOf: notes)
        await phone.client.engine.apply(pushBatchSize: 3, smallerEdges: false)
        await #expect(throws: SyncError.self) { try await phone.client.sync() }
        let engine = phone.client.engine
        let outbox = await engine.outbox
        let collections = await engine.collections.withLock { $0 }
        // The first batch, and the next one, planned while the first was at the server.
        let unanswered = try outbox.unanswered(for: collections)
        #expect(unanswered.count == 6)
        let (firstBatch, next) = (unanswered.prefix(3), Array(unanswered.dropFirst(3)))
        let answer = try #require(recording.pushes.withLock { $0.last?.answer })
        #expect(answer.results.map(\.mutationID) == firstBatch.map(\.mutationID))
        try phone.storage.syncWrite {
            try SyncSchema.keepAnswer($0, firstMutationID: firstBatch[0].mutationID, cursor: 0, answer)
        }
        // The next batch reaches the server.
        let api = SyncAPI(transport: transport, tokens: SyncTokenSource(provider: { token }))
        _ = try await api.push(PushRequest(clientID: outbox.clientID, mutations: next, cursor: 0))
        return notes
    }

    /// A phone's file is copied while it holds a kept answer; both phones then write a note of
    /// their own and sync. Both apply the kept answer (the server did apply those mutations);
    /// the server refuses the copy's next mutations as another device's, the copy takes a new
    /// client id, and every note reaches the server once.
    @Test func aPhoneCopiedWhileItHoldsAKeptAnswerLosesNothing() async throws {
        let server = try await TestServer.start(.sqlite, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let folder = temporaryDirectory()
        let path = folder.appendingPathComponent("phone.sqlite").path
        let notes = try await Self.leaveAKeptAnswer(at: path, transport: server.transport, token: token)
        let copyPath = folder.appendingPathComponent("copy.sqlite").path
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copyPath + suffix)
        }

        let phone = try Device(server: server, token: token, path: path)
        let copy = try Device(server: server, token: token, path: copyPath)
        let mine = note("written on the phone")
        let theirs = note("written on the copy")
        try phone.notes.add(mine)
        try copy.notes.add(theirs)
        for _ in 0..<2 {
            try await phone.client.sync()
            try await copy.client.sync()
        }
        let everything = Set(notes + [mine, theirs])
        #expect(Set(phone.notes.all) == everything)
        #expect(Set(copy.notes.all) == everything)
        #expect(phone.client.pendingCount == 0 && copy.client.pendingCount == 0)
        #expect(
            try phone.storage.syncWrite { try SyncSchema.clientID($0) }
                != copy.storage.syncWrite { try SyncSchema.clientID($0) })
        let reader = try Device(server: server, token: token)
        #expect(try await reader.client.sync().pulled == everything.count, "each note once")
        #expect(Set(reader.notes.all) == everything)
    }

    /// A copied phone's long push is refused at its first, small batch, as another device's,
    /// while the batch after it was planned into the outbox: both leave the outbox with the old
    /// client id, and every note is planned again under the new one and reaches the server once.
    @Test(arguments: Backend.allCases)
    func aCopiedPhonesLongPushRefusedAtItsFirstBatchLosesNothing(backend: Backend) async throws {
        let server = try await TestServer.start(backend, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let folder = temporaryDirectory()
        let path = folder.appendingPathComponent("phone.sqlite").path
        let before = note("before the copy")
        do {
            let phone = try Device(server: server, token: token, path: path)
            try phone.notes.add(before)
            try await phone.client.sync()
        }
        let copyPath = folder.appendingPathComponent("copy.sqlite").path
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copyPath + suffix)
        }
        // The phone's next mutation id goes to the server first, with another note.
        let phone = try Device(server: server, token: token, path: path)
        let mine = note("on the phone")
        try phone.notes.add(mine)
        try await phone.client.sync()

        let transport = RecordingTransport(server.transport)
        let copy = try Device(transport: transport, path: copyPath, tokenProvider: { token })
        let oldClientID = try copy.storage.syncWrite { try SyncSchema.clientID($0) }
        let theirs = (0..<25).map { note("on the copy \($0)") }
        try copy.notes.add(contentsOf: theirs)
        await copy.client.engine.apply(pushBatchSize: 10)

        #expect(try await copy.client.sync().pushed == 25)
        let pushes = transport.pushes.withLock { $0 }
        #expect(pushes.first.map { ($0.request.clientID, $0.request.mutations.count) } ?? ("", 0) == (oldClientID, 1))
        #expect(pushes.first?.answer == nil, "refused")
        #expect(pushes.dropFirst().allSatisfy { $0.request.clientID != oldClientID }, "all again under a new id")
        #expect(pushes.dropFirst().flatMap { $0.request.mutations.map(\.id) }.count == 25, "each note once")
        #expect(copy.client.pendingCount == 0)
        let outbox = try copy.storage.syncWrite { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM amber_sync_outbox") }
        #expect(outbox == 0)
        let reader = try Device(server: server, token: token)
        let everything = Set([before, mine] + theirs)
        #expect(try await reader.client.sync().pulled == everything.count, "each note once")
        #expect(Set(reader.notes.all) == everything)
    }

    /// A kept answer the file holds but cannot read (the file was altered) stops the sync before
    /// anything is sent: nothing pending is lost, nothing reaches the server.
    @Test func anUnreadableKeptAnswerStopsTheSyncAndChangesNothing() async throws {
        let server = try await TestServer.start(.sqlite, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let phone = try Device(server: server, token: token)
        try phone.notes.add(contentsOf: (0..<3).map { note("note \($0)") })
        try phone.storage.syncWrite { db in
            try db.execute(
                sql: "INSERT INTO amber_sync_answers (first_mutation_id, cursor, body) VALUES (1, 0, '{\"results\":')")
        }

        await #expect {
            try await phone.client.sync()
        } throws: { error in
            (error as? SyncError)?.kind == .storage
        }
        #expect(phone.client.pendingCount == 3)
        let reader = try Device(server: server, token: token)
        #expect(try await reader.client.sync().pulled == 0, "nothing was sent")
    }
}
