import Amber
import AmberSQLite
import AmberSync
import Foundation
import GRDB
import HeapStatistics

/// The app's model on the client: the fields of ``WireValue``.
@Immutable
struct BenchNote: Identifiable, Codable, Hashable, Sendable {
    let id: String
    let text: String
    let tags: [String]
    let created: Double
    let modified: Double
}

/// A device: a `SyncClient` with one store on its own SQLite file.
final class Device: Sendable {
    let storage: SQLiteStorage
    let notes: IdentityStore<BenchNote>
    let client: SyncClient

    init(path: String, server: String, token: String) throws {
        storage = try SQLiteStorage(path: path)
        notes = try IdentityStore(key: "notes", storage: storage)
        client = try SyncClient(storage: storage, server: URL(string: server)!, token: token)
        try client.add(notes)
    }
}

/// 100,000 records on the server into an empty client, against reading the same rows from the
/// server's database and writing the same JSON into a new SQLite file, both raw.
enum InitialSync {
    /// The size whose time per record larger syncs are compared against (`initial-sync-scaling`),
    /// and the only one with a time target of its own (under 5 s).
    static let referenceRecords = 100_000

    static func run(backend: Backend, records: Int) async throws {
        let location = try await backend.newDatabase()
        let token = try await Backend.addUsers(["ann"], at: location)[0]
        let server = try await ServerProcess.start(database: location)
        defer { server.stop() }

        let bytes = try await seed(records, to: server.url, token: token)

        // Baseline first: it also brings the server's file into the page cache for both.
        let selectSeconds = try await RawDatabase.selectAll(backend: backend, location: location, user: "ann")
        let rows = selectSeconds.rows
        let insertPath = backend.scratchPath("baseline.sqlite")
        let insertSeconds = try RawDatabase.insertJSON(rows, path: insertPath)
        let baseline = selectSeconds.seconds + insertSeconds

        let heapBefore = heap_bytes_in_use()
        let memoryBefore = Memory.resetPeak()
        let device = try Device(path: backend.scratchPath("client.sqlite"), server: server.url, token: token)
        let serverMemoryBefore = Memory.resetPeak(of: server.pid)
        let cpuBefore = (client: Memory.cpuSeconds(), server: Memory.cpuSeconds(of: server.pid))
        let start = ContinuousClock.now
        let syncReport = try await device.client.sync()
        let ours = seconds(since: start)
        let serverGrowth = Double(Memory.peak(of: server.pid) - serverMemoryBefore) / 1_048_576
        let cpu = (
            client: Memory.cpuSeconds() - cpuBefore.client, server: Memory.cpuSeconds(of: server.pid) - cpuBefore.server
        )
        let peak = Memory.peak() - memoryBefore
        let storeValues = heap_bytes_in_use() - heapBefore
        guard device.notes.count == records, syncReport.pulled == records else {
            throw BenchmarkError(
                "the client has \(device.notes.count) records after pulling \(syncReport.pulled), not \(records)")
        }
        report(
            "sync \(backend.kind.rawValue) initial-sync: \(records) records (\(bytes / records) B of JSON each) into an empty "
                + "SyncClient in \(format(ours)) s (\(format(ours / Double(records) * 1e6, 1)) µs a record); baseline raw SELECT "
                + "\(format(selectSeconds.seconds)) s + raw GRDB insert \(format(insertSeconds)) s = \(format(baseline)) s; "
                + "ratio \(format(ours / baseline)) (target ≤ 3\(records <= referenceRecords ? ", and < 5 s" : "")); CPU: client \(format(cpu.client)) s, server "
                + "\(format(cpu.server)) s"
        )
        report(
            "sync \(backend.kind.rawValue) initial-sync-memory: \(records) records; the client's resident memory grew at most "
                + "\(megabytes(peak)) MB during the sync; the heap the synced client holds after it (the store's values) "
                + "\(megabytes(storeValues)) MB; ratio \(format(Double(peak) / Double(max(storeValues, 1)))) (target ≤ 2); "
                + "the server's grew at most \(format(serverGrowth, 1)) MB (target < 32 MB)"
        )
        try benchmarkRun.record(
            "initial-sync", backend: backend,
            description: "\(records) records of \(bytes / records) B of JSON pulled into an empty SyncClient, against "
                + "a raw SELECT of the same rows plus a raw GRDB insert of their JSON in one transaction",
            ours: ours, baseline: baseline, unit: "s", targetRatio: 3,
            targetOurs: records <= referenceRecords ? 5 : nil,
            details: [
                "records": Double(records), "µs_a_record": ours / Double(records) * 1e6,
                "baseline_select_s": selectSeconds.seconds, "baseline_insert_s": insertSeconds,
                "client_cpu_s": cpu.client, "server_cpu_s": cpu.server,
            ])
        try benchmarkRun.record(
            "initial-sync-memory", backend: backend,
            description: "growth of the client's resident memory during that initial sync, against the heap the "
                + "synced client holds after it (its store's values)",
            ours: Double(peak) / 1_048_576, baseline: Double(storeValues) / 1_048_576, unit: "MB", targetRatio: 2,
            details: ["records": Double(records)])
        // Pages stream through the server: what it holds must not grow with the account.
        try benchmarkRun.record(
            "initial-sync-server-memory", backend: backend,
            description: "growth of the server's resident memory during that initial sync, over its resident "
                + "memory before",
            ours: serverGrowth, baseline: nil, unit: "MB", target: "< 32 MB", met: serverGrowth < 32,
            details: ["records": Double(records)])
        if records > referenceRecords {
            let perRecord = ours / Double(records) * 1e6
            let reference = try referenceMicroseconds(backend: backend.kind)
            report(
                "sync \(backend.kind.rawValue) initial-sync-scaling: \(format(perRecord, 1)) µs a record at \(records) "
                    + "records against \(format(reference, 1)) µs at \(referenceRecords) (its own process, this run); "
                    + "ratio \(format(perRecord / reference)) (target ≤ 1.3)")
            try benchmarkRun.record(
                "initial-sync-scaling", backend: backend,
                description: "time per record of that initial sync of \(records) records, against the same sync of "
                    + "\(referenceRecords) records run after it in a process of its own",
                ours: perRecord, baseline: reference, unit: "µs", targetRatio: 1.3,
                details: ["records": Double(records), "reference_records": Double(referenceRecords)])
        }
    }

    /// Runs the initial sync of ``referenceRecords`` in a process of its own and returns its time
    /// per record, in µs.
    private static func referenceMicroseconds(backend: BackendKind) throws -> Double {
        let results = FileManager.default.temporaryDirectory.appendingPathComponent(
            "amber-initial-sync-reference-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: results) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        process.arguments = [
            "initial-sync", "--backend", backend.rawValue, "--records", String(referenceRecords), "--results",
            results.path,
        ]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchmarkError("the reference initial sync exited with status \(process.terminationStatus)")
        }
        for line in try String(contentsOf: results, encoding: .utf8).split(separator: "\n") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["figure"] as? String == "initial-sync",
                let microseconds = (object["details"] as? [String: Any])?["µs_a_record"] as? Double
            else { continue }
            return microseconds
        }
        throw BenchmarkError("the reference initial sync wrote no time per record to \(results.path)")
    }
}

extension InitialSync {
    /// Runs the figure for `backend` in a new process of this executable (`sync initial-sync
    /// --backend KIND`), which prints its lines and appends its figures to the same results file.
    static func runInOwnProcess(backend: BackendKind, records: Int) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        process.arguments =
            ["initial-sync", "--backend", backend.rawValue, "--records", String(records)]
            + (benchmarkRun.resultsPath.map { ["--results", $0] } ?? [])
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchmarkError("the initial sync's own process exited with status \(process.terminationStatus)")
        }
    }
}

/// A process's memory (this one's unless a pid is given), from `/proc` (Linux).
enum Memory {
    /// Starts a new peak: the high-water mark of resident memory falls to what is resident now.
    ///
    /// - Returns: The resident memory now, in bytes.
    static func resetPeak(of pid: Int32? = nil) -> Int {
        // Writing 5 to clear_refs resets VmHWM (Linux 4.0 and later).
        try? "5".write(toFile: "/proc/\(directory(pid))/clear_refs", atomically: false, encoding: .utf8)
        return field("VmRSS:", of: pid)
    }

    /// The high-water mark of resident memory since the last ``resetPeak(of:)``, in bytes.
    static func peak(of pid: Int32? = nil) -> Int {
        field("VmHWM:", of: pid)
    }

    /// CPU seconds (user and system) this process has used, from `getrusage`.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// CPU seconds (user and system) process `pid` has used, from `/proc/PID/stat` (Linux).
    static func cpuSeconds(of pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return 0 }
        // After the command's closing parenthesis: state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    private static func directory(_ pid: Int32?) -> String {
        pid.map { String($0) } ?? "self"
    }

    private static func field(_ name: String, of pid: Int32?) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(directory(pid))/status", encoding: .utf8) else {
            return 0
        }
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 2, let kilobytes = Int(fields[1]) { return kilobytes * 1024 }
        }
        return 0
    }
}

func megabytes(_ bytes: Int) -> String {
    format(Double(bytes) / 1_048_576, 1)
}

/// Pushes `records` new records for the user of `token`, in pushes of 1,000.
///
/// - Returns: The bytes of JSON of their values.
func seed(_ records: Int, to server: String, token: String) async throws -> Int {
    var bytes = 0
    let encoder = JSONEncoder()
    for first in stride(from: 0, to: records, by: 1_000) {
        let mutations = (first..<min(first + 1_000, records)).map { index in
            WireMutation.create(Int64(index + 1), id: UUID().uuidString, index: index)
        }
        for mutation in mutations { bytes += try encoder.encode(mutation.value).count }
        _ = try await LoadClient.push(server, token: token, clientID: "seed", mutations: mutations)
    }
    return bytes
}

/// The baselines written by hand: the same rows read and written with the database's own API.
enum RawDatabase {
    /// Reads every record of `user`, as the server's pull does, in one query.
    static func selectAll(backend: Backend, location: String, user: String) async throws -> (
        seconds: Double, rows: [(String, String, String)]
    ) {
        switch backend.kind {
        case .sqlite:
            var configuration = Configuration()
            configuration.readonly = true
            let queue = try DatabaseQueue(path: location, configuration: configuration)
            defer { try? queue.close() }
            let start = ContinuousClock.now
            let rows = try await queue.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT r.collection, r.id, r.version, r.value FROM amber_sync_records r
                        JOIN amber_sync_users u ON u.id = r.user_id
                        WHERE u.name = ? AND r.version > 0 ORDER BY r.version
                        """,
                    arguments: [user]
                ).map { row in (row[0] as String, row[1] as String, row[3] as String) }
            }
            return (seconds(since: start), rows)
        case .postgres:
            return try await RawPostgres.selectAll(location, user: user)
        }
    }

    /// Writes `(collection, id, json)` rows into a new SQLite file in one transaction.
    static func insertJSON(_ rows: [(String, String, String)], path: String) throws -> Double {
        let pool = try DatabasePool(path: path)
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE records (key TEXT NOT NULL, id TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (key, id)) WITHOUT ROWID"
            )
        }
        let start = ContinuousClock.now
        try pool.write { db in
            let insert = try db.cachedStatement(sql: "INSERT INTO records (key, id, value) VALUES (?, ?, ?)")
            for row in rows {
                try insert.execute(arguments: [row.0, row.1, row.2])
            }
        }
        return seconds(since: start)
    }
}
