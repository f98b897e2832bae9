import AmberSyncPostgres
import AmberSyncProtocol
import AmberSyncServer
import Foundation
import GRDB
import Logging

/// A database backend of the server, and the fresh databases the figures run on.
enum BackendKind: String {
    case sqlite, postgres
}

final class Backend: @unchecked Sendable {
    // @unchecked: `count` is only touched from the one task that runs the figures.
    let kind: BackendKind
    /// Where this run's SQLite files (and PostgreSQL cluster) live; removed by ``tearDown()``.
    let scratch: URL
    private var count = 0
    /// The throwaway PostgreSQL cluster: its folder and the URL of its `postgres` database.
    private(set) var cluster: (directory: URL, url: String)?

    init(kind: BackendKind) throws {
        self.kind = kind
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("amber-sync-load-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    /// A PostgreSQL backend on a throwaway cluster (`scripts/postgres-cluster`), stopped by
    /// ``tearDown()`` or, should this process die, once it is gone.
    static func postgres() async throws -> Backend {
        let backend = try Backend(kind: .postgres)
        let directory = backend.scratch.appendingPathComponent("cluster")
        let output = try run(
            repositoryDirectory.appendingPathComponent("scripts/postgres-cluster"),
            ["start", directory.path, "--stop-with", String(getpid())])
        guard let url = output.split(separator: "\n").last.map(String.init), url.hasPrefix("postgres://") else {
            backend.tearDown()
            throw BenchmarkError("scripts/postgres-cluster printed no URL: \(output)")
        }
        backend.cluster = (directory, url)
        return backend
    }

    /// The location of a new, empty database: a file path, or a `postgres://` URL.
    func newDatabase() async throws -> String {
        count += 1
        switch kind {
        case .sqlite:
            return scratch.appendingPathComponent("server-\(count).sqlite").path
        case .postgres:
            guard let cluster else { throw BenchmarkError("no PostgreSQL cluster") }
            let name = "load_\(count)"
            _ = try Self.run(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["psql", "-X", "-q", cluster.url, "-c", "CREATE DATABASE \(name)"])
            return cluster.url.replacingOccurrences(of: "/postgres", with: "/\(name)", options: .backwards)
        }
    }

    /// Opens the database at `location` in this process (to add users, or to serve).
    /// Adds users named `names` to the database at `location` and returns their tokens.
    ///
    /// The database is closed again: kept open in this process, a SQLite database would watch
    /// the file for the server's commits, waking this process (the client's) on every write
    /// the server makes while it is measured.
    static func addUsers(_ names: [String], at location: String) async throws -> [String] {
        let database = try await open(location)
        var tokens: [String] = []
        for name in names { tokens.append(try await database.addUser(named: name)) }
        if let postgres = database as? PostgresSyncDatabase { await postgres.close() }
        return tokens
    }

    static func open(_ location: String) async throws -> any SyncDatabase {
        if location.hasPrefix("postgres://") {
            var logger = Logger(label: "amber-sync")
            logger.logLevel = .critical
            return try await PostgresSyncDatabase(url: location, logger: logger)
        }
        return try SQLiteSyncDatabase(path: location)
    }

    /// Runs a command and returns its standard output; fails unless it exits 0.
    @discardableResult
    static func run(_ executable: URL, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0 else {
            throw BenchmarkError(
                "\(executable.lastPathComponent) \(arguments.joined(separator: " ")) failed with status \(process.terminationStatus)"
            )
        }
        return text
    }

    /// The repository, found from this file.
    static let repositoryDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A scratch file path for a client or a baseline.
    func scratchPath(_ name: String) -> String {
        count += 1
        return scratch.appendingPathComponent("\(count)-\(name)").path
    }

    func tearDown() {
        if let cluster {
            _ = try? Self.run(
                Self.repositoryDirectory.appendingPathComponent("scripts/postgres-cluster"),
                ["stop", cluster.directory.path])
        }
        try? FileManager.default.removeItem(at: scratch)
    }
}

/// `sync serve`: the server process of the figures, on the `AmberSyncServer` library.
enum ServeMode {
    static func run(_ arguments: [String]) async {
        var database: String?
        var port = 0
        var storesPushes = true
        var arguments = arguments[...]
        while let argument = arguments.popFirst() {
            switch argument {
            case "--database": database = arguments.popFirst()
            case "--port": port = arguments.popFirst().flatMap(Int.init) ?? 0
            case "--unstored-pushes": storesPushes = false
            default:
                report("sync serve: unknown argument \(argument)", toStandardError: true)
                exit(2)
            }
        }
        guard let database else {
            report("sync serve: --database is required", toStandardError: true)
            exit(2)
        }
        do {
            var logger = Logger(label: "amber-sync")
            logger.logLevel = .critical
            // The fan-out figure holds 1,000 pulls of one user: more than a server allows one user by default.
            var limits = SyncServerLimits()
            limits.maximumWaitingPullsPerUser = 2_000
            let opened = try await Backend.open(database)
            let server = SyncServer(
                database: storesPushes ? opened : UnstoredPushes(opened), port: port, logger: logger, limits: limits)
            try await server.run { port in report("listening on http://127.0.0.1:\(port)") }
        } catch {
            report("sync serve: \(error)", toStandardError: true)
            exit(1)
        }
    }
}

/// A server process: this executable in `serve` mode.
final class ServerProcess: @unchecked Sendable {
    // @unchecked: `process` is only started and waited for by the task that owns this value.
    let process: Process
    let port: Int

    var url: String { "http://127.0.0.1:\(port)" }
    var pid: Int32 { process.processIdentifier }

    private init(process: Process, port: Int) {
        self.process = process
        self.port = port
    }

    /// Starts a server on `database` and returns once it listens; with `storingPushes` false, one
    /// that answers pushes without storing them (``UnstoredPushes``).
    static func start(database: String, port: Int = 0, storingPushes: Bool = true) async throws -> ServerProcess {
        let process = Process()
        process.executableURL = ownExecutable
        process.arguments =
            ["serve", "--database", database, "--port", String(port)] + (storingPushes ? [] : ["--unstored-pushes"])
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = await Task.detached { () -> String in
            var bytes: [UInt8] = []
            while true {
                let data = output.fileHandleForReading.readData(ofLength: 1)
                guard let byte = data.first, byte != UInt8(ascii: "\n") else { break }
                bytes.append(byte)
            }
            return String(decoding: bytes, as: UTF8.self)
        }.value
        guard let portText = line.split(separator: ":").last, let listening = Int(portText) else {
            process.waitUntilExit()
            throw BenchmarkError(
                "the server process did not start: \(line.isEmpty ? "exit \(process.terminationStatus)" : line)")
        }
        return ServerProcess(process: process, port: listening)
    }

    /// Starts a server on a given port, retrying while the port of a killed server is still taken.
    static func restart(database: String, port: Int) async throws -> ServerProcess {
        var lastError: (any Error)?
        for _ in 0..<50 {
            do {
                return try await start(database: database, port: port)
            } catch {
                lastError = error
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        throw lastError ?? BenchmarkError("the server did not restart")
    }

    /// The process's resident memory (`VmRSS`), in bytes.
    func residentMemory() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 2, let kilobytes = Int(fields[1]) { return kilobytes * 1024 }
        }
        return nil
    }

    /// SIGKILL, and waits for the process to be gone.
    func kill() {
        Foundation.kill(pid, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM (a graceful shutdown), and waits.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// This executable, to start again in `serve` mode.
    static let ownExecutable: URL = {
        #if os(Linux)
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        #else
            URL(fileURLWithPath: CommandLine.arguments[0])
        #endif
    }()
}

/// Adds `name` to the database at `location` and returns its token.
func addUser(_ name: String, to database: any SyncDatabase) async throws -> String {
    try await database.addUser(named: name)
}

/// A database that answers every push as applied, at the next version of a counter of its own,
/// without reading, checking or storing anything: what the server's HTTP, authentication and
/// JSON cost without a database, for the push figures' floor. Everything else goes to `database`.
struct UnstoredPushes: SyncDatabase {
    let database: any SyncDatabase
    private let versions = Counter()

    init(_ database: any SyncDatabase) {
        self.database = database
    }

    var changeNotifier: ChangeNotifier { database.changeNotifier }
    func migrate() async throws { try await database.migrate() }
    func addUser(named name: String) async throws -> String { try await database.addUser(named: name) }
    func addToken(forUserNamed name: String) async throws -> String {
        try await database.addToken(forUserNamed: name)
    }
    func revokeToken(_ token: String) async throws -> Bool { try await database.revokeToken(token) }
    func user(forToken token: String) async throws -> SyncUser? { try await database.user(forToken: token) }
    func user(forSubject subject: String, issuer: String) async throws -> SyncUser {
        try await database.user(forSubject: subject, issuer: issuer)
    }
    func rememberedUser(forToken token: String) -> SyncUser? { database.rememberedUser(forToken: token) }

    func push(_ mutations: [Mutation], clientID: String, for user: SyncUser) async throws -> [MutationResult] {
        let last = versions.add(Int64(mutations.count))
        return mutations.enumerated().map { index, mutation in
            MutationResult(
                mutationID: mutation.mutationID, status: .applied, version: last - Int64(mutations.count - 1 - index))
        }
    }

    func push(_ mutations: [Mutation], clientID: String, for user: SyncUser, checkingToken token: String) async throws
        -> [MutationResult]
    {
        try await push(mutations, clientID: clientID, for: user)
    }

    func pull(for user: SyncUser, after cursor: Int64, limit: Int, maximumBytes: Int) async throws -> PullResponse {
        try await database.pull(for: user, after: cursor, limit: limit, maximumBytes: maximumBytes)
    }
    func databaseID() async throws -> String { try await database.databaseID() }
    func historyTag(for user: SyncUser, at version: Int64) async throws -> String? {
        try await database.historyTag(for: user, at: version)
    }
    func historyTags(for user: SyncUser, at versions: [Int64]) async throws -> [String?] {
        try await database.historyTags(for: user, at: versions)
    }
    func prune(deletionsOlderThan date: Date) async throws -> Int {
        try await database.prune(deletionsOlderThan: date)
    }
}

/// A number raised under a lock.
private final class Counter: @unchecked Sendable {
    // @unchecked: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Int64 = 0

    /// Adds `count` and returns the new value.
    func add(_ count: Int64) -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        value += count
        return value
    }
}
