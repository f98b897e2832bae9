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

/// A base whose value is the text the store holds for its record keeps no copy of it, and gets
/// one before the record changes: whoever changes it, the change is measured against the base.
@Suite(.boundedConcurrency) struct SharedBaseTests {
    /// The base rows of `device`'s notes: shared (`same`, no text) or holding a text.
    func bases(_ device: Device) throws -> [String: (same: Bool, value: String?)] {
        try device.storage.syncWrite { db in
            var bases: [String: (same: Bool, value: String?)] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, same, value FROM amber_sync_base WHERE key = 'notes'") {
                bases[row[0]] = (row[1], row[2])
            }
            return bases
        }
    }

    func storedText(_ device: Device, _ id: UUID) throws -> String? {
        try device.storage.syncWrite { try SyncSchema.storedText($0, key: "notes", id: id.uuidString) }
    }

    @Test(arguments: Backend.allCases)
    func aChangedRecordKeepsItsBaseWhoeverChangesIt(backend: Backend) async throws {
        let server = try await TestServer.start(backend, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let day = try Device(server: server, token: token)
        let night = try Device(server: server, token: token)
        let notes = [note("edited here"), note("edited by another process"), note("deleted"), note("left")]
        try day.notes.add(contentsOf: notes)
        _ = try await day.client.sync()
        #expect(try await night.client.sync().pulled == 4)

        // Pushed as sent, or pulled: every base shares its record's text.
        for device in [day, night] {
            let shared = try bases(device)
            #expect(shared.count == 4 && shared.values.allSatisfy { $0.same && $0.value == nil })
        }
        let before = try notes.map { try #require(try storedText(night, $0.id)) }

        // The store edits one and deletes one; another storage on the file (as an app
        // extension's process has) rewrites one.
        try night.notes.update(id: notes[0].id) { $0.with(text: "edited at night") }
        _ = try night.notes.remove(id: notes[2].id)
        do {
            let widget = try IdentityStore<Note>(key: "notes", storage: try SQLiteStorage(path: night.path))
            try widget.update(id: notes[1].id) { $0.with(text: "from the widget") }
        }
        let kept = try bases(night)
        for index in 0..<3 {
            let base = try #require(kept[notes[index].id.uuidString])
            #expect(!base.same && base.value == before[index], "note \(index) keeps the text it had")
        }
        #expect(kept[notes[3].id.uuidString]?.same == true)

        // The day phone pins the note edited at night: both changes are kept, field by field.
        try day.notes.update(id: notes[0].id) { $0.with(pinned: true) }
        _ = try await day.client.sync()
        #expect(try await night.client.sync().pushed == 3)
        _ = try await day.client.sync()
        for device in [day, night] {
            #expect(device.notes[id: notes[0].id] == notes[0].with(text: "edited at night").with(pinned: true))
            #expect(device.notes[id: notes[1].id]?.text == "from the widget")
            #expect(device.notes[id: notes[2].id] == nil && device.notes[id: notes[3].id] == notes[3])
            #expect(device.client.pendingCount == 0)
        }
        // Agreed again: shared again, but for the deletion's base, which shares nothing.
        let agreed = try bases(night)
        #expect(agreed[notes[2].id.uuidString].map { !$0.same && $0.value == nil } == true)
        #expect(agreed.filter { $0.key != notes[2].id.uuidString }.values.allSatisfy { $0.same && $0.value == nil })
    }

    /// Pulled records are brought in together: one taken as the server sent it shares the stored
    /// text, and one the store writes otherwise (merged with a local edit, a field this model
    /// does not know dropped) keeps the server's text in its base.
    @Test func aPulledRecordWrittenOtherwiseThanSentKeepsTheServersText() async throws {
        let server = try await TestServer.start(over: .inProcess)
        defer { Task { await server.stop() } }
        let device = try Device(server: server, token: try await server.addUser())
        let edited = note("agreed")
        try device.notes.add(edited)
        _ = try await device.client.sync()
        try device.notes.update(id: edited.id) { $0.with(text: "edited here") }
        let taken = note("only on the server")
        // The server's texts: pinned there, with a field this model does not know.
        func serverText(_ note: Note) -> String {
            #"{"color":"amber","id":"\#(note.id.uuidString)","pinned":true,"tagIDs":[],"text":"\#(note.text)"}"#
        }
        let editedThere = serverText(edited)
        let takenThere = serverText(taken)
        let collection = try #require(device.client.collections.withLock { $0["notes"] })
        _ = try collection.apply(
            [
                ServerState(id: edited.id.uuidString, version: 100, value: JSONRecord(unchecked: editedThere)),
                ServerState(id: taken.id.uuidString, version: 101, value: JSONRecord(unchecked: takenThere)),
            ], plannedAt: nil)

        #expect(device.notes[id: edited.id] == edited.with(text: "edited here").with(pinned: true), "merged")
        let bases = try bases(device)
        #expect(try storedText(device, taken.id) == takenThere, "taken as sent")
        #expect(bases[taken.id.uuidString].map { $0.same && $0.value == nil } == true)
        #expect(try storedText(device, edited.id)?.contains("color") == false, "written as this model writes it")
        #expect(bases[edited.id.uuidString].map { !$0.same && $0.value == editedThere } == true)
        #expect(device.client.pendingCount == 1, "the merged record goes back to the server")
    }

    /// A model that is not `Equatable` (synced with a `resolve` closure) takes a pulled record as
    /// the server sent it too: the store holds the server's text, a field the model does not know
    /// included, and the base shares it; a local edit then goes back as that field alone, so the
    /// field the model does not know stays on the server.
    @Test func aModelThatIsNotEquatableKeepsThePulledTextAndItsBaseSharesIt() async throws {
        struct Memo: Identifiable, Codable, Sendable {
            let id: String
            let text: String
        }
        struct ColoredMemo: Identifiable, Codable, Sendable, Equatable {
            let id: String
            let text: String
            let color: String
        }
        let server = try await TestServer.start(over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        func client(at path: String) throws -> (SQLiteStorage, SyncClient) {
            let storage = try SQLiteStorage(path: path)
            let client = try SyncClient(storage: storage, transport: server.transport, tokenProvider: { token })
            return (storage, client)
        }
        // A newer version of the app writes memos with a color.
        let newerPath = temporaryDirectory().appendingPathComponent("newer.sqlite").path
        let (newerStorage, newer) = try client(at: newerPath)
        let colored = try IdentityStore<ColoredMemo>(key: "memos", storage: newerStorage)
        try newer.add(colored) { _, _, theirs in theirs }
        try colored.add(ColoredMemo(id: "m", text: "first", color: "amber"))
        _ = try await newer.sync()
        let serverText = try #require(
            try newerStorage.syncWrite { try SyncSchema.storedText($0, key: "memos", id: "m") })

        let olderPath = temporaryDirectory().appendingPathComponent("older.sqlite").path
        let (olderStorage, older) = try client(at: olderPath)
        let memos = try IdentityStore<Memo>(key: "memos", storage: olderStorage)
        try older.add(memos) { _, mine, _ in mine }
        #expect(try await older.sync().pulled == 1)
        #expect(try olderStorage.syncWrite { try SyncSchema.storedText($0, key: "memos", id: "m") } == serverText)
        let base = try olderStorage.syncWrite { db in
            try Row.fetchOne(db, sql: "SELECT same, value FROM amber_sync_base WHERE key = 'memos' AND id = 'm'")
        }
        #expect(base?["same"] == true && base?["value"] as String? == nil, "the base shares the stored text")
        #expect(older.pendingCount == 0)

        try memos.add(Memo(id: "m", text: "edited by the older app"))
        #expect(try await older.sync().pushed == 1)
        _ = try await newer.sync()
        #expect(colored[id: "m"] == ColoredMemo(id: "m", text: "edited by the older app", color: "amber"))
    }

    /// A record deleted on another phone and brought back here under the same id (an undone
    /// deletion) goes back to the server: the base of a deletion shares nothing.
    @Test(arguments: Backend.allCases)
    func aDeletionUndoneUnderTheSameIDIsPushed(backend: Backend) async throws {
        let server = try await TestServer.start(backend, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let day = try Device(server: server, token: token)
        let night = try Device(server: server, token: token)
        let kept = note("kept")
        try day.notes.add(kept)
        _ = try await day.client.sync()
        _ = try await night.client.sync()
        _ = try day.notes.remove(id: kept.id)
        _ = try await day.client.sync()
        #expect(try await night.client.sync().pulled == 1)
        #expect(night.notes[id: kept.id] == nil)
        let base = try #require(try bases(night)[kept.id.uuidString])
        #expect(!base.same && base.value == nil, "a deletion's base")

        try night.notes.add(kept)
        #expect(night.client.pendingCount == 1)
        #expect(try await night.client.sync().pushed == 1)
        _ = try await day.client.sync()
        #expect(day.notes[id: kept.id] == kept)
    }

    /// A file written before bases could share their record's text gains the column, and its
    /// bases, each holding its text, read as before.
    @Test func aFileOfEarlierBasesIsUpgradedAndReadsTheSame() throws {
        let storage = try SQLiteStorage(path: temporaryDirectory().appendingPathComponent("old.sqlite").path)
        let (bases, columns) = try storage.syncWrite { db in
            try db.execute(
                sql: """
                    CREATE TABLE amber_sync_base (
                        key TEXT NOT NULL, id TEXT NOT NULL, version INTEGER NOT NULL, value TEXT,
                        PRIMARY KEY (key, id)) WITHOUT ROWID;
                    INSERT INTO amber_sync_base (key, id, version, value) VALUES ('notes', 'a', 3, '{"text":"agreed"}');
                    INSERT INTO amber_sync_base (key, id, version, value) VALUES ('notes', 'b', 4, NULL);
                    """)
            try SyncSchema.prepare(db)
            try SyncSchema.prepare(db)
            return (
                try SyncSchema.bases(db, key: "notes", ids: ["a", "b"]),
                try Row.fetchAll(db, sql: "PRAGMA table_info(amber_sync_base)").map { $0["name"] as String }
            )
        }
        #expect(columns.contains("same"))
        #expect(bases[ExactText("a")]?.version == 3 && bases[ExactText("a")]?.value?.text == #"{"text":"agreed"}"#)
        #expect(bases[ExactText("b")]?.version == 4 && bases[ExactText("b")]?.value == nil)
    }

    /// Several processes opening a file of an earlier version at once (each its own connection):
    /// each upgrades it or finds it upgraded, none fails.
    @Test func clientsOpeningAnEarlierFileAtOnceAllSucceed() throws {
        for round in 0..<5 {
            let path = temporaryDirectory().appendingPathComponent("old-\(round).sqlite").path
            try SQLiteStorage(path: path).syncWrite { db in
                try db.execute(
                    sql: """
                        CREATE TABLE amber_sync_base (
                            key TEXT NOT NULL, id TEXT NOT NULL, version INTEGER NOT NULL, value TEXT,
                            PRIMARY KEY (key, id)) WITHOUT ROWID;
                        """)
            }
            let failures = LockedValue<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 6) { _ in
                do {
                    _ = try SyncClient(
                        storage: try SQLiteStorage(path: path), server: URL(string: "http://127.0.0.1:9")!,
                        token: "t")
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [], "round \(round)")
        }
    }

    /// A phone synced by a version that kept its records in a table keyed by id, whose widget
    /// (a process that never opens sync) is the first to open the file after the update: the move
    /// keeps the records, their shared bases and the triggers that log the widget's edit and keep
    /// its base, so the app's next sync pushes the edit and it merges field by field.
    @Test func aSyncedFileMovedToTheRowidTableKeepsItsBasesAndMerges() async throws {
        let server = try await TestServer.start(.sqlite, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let day = try Device(server: server, token: token)
        let path = temporaryDirectory().appendingPathComponent("night.sqlite").path
        let notes = [note("one"), note("two")]
        try day.notes.add(contentsOf: notes)
        _ = try await day.client.sync()
        do {
            let night = try Device(server: server, token: token, path: path)
            #expect(try await night.client.sync().pulled == 2)
        }
        // The file as versions before the rowid table kept it.
        let old = try await DatabaseQueue(path: path).write { db in
            try SQLiteStorage.rebuildRecordsTable(db, keyedById: true)
            return (
                keyed: try SQLiteStorage.keepsRecordsKeyedById(db),
                triggers: try String.fetchAll(
                    db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'amber_records'")
            )
        }
        #expect(old.keyed == true)
        #expect(old.triggers.count == 7, "the change log's three, the bases' two and the outbox's two")

        do {
            let widgetStorage = try SQLiteStorage(path: path)
            let keyed = try await widgetStorage.database.read { try SQLiteStorage.keepsRecordsKeyedById($0) }
            #expect(keyed == false, "moved when opened")
            let widget = try IdentityStore<Note>(key: "notes", storage: widgetStorage)
            try widget.update(id: notes[0].id) { $0.with(text: "edited at night") }
        }
        let night = try Device(server: server, token: token, path: path)
        #expect(night.client.pendingCount == 1, "the widget's edit is logged")
        let kept = try bases(night)[notes[0].id.uuidString]
        #expect(kept.map { !$0.same && $0.value != nil } == true, "the base took the text it had")
        try day.notes.update(id: notes[0].id) { $0.with(pinned: true) }
        _ = try await day.client.sync()
        #expect(try await night.client.sync().pushed == 1)
        _ = try await day.client.sync()
        for device in [day, night] {
            #expect(device.notes[id: notes[0].id] == notes[0].with(text: "edited at night").with(pinned: true))
            #expect(device.notes[id: notes[1].id] == notes[1])
            #expect(device.client.pendingCount == 0)
        }
    }
}
