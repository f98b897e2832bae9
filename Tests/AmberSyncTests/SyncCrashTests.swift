import Amber
import AmberLock
import AmberSQLite
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Testing

@testable import AmberSync

/// A child process whose standard output is read line by line as it comes.
final class Child: Sendable {
    let process: Process
    private let lines = LockedValue<[String]>([])

    /// Starts `executable`; with `errorsToo`, what it writes to standard error is read as output.
    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], errorsToo: Bool = false)
        throws
    {
        let process = Process()
        process.executableURL = builtExecutable(named: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errorsToo ? output : FileHandle.nullDevice
        self.process = process
        let lines = self.lines
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            guard !data.isEmpty else {
                handle.readabilityHandler = nil
                return
            }
            let text = String(decoding: data, as: UTF8.self)
            lines.withLock { $0.append(contentsOf: text.split(separator: "\n").map(String.init)) }
        }
        try process.run()
    }

    var output: [String] { lines.withLock { $0 } }

    /// The first line printed that starts with `prefix`, waiting up to `seconds`.
    func line(startingWith prefix: String, within seconds: Double = 20) async -> String? {
        _ = await eventually(within: seconds) { self.output.contains { $0.hasPrefix(prefix) } }
        return output.first { $0.hasPrefix(prefix) }
    }

    /// Sends SIGKILL and waits, at most 10 s, for `Process` to see the exit.
    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        waitForExit(process)
    }
}

/// A phone running the `notes` executable on its own `NOTES_HOME`, syncing with one server.
struct NotesPhone {
    let path: String
    let environment: [String: String]
    let arguments: [String]

    init(server: URL, token: String) {
        let home = temporaryDirectory()
        path = home.appendingPathComponent("notes.sqlite").path
        environment = ["NOTES_HOME": home.path]
        arguments = ["sync", "--server", server.absoluteString, "--token", token]
    }

    /// The phone's client id, once it has one.
    func clientID() throws -> String? {
        try SQLiteStorage(path: path).syncWrite { try SyncSchema.meta($0, "clientID") }
    }

    /// Writes `count` new notes, as the app would before a sync.
    func addNotes(_ count: Int, round: Int) throws {
        let notes = try IdentityStore<NotesAppNote>(key: "notes", storage: SQLiteStorage(path: path))
        let now = Date()
        try notes.add(
            contentsOf: (0..<count).map {
                NotesAppNote(id: UUID(), text: "note \(round)-\($0)", tagIDs: [], created: now, modified: now)
            })
    }

    /// Starts `notes sync`; its progress lines (standard error) are read as output.
    func startSync() throws -> Child {
        try Child("notes", arguments, environment: environment, errorsToo: true)
    }

    /// Runs `notes sync` to its end.
    func sync() async throws -> ProcessResult {
        let process = Process()
        process.executableURL = builtExecutable(named: "notes")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        return try await runToEndOnItsOwnThread(process)
    }

    /// Expects the server to hold `count` notes, each with its own text and one version: none
    /// lost, none applied twice.
    static func expectEachNoteOnce(on server: URL, token: String, count: Int) async throws {
        let storage = try SQLiteStorage(path: temporaryDirectory().appendingPathComponent("reader.sqlite").path)
        let readerNotes = try IdentityStore<NotesAppNote>(key: "notes", storage: storage)
        let reader = try SyncClient(storage: storage, server: server, token: token)
        try reader.add(readerNotes) { _, mine, _ in mine }
        try await reader.sync()
        #expect(readerNotes.count == count)
        #expect(Set(readerNotes.all.map(\.text)).count == count)
        // One version per note: no mutation was applied twice, none sent again as another device's.
        #expect(try storage.syncWrite { try SyncSchema.cursor($0) } == Int64(count))
    }
}

@Suite(.boundedConcurrency, .serialized) struct SyncCrashTests {
    /// `notes sync --watch` is SIGKILLed at random moments while notes are added; afterwards every
    /// note whose `add` returned is on the server exactly once.
    @Test func aClientKilledDuringSyncLosesNothingAndAppliesNothingTwice() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let home = temporaryDirectory().path
        let environment = ["NOTES_HOME": home]
        func notes(_ arguments: String...) throws -> ProcessResult {
            let process = Process()
            process.executableURL = builtExecutable(named: "notes")
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            return try runToEnd(process)
        }
        #expect(try notes("sync", "--server", server.url.absoluteString, "--token", token).status == 0)

        var random = SeededGenerator(seed: 7)
        var acknowledged: [String] = []
        for round in 0..<20 {
            let watcher = try Child("notes", ["sync", "--watch"], environment: environment)
            for index in 0..<3 {
                let text = "note \(round)-\(index)"
                if try notes("add", text).status == 0 { acknowledged.append(text) }
            }
            try await Task.sleep(nanoseconds: UInt64.random(in: 0...200_000_000, using: &random))
            watcher.kill()
        }
        // Once more, not killed: everything pending goes out.
        let final = try notes("sync")
        #expect(final.status == 0, "\(final.error)")

        // Read back with the notes app's own model.
        let storage = try SQLiteStorage(path: temporaryDirectory().appendingPathComponent("reader.sqlite").path)
        let readerNotes = try IdentityStore<NotesAppNote>(key: "notes", storage: storage)
        let reader = try SyncClient(storage: storage, server: server.url, token: token)
        try reader.add(readerNotes) { _, mine, _ in mine }
        try await reader.sync()
        let texts = readerNotes.all.map(\.text)
        #expect(texts.count == acknowledged.count, "each acknowledged note once")
        #expect(Set(texts) == Set(acknowledged))
    }

    /// `notes sync` pushing 9,000 new notes (five batches, each sent while the answer to the
    /// one before is applied) is SIGKILLed at a random moment, six times; afterwards every note
    /// is on the server, each applied once, and the phone kept its client id: an answer the
    /// server had forgotten was applied from the file, not taken for another device's.
    @Test func aClientKilledDuringAPushOfSeveralBatchesAppliesEachRecordOnce() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let phone = NotesPhone(server: server.url, token: token)
        var random = SeededGenerator(seed: 11)
        var firstClientID: String?
        let rounds = 6
        let perRound = 9_000
        for round in 0..<rounds {
            try phone.addNotes(perRound, round: round)
            // Killed once the first batch's answer is applied (its progress line), within the
            // next batches: each goes out while the answer before it is being applied.
            let sync = try phone.startSync()
            #expect(await sync.line(startingWith: "pushed", within: 60) != nil)
            try await Task.sleep(nanoseconds: UInt64.random(in: 0...150_000_000, using: &random))
            sync.kill()
            if firstClientID == nil { firstClientID = try phone.clientID() }
        }
        let result = try await phone.sync()
        #expect(result.status == 0, "\(result.error)")
        #expect(try phone.clientID() == firstClientID, "the phone was never taken for a copy of itself")
        try await NotesPhone.expectEachNoteOnce(on: server.url, token: token, count: rounds * perRound)
    }

    /// The `amber-sync` server, on SQLite or on PostgreSQL, is SIGKILLed while `notes sync`
    /// pushes 9,000 new notes in five batches (each sent while the answer to the one before is
    /// applied), and started again on its database; four times. The server dies with a batch in
    /// flight, answered or not, committed or not. Afterwards every note is on the server, each
    /// applied once, and the phone kept its client id.
    @Test(arguments: Backend.allCases)
    func aServerKilledDuringAPushOfSeveralBatchesLosesNothingAndAppliesNothingTwice(backend: Backend)
        async throws
    {
        try await backend.withDatabase { test in
            let database = try #require(test.location)
            let token = try runAmberSync(["user", "add", "ann", "--database", database])
            let (first, url) = try await serve(database)
            var server = first
            let port = try #require(url.port)
            let phone = NotesPhone(server: url, token: token)
            var random = SeededGenerator(seed: 12)
            var firstClientID: String?
            let rounds = 4
            let perRound = 9_000
            for round in 0..<rounds {
                try phone.addNotes(perRound, round: round)
                let sync = try phone.startSync()
                #expect(await sync.line(startingWith: "pushed", within: 60) != nil)
                try await Task.sleep(nanoseconds: UInt64.random(in: 0...150_000_000, using: &random))
                server.kill()
                // The phone finds the server gone, and stops.
                #expect(waitForExit(sync.process, within: 60))
                if firstClientID == nil { firstClientID = try phone.clientID() }
                (server, _) = try await serve(database, port: port)
            }
            let result = try await phone.sync()
            #expect(result.status == 0, "\(result.error)")
            #expect(try phone.clientID() == firstClientID, "the phone was never taken for a copy of itself")
            try await NotesPhone.expectEachNoteOnce(on: url, token: token, count: rounds * perRound)
            server.kill()
        }
    }

    /// The `amber-sync` server, on SQLite or on PostgreSQL, is SIGKILLed 20 times while a client
    /// pushes; afterwards every acknowledged local write is on the server exactly once and the
    /// clients converge.
    @Test(arguments: Backend.allCases)
    func aServerKilledDuringPushesLosesNothingAndAppliesNothingTwice(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let database = try #require(test.location)
            let token = try runAmberSync(["user", "add", "ann", "--database", database])
            let (first, url) = try await serve(database)
            var server = first
            let port = try #require(url.port)

            let device = try Device(server: url, token: token)
            let written = LockedValue<[Note]>([])
            let writer = Task {
                var index = 0
                while !Task.isCancelled {
                    let value = note("write \(index)")
                    index += 1
                    // Acknowledged once `add` returns; the sync may fail while the server is down.
                    if (try? device.notes.add(value)) != nil { written.withLock { $0.append(value) } }
                    if index % 3 == 0 { _ = try? device.notes.update(id: value.id) { $0.with(pinned: true) } }
                    _ = try? await device.client.sync()
                }
            }
            var random = SeededGenerator(seed: 11)
            for _ in 0..<20 {
                try await Task.sleep(nanoseconds: UInt64.random(in: 50_000_000...300_000_000, using: &random))
                server.kill()
                (server, _) = try await serve(database, port: port)
            }
            writer.cancel()
            _ = await writer.value
            try await device.client.sync()
            let reader = try Device(server: url, token: token)
            try await reader.client.sync()
            server.kill()

            #expect(device.client.pendingCount == 0)
            let expected = Set(device.notes.all)
            #expect(expected.count == written.withLock { $0.count })
            #expect(Set(reader.notes.all) == expected)
            #expect(reader.notes.count == expected.count, "each write once")
        }
    }

    /// Starts `amber-sync serve` on `database` (on `port`, or a free one) and waits until it
    /// listens: the process and its address.
    private func serve(_ database: String, port: Int = 0) async throws -> (Child, URL) {
        let server = try Child("amber-sync", ["serve", "--port", "\(port)", "--database", database])
        let listening = try #require(await server.line(startingWith: "listening on "), "the server starts")
        return (server, try #require(URL(string: String(listening.dropFirst("listening on ".count)))))
    }

    /// Runs `amber-sync` to its end and returns the last line it printed.
    private func runAmberSync(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = builtExecutable(named: "amber-sync")
        process.arguments = arguments
        let result = try runToEnd(process)
        guard result.status == 0, let last = result.output.split(separator: "\n").last else {
            throw SyncTestError("amber-sync \(arguments.joined(separator: " ")) failed: \(result.error)")
        }
        return String(last)
    }
}
