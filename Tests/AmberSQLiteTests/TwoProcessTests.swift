import Amber
import AmberSQLite
import AmberTestSupport
import Foundation
import GRDB
import Testing

/// Runs the writer process to its end.
func runWriter(_ arguments: [String]) async throws -> ProcessResult {
    let process = Process()
    process.executableURL = try writerExecutable()
    process.arguments = arguments
    return try runToEnd(process)
}

@Suite(.boundedConcurrency) struct TwoProcessTests {
    /// Two processes and this one increment one record at once: every increment counts.
    @Test(arguments: ["sqlite", "files"])
    func incrementsFromTwoProcessesAndThisOneAllCount(_ kind: String) async throws {
        let directory = temporaryDirectory()
        let location =
            kind == "sqlite" ? directory.appendingPathComponent("store.sqlite").path : "files:\(directory.path)"
        let storage: any StoreStorage =
            kind == "sqlite"
            ? try SQLiteStorage(path: location) : FileStorage(directory: directory)
        let store = try IdentityStore<Entry>(key: "entries", storage: storage)
        try store.add(Entry(id: "counter", index: 0, payload: ""))
        let rounds = 300
        // Both processes are started before this one writes, so the three overlap.
        let writers = try (0..<2).map { _ in
            let process = Process()
            process.executableURL = try writerExecutable()
            process.arguments = [location, "entries", "increment", "counter", "\(rounds)"]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            return (process, output)
        }
        // Once each has acknowledged a first increment, they are writing.
        for (_, output) in writers { _ = output.fileHandleForReading.availableData }
        for _ in 0..<rounds { try store.update(id: "counter") { Entry(id: $0.id, index: $0.index + 1, payload: "") } }
        for (process, output) in writers {
            _ = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
        let reopened = try IdentityStore<Entry>(
            key: "entries",
            storage: kind == "sqlite" ? try SQLiteStorage(path: location) : FileStorage(directory: directory))
        #expect(reopened[id: "counter"]?.index == 3 * rounds, "no increment was computed from a replaced value")
        #expect(await eventually(within: 3) { store[id: "counter"]?.index == 3 * rounds })
    }

    @Test func userDefaultsWritesOfAProcessThatEndedAreOnDisk() async throws {
        let suite = "amber-two-process-\(UUID().uuidString)"
        let writer = try await runWriter(["defaults:\(suite)", "entries", "3"])
        #expect(writer.status == 0, "\(writer.error)")
        let store = try IdentityStore<Entry>(key: "entries", storage: UserDefaultsStorage(suiteName: suite))
        #expect(store.ids == ["w-0", "w-1", "w-2"], "every acknowledged write reached the disk")
    }

    @Test func userDefaultsRefusesASecondProcess() async throws {
        let suite = "amber-two-process-\(UUID().uuidString)"
        let store = try IdentityStore<Entry>(key: "entries", storage: UserDefaultsStorage(suiteName: suite))
        try store.add(Entry(id: "mine", index: 0, payload: ""))
        let refused = try await runWriter(["defaults:\(suite)", "entries", "1"])
        #expect(refused.status == 1)
        #expect(refused.error.contains("in use by another process"), "\(refused.error)")
        #expect(store.ids == ["mine"])
        #expect(
            try IdentityStore<Entry>(key: "entries", storage: UserDefaultsStorage(suiteName: suite)).ids == ["mine"],
            "this process may open it again")
    }
}

@Suite(.boundedConcurrency) struct SQLiteRecordIDTests {
    /// A store of values whose identity is a `UUID`.
    struct Item: Identifiable, Codable, Sendable, Equatable {
        let id: UUID
        let name: String
    }

    private func insertRaw(_ path: String, key: String, id: String, json: String) throws {
        try DatabaseQueue(path: path).write { db in
            let position = (try Int.fetchOne(db, sql: "SELECT MAX(position) FROM amber_records") ?? 0) + 1
            try db.execute(
                sql: "INSERT INTO amber_records (key, id, position, sequence, value) VALUES (?, ?, ?, 1, ?)",
                arguments: [key, id, position, json])
        }
    }

    private func rows(_ path: String) throws -> [String] {
        try DatabaseQueue(path: path).read {
            try String.fetchAll($0, sql: "SELECT id FROM amber_records ORDER BY position")
        }
    }

    @Test func aLowerCaseUUIDWrittenByAnotherToolIsUpdatedAndRemovedInPlace() throws {
        let path = temporaryDatabasePath()
        _ = try IdentityStore<Item>(key: "items", storage: SQLiteStorage(path: path))
        let uuid = UUID()
        let lower = uuid.uuidString.lowercased()
        try insertRaw(path, key: "items", id: lower, json: #"{"id":"\#(lower)","name":"from a script"}"#)
        let store = try IdentityStore<Item>(key: "items", storage: SQLiteStorage(path: path))
        #expect(store[id: uuid]?.name == "from a script")
        try store.add(Item(id: uuid, name: "renamed"))
        #expect(try rows(path) == [lower], "updated in its own row, not a second one")
        let reopened = try IdentityStore<Item>(key: "items", storage: SQLiteStorage(path: path))
        #expect(reopened[id: uuid]?.name == "renamed")
        try reopened.remove(id: uuid)
        #expect(try rows(path).isEmpty, "the removal deleted the row")
    }

    @Test func twoRecordsOfOneIdentityListTheSecondAsUndecodableAndRecoverWithoutCrashing() throws {
        let path = temporaryDatabasePath()
        _ = try IdentityStore<Item>(key: "items", storage: SQLiteStorage(path: path))
        let uuid = UUID()
        try insertRaw(path, key: "items", id: uuid.uuidString.lowercased(), json: #"{"id":"\#(uuid)","name":"one"}"#)
        try insertRaw(path, key: "items", id: uuid.uuidString, json: #"{"id":"\#(uuid)","name":"two"}"#)
        let store = try IdentityStore<Item>(key: "items", storage: SQLiteStorage(path: path))
        #expect(store.count == 1)
        #expect(store[id: uuid]?.name == "one")
        let duplicate = try #require(store.undecodable.first)
        #expect(duplicate.id == uuid.uuidString)
        #expect(duplicate.reason.contains("already holds"), "\(duplicate.reason)")
        try store.recover { record in try JSONDecoder().decode(Item.self, from: record.data) }
        #expect(store[id: uuid]?.name == "two", "the recovered value replaced the one held")
        #expect(store.undecodable.isEmpty)
        #expect(try rows(path) == [uuid.uuidString.lowercased()], "one row is left for the identity")
        let reopened = try IdentityStore<Item>(key: "items", storage: SQLiteStorage(path: path))
        #expect(reopened.all == store.all)
        #expect(reopened.undecodable.isEmpty)
    }

    @Test func recoverRunsAsOneWriteWithNothingBetween() async throws {
        let path = temporaryDatabasePath()
        _ = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        try insertRaw(path, key: "entries", id: "old", json: #"{"id":"old","fullName":"X"}"#)
        let store = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        #expect(store.undecodable.map(\.id) == ["old"])
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        try store.recover { record in
            // Another write of the same identity, started on another thread while the transform
            // runs, must wait for it.
            DispatchQueue.global().async {
                started.signal()
                _ = try? store.add(Entry(id: "old", index: 2, payload: "later"))
                finished.signal()
            }
            started.wait()
            Thread.sleep(forTimeInterval: 0.2)
            return Entry(id: record.id, index: 1, payload: "recovered")
        }
        finished.wait()
        #expect(store[id: "old"]?.payload == "later", "the later write is not overwritten by the recovery")
        #expect(store.undecodable.isEmpty)
        let reopened = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        #expect(reopened.all == store.all)
        #expect(reopened.undecodable.isEmpty)
    }
}

@Suite(.boundedConcurrency) struct SQLiteDeletionTests {
    @Test func deletionRowsArePrunedAndAStoreBehindTheHorizonReloads() throws {
        let path = temporaryDatabasePath()
        let storage = try SQLiteStorage(path: path)
        let store = try IdentityStore<Entry>(key: "entries", storage: storage)
        // A reader of the key that does not watch: it falls behind on purpose.
        let behind = try SQLiteStorage(path: path).open(key: "entries")
        _ = try behind.load()
        try store.add(Entry(id: "kept", index: 0, payload: ""))
        for index in 0..<1_500 {
            try store.add(Entry(id: "gone-\(index)", index: index, payload: ""))
            try store.remove(id: "gone-\(index)")
        }
        let deletionRows = try DatabaseQueue(path: path).read {
            try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM amber_deletions") ?? 0
        }
        // Pruned every 256 writes down to the last 1,024: at most 1,280 writes, half of them deletions.
        #expect(deletionRows <= 640, "1,500 ids added and deleted leave \(deletionRows) deletion rows")
        guard case .snapshot(let records)? = try behind.externalChanges() else {
            Issue.record("a reader behind the horizon gets the whole key")
            return
        }
        #expect(records.map(\.id) == ["kept"])
    }

    @Test func aMainActorWriteWaitsOnlyBrieflyForAnotherProcess() async throws {
        let path = temporaryDatabasePath()
        let store = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true  // holds SQLite's write lock across accesses
        let blocker = try DatabaseQueue(path: path, configuration: configuration)
        try await blocker.writeWithoutTransaction { try $0.execute(sql: "BEGIN IMMEDIATE") }
        // Timed on the main actor, around the write only: reaching the main actor may itself wait
        // for other tests' main-actor work on a loaded machine.
        let (error, waited) = await MainActor.run {
            let started = Date()
            let error = #expect(throws: StoreError.self) { try store.add(Entry(id: "a", index: 0, payload: "")) }
            return (error, Date().timeIntervalSince(started))
        }
        try await blocker.writeWithoutTransaction { try $0.execute(sql: "ROLLBACK") }
        #expect(error?.description.contains("locked") == true, "\(String(describing: error))")
        #expect(
            (error?.underlyingError as? DatabaseError)?.resultCode == .SQLITE_BUSY,
            "the cause keeps SQLite's result code")
        #expect(waited < 5, "waited \(waited) s on the main actor")
        #expect(store.count == 0)
        try store.add(Entry(id: "a", index: 0, payload: ""))
        #expect(store.count == 1)
    }
}
