import Amber
import AmberSQLite
import AmberSync
import AmberSyncServer
import Foundation
import Testing

/// Sync as an app built with main-actor isolation by default uses it: the client is created and
/// fed on the main actor, `sync()` runs its work elsewhere, and the store hears a `.sync` change.
@Test func anAppTargetWithMainActorIsolationSyncsItsNotes() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "amber-isolation-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let database = try SQLiteSyncDatabase(path: directory.appendingPathComponent("server.sqlite").path)
    let token = try await database.addUser(named: "ann")
    let server = try await SyncServer(database: database, port: 0).start()
    defer { Task { await server.stop() } }
    let url = URL(string: "http://127.0.0.1:\(server.port)")!

    func device(_ name: String) throws -> (IdentityStore<Note>, SyncClient) {
        let storage = try SQLiteStorage(path: directory.appendingPathComponent("\(name).sqlite").path)
        let notes = try IdentityStore<Note>(key: "notes", storage: storage)
        let client = try SyncClient(storage: storage, server: url, token: token)
        try client.add(notes)
        return (notes, client)
    }
    let (dayNotes, day) = try device("day")
    let (nightNotes, night) = try device("night")
    let note = Note(id: UUID(), text: "from the day phone", tagIDs: ["a"])
    try dayNotes.add(note)
    try await day.sync()
    let report = try await night.sync()
    #expect(report.pulled == 1)
    #expect(nightNotes.all == [note])
}
