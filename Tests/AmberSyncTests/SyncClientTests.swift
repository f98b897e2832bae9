import Amber
import AmberSQLite
import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import GRDB
import Testing

@testable import AmberSync

@Suite(.boundedConcurrency, .serialized) struct SyncClientTests {
    @Test(arguments: Backend.allCases)
    func aNoteWrittenOnOneDeviceArrivesOnTheOtherAsASyncChange(backend: Backend) async throws {
        let server = try await TestServer.start(backend, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let day = try Device(server: server, token: token)
        let night = try Device(server: server, token: token)
        let changes = Collected(night.notes.changes())

        let hello = note("hello")
        try day.notes.add(hello)
        #expect(day.client.pendingCount == 1)
        let pushed = try await day.client.sync()
        #expect(pushed.pushed == 1)
        #expect(day.client.pendingCount == 0)

        let pulled = try await night.client.sync()
        #expect(pulled.pulled == 1)
        #expect(night.notes[id: hello.id] == hello)
        #expect(night.client.pendingCount == 0, "a pulled value is not pending")
        #expect(await eventually { changes.values.contains { $0.origin == .sync && $0.inserted == [hello] } })

        // Nothing goes back: a pulled value is never pushed back unchanged.
        let again = try await night.client.sync()
        #expect(again.pushed == 0 && again.pulled == 0)
    }

    /// A pull writes its records with the change log paused for their collection: the log comes
    /// back with the pull's commit, for this process's writes and an app extension's alike.
    @Test func writesAfterAPullAreLoggedAsPendingAgain() async throws {
        let server = try await TestServer.start(.sqlite, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let day = try Device(server: server, token: token)
        let night = try Device(server: server, token: token)
        let notes = (0..<3).map { note("note \($0)") }
        try day.notes.add(contentsOf: notes)
        _ = try await day.client.sync()

        #expect(try await night.client.sync().pulled == 3)
        #expect(night.client.pendingCount == 0, "pulled records are not pending")
        try night.notes.update(id: notes[0].id) { $0.with(text: "edited at night") }
        #expect(night.client.pendingCount == 1, "an edit after the pull is logged")
        // An app extension: its own storage on the same file, no sync client.
        let extensionNotes = try IdentityStore<Note>(key: "notes", storage: SQLiteStorage(path: night.path))
        try extensionNotes.add(note("from the share extension"))
        #expect(night.client.pendingCount == 2, "another connection's write after the pull is logged")

        // Both go out, and the night's edit merges with the day's.
        try day.notes.update(id: notes[0].id) { $0.with(pinned: true) }
        _ = try await day.client.sync()
        let report = try await night.client.sync()
        #expect(report.pushed == 2)
        #expect(night.client.pendingCount == 0)
        _ = try await day.client.sync()
        #expect(day.notes[id: notes[0].id]?.text == "edited at night")
        #expect(day.notes[id: notes[0].id]?.pinned == true)
        #expect(day.notes.count == 4)
    }

    /// A long sync reports its progress: batches pushed of the pending records, pages pulled of
    /// the total the server counts for a pull from the beginning.
    @Test(arguments: Backend.allCases)
    func aLongSyncReportsItsProgress(backend: Backend) async throws {
        let server = try await TestServer.start(backend, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let day = try Device(server: server, token: token)
        let night = try Device(server: server, token: token)
        // More than one push batch of `Outbox.defaultBatchSize`.
        let count = Outbox.defaultBatchSize + 500
        try day.notes.add(contentsOf: (0..<count).map { note("note \($0)") })
        let dayEvents = Collected(day.client.events())
        let nightEvents = Collected(night.client.events())
        // The night phone applies what it pulls a page a transaction (by default, one for all).
        await night.client.engine.apply(recordsPerTransaction: 1_000)

        #expect(try await day.client.sync().pushed == count)
        #expect(try await night.client.sync().pulled == count)
        #expect(night.notes.count == count && night.client.pendingCount == 0)

        func progress(_ events: Collected<SyncEvent>, _ count: Int) async -> [SyncProgress] {
            _ = await eventually { events.values.count { if case .progress = $0 { true } else { false } } >= count }
            return events.values.compactMap { if case .progress(let progress) = $0 { progress } else { nil } }
        }
        // The day phone then pulls from the beginning too (its first pull): pages of its own notes.
        // Batches of up to `Outbox.defaultBatchSize` (the notes are small, far from the byte
        // bound), the first and last an eighth of that (`SyncEngine.batchLimit`).
        let edge = Outbox.defaultBatchSize / SyncEngine.edgeDivisor
        let batches = [edge, count - edge, count]
        let pushed = await progress(dayEvents, batches.count).filter { $0.phase == .pushing }
        #expect(pushed.map(\.completed) == batches)
        #expect(pushed.allSatisfy { $0.total == count })
        #expect(pushed.map(\.bytes) == pushed.map(\.bytes).sorted() && pushed[0].bytes > 500 * 50)
        // Pages of 1,000.
        let pages = Array(stride(from: 1_000, to: count, by: 1_000)) + [count]
        let pulled = await progress(nightEvents, pages.count)
        #expect(pulled.allSatisfy { $0.phase == .pulling })
        #expect(pulled.map(\.completed) == pages)
        #expect(pulled.allSatisfy { $0.total == count })
        #expect(pulled.last?.fraction == 1)
        // The pull of what changed since is short, and has no total.
        try day.notes.add(note("one more"))
        _ = try await day.client.sync()
        _ = try await night.client.sync()
        let more = await progress(nightEvents, pages.count + 1)
        #expect(more.last?.completed == 1 && more.last?.total == nil)
        // A sync that finds nothing reports no progress.
        _ = try await night.client.sync()
        try await Task.sleep(for: .milliseconds(200))
        #expect(await progress(nightEvents, pages.count + 1).count == pages.count + 1)
    }

    /// A pull writes its first page as soon as it is here, then transactions as large as what it
    /// wrote before, up to its largest: the writing starts while the next pages are fetched.
    @Test func aLargePullWritesItsFirstPageAloneThenLargerTransactions() async throws {
        let server = try await TestServer.start(.sqlite, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let day = try Device(server: server, token: token)
        let night = try Device(server: server, token: token)
        try day.notes.add(contentsOf: (0..<5_500).map { note("note \($0)") })
        _ = try await day.client.sync()
        await night.client.engine.apply(recordsPerTransaction: 4_000)
        let changes = Collected(night.notes.changes())

        #expect(try await night.client.sync().pulled == 5_500)
        _ = await eventually { changes.values.reduce(0) { $0 + $1.inserted.count } == 5_500 }
        // Pages of 1,000: one, one, two, then the rest (at most 4,000).
        #expect(changes.values.map { $0.origin == .sync ? $0.inserted.count : -1 } == [1_000, 1_000, 2_000, 1_500])
        #expect(night.notes.count == 5_500 && night.client.pendingCount == 0)
    }

    /// Seed 002: the day phone renames a tag and edits the note's text while the night phone has
    /// the note open in an editor, where the user pins it. Nothing typed on either phone is lost.
    /// A server whose body limit (`amber-sync serve --max-body`) is below a push's batch answers
    /// 413 and applies none of it: the client sends the same records in smaller batches, and each
    /// arrives once. A single record above the limit is an error that says so.
    @Test func aServerWithASmallBodyLimitGetsSmallerBatches() async throws {
        let server = try await TestServer.start(.sqlite, over: .http, maximumBodySize: 64 * 1_024)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let day = try Device(server: server, token: token)
        let night = try Device(server: server, token: token)
        let padding = String(repeating: "x", count: 150)
        try day.notes.add(contentsOf: (0..<1_500).map { note("note \($0) \(padding)") })

        #expect(try await day.client.sync().pushed == 1_500)
        #expect(day.client.pendingCount == 0)
        #expect(try await night.client.sync().pulled == 1_500)
        #expect(night.notes.count == 1_500)

        try day.notes.add(note(String(repeating: "y", count: 100 * 1_024)))
        await #expect {
            _ = try await day.client.sync()
        } throws: { error in
            guard let error = error as? SyncError else { return false }
            return error.kind == .server(status: 413)
        }
        #expect(day.client.pendingCount == 1, "kept, to be pushed to a server that takes it")
    }

    @MainActor @Test func theVesperStory() async throws {
        let server = try await TestServer.start(over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let day = try Device(server: server, token: token)
        let night = try Device(server: server, token: token)

        let iceCream = Tag(id: UUID(), name: "ice cream")
        let sorbet = note("ice cream is great", tags: [iceCream.id])
        try day.tags.add(iceCream)
        try day.notes.add(sorbet)
        try await day.client.sync()
        try await night.client.sync()

        let editor = try night.notes.editor(id: sorbet.id)
        editor.update { $0.pinned = true }

        try day.tags.add(iceCream.with(name: "Ice Cream"))
        try day.notes.update(id: sorbet.id) { $0.with(text: "sorbet is great too") }
        try await day.client.sync()

        try await night.client.sync()
        #expect(night.tags[id: iceCream.id]?.name == "Ice Cream")
        #expect(
            await eventually { await MainActor.run { editor.value.text == "sorbet is great too" } },
            "the editor rebased onto the day phone's edit")
        #expect(editor.value.pinned, "and kept what the user typed")
        #expect(editor.conflicts.isEmpty)
        try editor.save()
        try await night.client.sync()
        try await day.client.sync()

        let expected = sorbet.with(text: "sorbet is great too").with(pinned: true)
        #expect(day.notes.all == [expected])
        #expect(night.notes.all == [expected])
        #expect(day.tags.all == night.tags.all)
    }

    @Test(arguments: Backend.allCases)
    func theSameFieldEditedOnBothSidesIsMergedReportedAndConverges(backend: Backend) async throws {
        let server = try await TestServer.start(backend, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let a = try Device(server: server, token: token)
        let b = try Device(server: server, token: token)
        let original = note("draft")
        try a.notes.add(original)
        try await a.client.sync()
        try await b.client.sync()

        try a.notes.add(original.with(text: "from a").with(pinned: true))
        try b.notes.add(original.with(text: "from b"))
        try await a.client.sync()
        let report = try await b.client.sync()
        #expect(report.merged == [SyncConflict(collection: "notes", id: original.id.uuidString, fields: ["text"])])
        #expect(
            b.notes[id: original.id] == original.with(text: "from b").with(pinned: true), "b keeps its text and a's pin"
        )

        try await a.client.sync()
        try await b.client.sync()
        #expect(a.notes.all == b.notes.all)
    }

    @Test(arguments: [true, false])
    func anEditWinsOverADeletion(editorSyncsFirst: Bool) async throws {
        let server = try await TestServer.start(over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let editing = try Device(server: server, token: token)
        let deleting = try Device(server: server, token: token)
        let original = note("keep me")
        try editing.notes.add(original)
        try await editing.client.sync()
        try await deleting.client.sync()

        try editing.notes.add(original.with(text: "kept, edited"))
        try deleting.notes.remove(original)
        if editorSyncsFirst {
            try await editing.client.sync()
            try await deleting.client.sync()
        } else {
            try await deleting.client.sync()
            try await editing.client.sync()
        }
        try await deleting.client.sync()
        try await editing.client.sync()
        #expect(editing.notes.all == [original.with(text: "kept, edited")])
        #expect(deleting.notes.all == [original.with(text: "kept, edited")])
    }

    @Test func deletionsOnBothSidesAreNoConflict() async throws {
        let server = try await TestServer.start(over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let a = try Device(server: server, token: token)
        let b = try Device(server: server, token: token)
        let original = note("gone")
        try a.notes.add(original)
        try await a.client.sync()
        try await b.client.sync()

        try a.notes.remove(original)
        try b.notes.remove(original)
        let first = try await a.client.sync()
        let second = try await b.client.sync()
        #expect(first.merged.isEmpty && second.merged.isEmpty)
        try await a.client.sync()
        #expect(a.notes.all.isEmpty && b.notes.all.isEmpty)
        #expect(a.client.pendingCount == 0 && b.client.pendingCount == 0)
    }

    @Test func writesMadeOfflineArePushedWhenTheServerIsBack() async throws {
        let directory = temporaryDirectory()
        let serverPath = directory.appendingPathComponent("server.sqlite").path
        let server = try await TestServer.start(path: serverPath)
        let token = try await server.addUser()
        let port = server.port
        let a = try Device(server: server.url, token: token)
        let b = try Device(server: server.url, token: token)
        await server.stop()

        let offline = note("written offline")
        try a.notes.add(offline)
        await #expect {
            try await a.client.sync()
        } throws: { error in
            (error as? SyncError)?.kind == .offline
        }
        #expect(a.client.pendingCount == 1)
        #expect(a.notes.all == [offline], "nothing local lost")

        let restarted = try await TestServer.start(path: serverPath, port: port)
        defer { Task { await restarted.stop() } }
        let report = try await a.client.sync()
        #expect(report.pushed == 1)
        try await b.client.sync()
        #expect(b.notes.all == [offline])
    }

    @Test func aWrongTokenIsAClearErrorAndLosesNothing() async throws {
        let server = try await TestServer.start(over: .inProcess)
        defer { Task { await server.stop() } }
        _ = try await server.addUser()
        let device = try Device(server: server, token: "not-a-token")
        let kept = note("kept")
        try device.notes.add(kept)
        await #expect {
            try await device.client.sync()
        } throws: { error in
            guard let error = error as? SyncError else { return false }
            return error.kind == .unauthorized && error.description.contains("refused the token")
        }
        #expect(device.notes.all == [kept])
        #expect(device.client.pendingCount == 1)
    }

    /// A first sync large enough to decode its records ahead of the transaction, on every core:
    /// each note lands under its own identity with its own text, and records of a shape this
    /// model cannot read, among them, are left alone.
    @Test func aLargePullDecodedAheadPutsEachValueInItsPlace() async throws {
        let server = try await TestServer.start(over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let writer = try Device(server: server, token: token)
        let first = (0..<300).map { note("first \($0)", pinned: $0 % 3 == 0) }
        try writer.notes.add(contentsOf: first)
        try await writer.client.sync()
        // A newer app version whose `pinned` is text: this model cannot read its notes.
        let newer = temporaryDirectory().appendingPathComponent("newer.sqlite").path
        let newerStorage = try SQLiteStorage(path: newer)
        let reshaped = try IdentityStore<ReshapedNote>(key: "notes", storage: newerStorage)
        let newerClient = try server.client(storage: newerStorage, token: token)
        try newerClient.add(reshaped)
        try reshaped.add(contentsOf: (0..<3).map { ReshapedNote(id: UUID(), text: "reshaped \($0)", pinned: "yes") })
        try await newerClient.sync()
        let second = (0..<300).map { note("second \($0)") }
        try writer.notes.add(contentsOf: second)
        try await writer.client.sync()
        #expect(TypedCollection<Note>.decodedOnOneThread < 603, "one transaction decodes ahead")

        let reader = try Device(server: server, token: token)
        try await reader.client.sync()
        #expect(reader.notes.count == 600)
        for note in first + second {
            #expect(reader.notes[id: note.id] == note)
        }
        #expect(reader.client.pendingCount == 0, "the unreadable records are left alone, not pushed back")
        // Each record's text, written as the server sent it, is its own note's.
        let reopened = try IdentityStore<Note>(key: "notes", storage: SQLiteStorage(path: reader.path))
        #expect(reopened.count == 600)
        for note in first + second where reopened[id: note.id] != note {
            Issue.record("note \(note.text) reads back as \(String(describing: reopened[id: note.id]))")
        }
    }

    @Test func anOlderAppVersionNeverErasesAFieldItDoesNotKnow() async throws {
        let server = try await TestServer.start(over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let newer = temporaryDirectory().appendingPathComponent("newer.sqlite").path
        let newStorage = try SQLiteStorage(path: newer)
        let newNotes = try IdentityStore<NoteWithColor>(key: "notes", storage: newStorage)
        let newClient = try server.client(storage: newStorage, token: token)
        try newClient.add(newNotes)
        let old = try Device(server: server, token: token)

        let colored = NoteWithColor(id: UUID(), text: "colored", tagIDs: [], pinned: false, color: "amber")
        try newNotes.add(colored)
        try await newClient.sync()
        try await old.client.sync()
        // The old app keeps the server's text of the record it took as it is, color included
        // (nothing encodes it again), and reads its own value from it.
        let pulledText = try await old.storage.database.read { db in
            try String.fetchOne(
                db, sql: "SELECT value FROM amber_records WHERE key = 'notes' AND id = ?",
                arguments: [colored.id.uuidString])
        }
        #expect(pulledText?.contains(#""color":"amber""#) == true)
        #expect(old.client.pendingCount == 0)
        let reopened = try IdentityStore<Note>(key: "notes", storage: SQLiteStorage(path: old.path))
        #expect(reopened[id: colored.id] == Note(id: colored.id, text: "colored", tagIDs: [], pinned: false))
        try old.notes.update(id: colored.id) { $0.with(text: "edited by the old app") }
        try await old.client.sync()
        try await newClient.sync()

        #expect(newNotes[id: colored.id] == colored.with(text: "edited by the old app"), "the color survived")
    }

    @Test func aWriteOfAnotherStorageOnTheFileIsPushed() async throws {
        let server = try await TestServer.start(over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let device = try Device(server: server, token: token)
        // Another writer on the same file that never creates a client (an app extension).
        let extensionStorage = try SQLiteStorage(path: device.path)
        let extensionNotes = try IdentityStore<Note>(key: "notes", storage: extensionStorage)
        let shared = note("from the share extension")
        try extensionNotes.add(shared)

        try await device.client.sync()
        let other = try Device(server: server, token: token)
        try await other.client.sync()
        #expect(other.notes.all == [shared])
    }

    @Test func writesOfAnotherProcessThatNeverSyncsArePushed() async throws {
        let server = try await TestServer.start(over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let path = temporaryDirectory().appendingPathComponent("app.sqlite").path
        let storage = try SQLiteStorage(path: path)
        let entries = try IdentityStore<Entry>(key: "entries", storage: storage)
        let client = try server.client(storage: storage, token: token)
        try client.add(entries) { _, mine, _ in mine }

        let writer = Process()
        writer.executableURL = builtExecutable(named: "amber-sqlite-writer")
        writer.arguments = [path, "entries", "25", "ext"]
        let result = try runToEnd(writer)
        #expect(result.status == 0, "\(result.error)")

        try await client.sync()
        let otherPath = temporaryDirectory().appendingPathComponent("other.sqlite").path
        let otherStorage = try SQLiteStorage(path: otherPath)
        let otherEntries = try IdentityStore<Entry>(key: "entries", storage: otherStorage)
        let other = try server.client(storage: otherStorage, token: token)
        try other.add(otherEntries) { _, mine, _ in mine }
        try await other.sync()
        #expect(otherEntries.count == 25)
    }

    @Test(arguments: Backend.allCases)
    func twoStartedClientsSeeEachOthersWritesWithinSeconds(backend: Backend) async throws {
        let server = try await TestServer.start(backend, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let a = try Device(server: server, token: token)
        let b = try Device(server: server, token: token)
        a.client.start()
        b.client.start()
        // Both are waiting on the server before the writes start.
        try await Task.sleep(nanoseconds: 300_000_000)

        // Seconds, not the tens of milliseconds an idle machine takes: a full parallel run starves
        // the in-process server and both clients at once. How soon belongs to the benchmarks
        // (`propagation`, `fan-out`); what this checks is that started clients need no sync() call.
        for round in 0..<3 {
            let fromA = note("a \(round)")
            let start = Date()
            try a.notes.add(fromA)
            #expect(await eventually(within: 3) { b.notes[id: fromA.id] != nil })
            let fromB = note("b \(round)")
            try b.notes.add(fromB)
            #expect(await eventually(within: 3) { a.notes[id: fromB.id] != nil })
            #expect(Date().timeIntervalSince(start) < 6)
        }
        await a.client.stop()
        await b.client.stop()
        #expect(a.notes.all.count == 6 && Set(a.notes.all) == Set(b.notes.all))
    }
}

@Suite(.boundedConcurrency) struct SyncResetTests {
    /// After `amber-sync prune`, a client whose cursor is older than what the server remembers
    /// gets `410`, pulls everything again, removes what the server no longer has, and keeps and
    /// pushes its own pending changes.
    @Test(arguments: Backend.allCases)
    func aClientBehindPrunedDeletionsResyncsAndKeepsItsPendingChanges(backend: Backend) async throws {
        let server = try await TestServer.start(backend, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let a = try Device(server: server, token: token)
        let b = try Device(server: server, token: token)
        let gone = note("deleted, then pruned")
        let kept = note("kept")
        try a.notes.add(contentsOf: [gone, kept])
        try await a.client.sync()
        try await b.client.sync()
        try a.notes.remove(gone)
        try await a.client.sync()
        #expect(try await server.database.prune(deletionsOlderThan: Date().addingTimeInterval(60)) == 1)

        let offline = note("written on b meanwhile")
        try b.notes.add(offline)
        try await b.client.sync()
        #expect(Set(b.notes.all) == [kept, offline])
        try await a.client.sync()
        #expect(Set(a.notes.all) == [kept, offline])
    }
}

@Suite(.boundedConcurrency) struct SyncClientMisuseTests {
    @Test func aStoreOfAnotherStorageOrWithAnInvalidKeyIsRefused() throws {
        let storage = try SQLiteStorage(path: temporaryDirectory().appendingPathComponent("a.sqlite").path)
        let client = try SyncClient(storage: storage, server: URL(string: "http://127.0.0.1:9")!, token: "t")
        let other = try SQLiteStorage(path: temporaryDirectory().appendingPathComponent("b.sqlite").path)

        for store in [try IdentityStore<Note>(key: "notes", storage: other), IdentityStore<Note>()] {
            #expect {
                try client.add(store)
            } throws: { error in
                (error as? SyncError)?.kind == .misuse && "\(error)".contains(storage.path)
            }
        }
        #expect {
            try client.add(try IdentityStore<Note>(key: "my notes", storage: storage))
        } throws: { error in
            (error as? SyncError)?.kind == .misuse && "\(error)".contains("my notes")
        }
        #expect(client.pendingCount == 0)
    }
}
