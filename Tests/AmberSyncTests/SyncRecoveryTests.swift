import Amber
import AmberSQLite
import AmberSync
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import GRDB
import Testing

/// Real mistakes and outages, against `amber-sync serve` running as its own process: an edit of
/// a record whose deletion was pruned, a device copied from another, a server database restored
/// from a backup or replaced; and, in process, changes queued behind many that need no push.
@Suite(.boundedConcurrency, .serialized) struct SyncRecoveryTests {
    /// Night deletes a note and syncs; the operator prunes deletions; day, offline, edits that
    /// note and syncs. The edit wins: it reaches the server and night, and nothing stays pending.
    @Test(arguments: Backend.allCases)
    func anEditOfANoteWhoseDeletionWasPrunedWins(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let database = try #require(test.location)
            let token = try await amberSync(["user", "add", "ann", "--database", database])
            let server = try await ServerProcess.start(database: database)
            defer { server.stop() }
            let night = try Device(server: server.url, token: token)
            let day = try Device(server: server.url, token: token)
            let shared = note("shared")
            try night.notes.add(shared)
            try await night.client.sync()
            try await day.client.sync()
            #expect(day.notes[id: shared.id] == shared)

            try night.notes.remove(shared)
            try await night.client.sync()
            try await Task.sleep(nanoseconds: 20_000_000)
            _ = try await amberSync(["prune", "--older-than", "0", "--database", database])

            let edited = shared.with(text: "edited offline on day")
            try day.notes.add(edited)
            try await day.client.sync()
            #expect(day.client.pendingCount == 0, "the edit was pushed")
            try await day.client.sync()
            #expect(day.client.pendingCount == 0)
            #expect(day.notes[id: shared.id] == edited)

            try await night.client.sync()
            #expect(night.notes[id: shared.id] == edited, "the edit wins over the pruned deletion")
        }
    }

    /// A phone's `NOTES_HOME` is copied to a second phone while the first is still used: both
    /// push different notes under the same client id. The server refuses the second one's
    /// mutations instead of answering them as retries; that phone takes a new client id and
    /// pushes again, and every note reaches the server.
    @Test func twoPhonesSharingOneClientIDLoseNothing() async throws {
        let database = temporaryDirectory().appendingPathComponent("server.sqlite").path
        let token = try await amberSync(["user", "add", "ann", "--database", database])
        let server = try await ServerProcess.start(database: database)
        defer { server.stop() }
        let first = temporaryDirectory()
        try #require(try await notes(first, "add", "before the copy").status == 0)
        let setUp = try await notes(first, "sync", "--server", server.url.absoluteString, "--token", token)
        try #require(setUp.status == 0, "\(setUp.output) \(setUp.error)")
        // An unsynced note too, so both copies have the same mutation waiting to be planned.
        try #require(try await notes(first, "add", "pending at the copy").status == 0)
        let copy = temporaryDirectory().appendingPathComponent("copy")
        try FileManager.default.copyItem(at: first, to: copy)

        try #require(try await notes(first, "add", "only on the first phone").status == 0)
        let firstSync = try await notes(first, "sync")
        #expect(firstSync.status == 0, "\(firstSync.error)")
        try #require(try await notes(copy, "add", "only on the copy").status == 0)
        let copySync = try await notes(copy, "sync")
        #expect(copySync.status == 0, "\(copySync.error)")
        // Both keep syncing afterwards.
        #expect(try await notes(first, "add", "later on the first phone").status == 0)
        #expect(try await notes(first, "sync").status == 0)
        #expect(try await notes(copy, "sync").status == 0)

        let reader = temporaryDirectory()
        #expect(try await notes(reader, "sync", "--server", server.url.absoluteString, "--token", token).status == 0)
        let listed = try await notes(reader, "list").output
        for text in [
            "before the copy", "pending at the copy", "only on the first phone", "only on the copy",
            "later on the first phone",
        ] {
            #expect(listed.contains(text), "\(text) reached the server")
        }
        #expect(listed.components(separatedBy: "pending at the copy").count == 2, "pushed once, by either phone")
    }

    /// Day syncs; the server database is restored from an older backup; night pushes a new note.
    /// Day notices the changed history, pulls everything again and pushes back the note the
    /// server lost; both phones end with every note.
    ///
    /// With `dayWritesFirst`, day also writes a note before its next sync: night's pushes bring
    /// the restored server back to day's cursor, so day's push gets the versions right after
    /// it. Its answer must not move day's cursor over a history day never saw.
    @Test(arguments: Backend.allCases, [false, true])
    func aServerRestoredFromABackupLosesNoNote(backend: Backend, dayWritesFirst: Bool) async throws {
        let original = try makeDatabase(backend)
        let backup = try makeDatabase(backend)
        defer {
            original.drop()
            backup.drop()
        }
        let token = try await amberSync(["user", "add", "ann", "--database", original.location])
        var server = try await ServerProcess.start(database: original.location)
        let port = server.port
        let day = try Device(server: server.url, token: token)
        let night = try Device(server: server.url, token: token)
        let first = note("before the backup")
        try day.notes.add(first)
        try await day.client.sync()
        try await night.client.sync()

        try await copyDatabase(original, to: backup, backend: backend)
        let lost = note("written on day after the backup")
        try day.notes.add(lost)
        let edited = first.with(pinned: true)
        try day.notes.add(edited)
        try await day.client.sync()
        server.stop()

        // The operator restores the backup: the server now serves the older copy.
        server = try await ServerProcess.start(database: backup.location, port: port)
        defer { server.stop() }
        // Two notes in one push: the restored server hands out day's versions again, under
        // another tag.
        let fromNight = [note("written on night after the restore"), note("and another")]
        try night.notes.add(contentsOf: fromNight)
        try await night.client.sync()

        let fromDay = dayWritesFirst ? [note("written on day after the restore")] : []
        try day.notes.add(contentsOf: fromDay)
        try await day.client.sync()
        #expect(Set(day.notes.all.map(\.id)) == Set([first.id, lost.id] + fromNight.map(\.id) + fromDay.map(\.id)))
        #expect(day.notes[id: first.id] == edited, "day's edit after the backup is kept")
        try await night.client.sync()
        try await day.client.sync()
        #expect(Set(night.notes.all) == Set(day.notes.all), "both phones converge")
        #expect(night.notes[id: lost.id] == lost, "the note the server lost came back from day")
        #expect(night.notes[id: first.id] == edited, "so did the edit")
        #expect(day.client.pendingCount == 0 && night.client.pendingCount == 0)
    }

    /// The server database is restored from a backup taken before a phone pushed 6 notes in two
    /// batches, while the phone holds the answer to the first batch unapplied (it stopped after
    /// sending the second). The restored server has neither batch: the phone applies its kept
    /// answer, notices the changed history, and every note reaches the server again.
    @Test(arguments: Backend.allCases)
    func aServerRestoredWhileAPhoneHoldsAKeptAnswerGetsEveryNoteBack(backend: Backend) async throws {
        let original = try makeDatabase(backend)
        let backup = try makeDatabase(backend)
        defer {
            original.drop()
            backup.drop()
        }
        let token = try await amberSync(["user", "add", "ann", "--database", original.location])
        var server = try await ServerProcess.start(database: original.location)
        let port = server.port
        try await copyDatabase(original, to: backup, backend: backend)
        let path = temporaryDirectory().appendingPathComponent("phone.sqlite").path
        let notes = try await PushPipelineTests.leaveAKeptAnswer(
            at: path, transport: HTTPSyncTransport(server: server.url), token: token)
        server.stop()

        server = try await ServerProcess.start(database: backup.location, port: port)
        defer { server.stop() }
        let phone = try Device(server: server.url, token: token, path: path)
        try await phone.client.sync()
        #expect(phone.client.pendingCount == 0, "one sync is enough")
        #expect(Set(phone.notes.all) == Set(notes))
        let reader = try Device(server: server.url, token: token)
        try await reader.client.sync()
        #expect(Set(reader.notes.all) == Set(notes), "the notes the restored server lost came back")
    }

    /// A server whose database was replaced by a new one (another identity): the client pulls
    /// everything again and pushes back all it has.
    @Test func aReplacedServerDatabaseGetsEveryNoteBack() async throws {
        let firstPath = temporaryDirectory().appendingPathComponent("first.sqlite").path
        let firstToken = try await amberSync(["user", "add", "ann", "--database", firstPath])
        let first = try await ServerProcess.start(database: firstPath)
        let port = first.port
        let path = temporaryDirectory().appendingPathComponent("phone.sqlite").path
        let written = [note("one"), note("two")]
        do {
            let phone = try Device(server: first.url, token: firstToken, path: path)
            try phone.notes.add(contentsOf: written)
            try await phone.client.sync()
        }
        first.stop()

        let secondPath = temporaryDirectory().appendingPathComponent("second.sqlite").path
        let secondToken = try await amberSync(["user", "add", "ann", "--database", secondPath])
        let second = try await ServerProcess.start(database: secondPath, port: port)
        defer { second.stop() }
        let phone = try Device(server: second.url, token: secondToken, path: path)
        try await phone.client.sync()
        #expect(phone.client.pendingCount == 0)
        let reader = try Device(server: second.url, token: secondToken)
        try await reader.client.sync()
        #expect(Set(reader.notes.all) == Set(written))
    }

    /// Thousands of records marked pending that need no push (the same data imported again)
    /// stand before one real change: one sync pushes it. And one sync pushes every pending
    /// record, however many.
    @Test func oneSyncPushesEverythingPending() async throws {
        let server = try await TestServer.start(over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let phone = try Device(server: server, token: token)
        let many = (0..<2_100).map { note("note \($0)") }
        try phone.notes.add(contentsOf: many)
        try await phone.client.sync()
        #expect(phone.client.pendingCount == 0, "2,100 new notes go out in one sync")

        // Everything marked pending again, unchanged; then one change, on the note looked at last.
        try await phone.storage.database.write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO amber_sync_pending (key, id) SELECT key, id FROM amber_records")
        }
        let last = try #require(many.max { $0.id.uuidString < $1.id.uuidString })
        let changed = last.with(text: "the one real change")
        try phone.notes.add(changed)
        try await phone.client.sync()
        #expect(phone.client.pendingCount == 0)

        let reader = try Device(server: server, token: token)
        try await reader.client.sync()
        #expect(reader.notes.count == many.count)
        #expect(reader.notes[id: last.id] == changed)
    }
}

// MARK: Support

/// `amber-sync serve` as a child process on `database`, on a free port or the one given.
private struct ServerProcess {
    let child: Child
    let url: URL
    var port: Int { url.port ?? 0 }

    static func start(database: String, port: Int = 0) async throws -> ServerProcess {
        let child = try Child("amber-sync", ["serve", "--port", "\(port)", "--database", database])
        guard let listening = await child.line(startingWith: "listening on "),
            let url = URL(string: String(listening.dropFirst("listening on ".count)))
        else {
            child.kill()
            throw SyncTestError("amber-sync serve did not start on \(database)")
        }
        return ServerProcess(child: child, url: url)
    }

    /// Stops the server gracefully (SIGTERM) and waits for it to exit.
    func stop() {
        child.process.terminate()
        if !waitForExit(child.process) { child.kill() }
    }
}

/// A new, empty database of `backend`: its location for `--database`, and a way to drop it.
private struct TestLocation {
    let location: String
    let drop: @Sendable () -> Void
}

private func makeDatabase(_ backend: Backend) throws -> TestLocation {
    switch backend {
    case .sqlite:
        let directory = temporaryDirectory()
        return TestLocation(location: directory.appendingPathComponent("sync.sqlite").path) {
            try? FileManager.default.removeItem(at: directory)
        }
    case .postgres:
        let (url, drop) = try PostgresTestServer.makeDatabase()
        return TestLocation(location: url, drop: drop)
    }
}

/// Copies the database at `source` into `target` while a server is using it, as a backup would.
private func copyDatabase(_ source: TestLocation, to target: TestLocation, backend: Backend) async throws {
    switch backend {
    case .sqlite:
        let from = try DatabaseQueue(path: source.location)
        let to = try DatabaseQueue(path: target.location)
        try from.backup(to: to)
        try from.close()
        try to.close()
    case .postgres:
        let binaries = try FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")
            .map { "/usr/lib/postgresql/\($0)/bin" }
        let search =
            (binaries + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init))
        guard let pgDump = search.map({ "\($0)/pg_dump" }).first(where: FileManager.default.isExecutableFile),
            let psql = search.map({ "\($0)/psql" }).first(where: FileManager.default.isExecutableFile)
        else { throw SyncTestError("pg_dump or psql is not installed") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", "\"$0\" --no-owner \"$1\" | \"$2\" -X -q -v ON_ERROR_STOP=1 \"$3\"", pgDump, source.location, psql,
            target.location,
        ]
        let result = try await runToEndOnItsOwnThread(process)
        guard result.status == 0 else { throw SyncTestError("pg_dump into the backup failed: \(result.error)") }
    }
}

/// Runs `amber-sync` to its end and returns the last line it printed.
private func amberSync(_ arguments: [String]) async throws -> String {
    let process = Process()
    process.executableURL = builtExecutable(named: "amber-sync")
    process.arguments = arguments
    let result = try await runToEndOnItsOwnThread(process)
    guard result.status == 0 else {
        throw SyncTestError("amber-sync \(arguments.joined(separator: " ")) failed: \(result.error)")
    }
    return String(result.output.split(separator: "\n").last ?? "")
}

/// Runs `notes` with `NOTES_HOME` set to `home`.
private func notes(_ home: URL, _ arguments: String...) async throws -> ProcessResult {
    let process = Process()
    process.executableURL = builtExecutable(named: "notes")
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(["NOTES_HOME": home.path]) { $1 }
    return try await runToEndOnItsOwnThread(process)
}
