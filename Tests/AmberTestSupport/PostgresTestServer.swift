import Foundation

/// A PostgreSQL server for tests, and a fresh database in it for each test.
///
/// The server is the one `AMBER_TEST_POSTGRES_URL` names (`postgres://amber@127.0.0.1:PORT/postgres`,
/// as `.ci/run` sets it), or else a throwaway cluster that `scripts/postgres-cluster` starts for
/// this test process on a free loopback port and stops when the process ends. With
/// `AMBER_REQUIRE_POSTGRES=1` (CI), a missing PostgreSQL fails the PostgreSQL tests instead of
/// leaving them out.
public enum PostgresTestServer {
    /// Whether tests should run on PostgreSQL: it is installed, named, or required.
    public static let isWanted: Bool = {
        let environment = ProcessInfo.processInfo.environment
        return environment["AMBER_TEST_POSTGRES_URL"] != nil || environment["AMBER_REQUIRE_POSTGRES"] == "1"
            || tool(named: "initdb") != nil
    }()

    /// The server's administrative URL; starts the throwaway cluster on first use.
    ///
    /// - Throws: ``PostgresTestServerError`` when no server can be had.
    public static func url() throws -> String {
        try server.get()
    }

    /// Creates an empty database and returns its URL and a way to drop it.
    public static func makeDatabase() throws -> (url: String, drop: @Sendable () -> Void) {
        let admin = try url()
        let name = "amber_test_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
        try psql(admin, "CREATE DATABASE \(name)")
        guard var components = URLComponents(string: admin) else {
            throw PostgresTestServerError("\(admin) is not a URL")
        }
        components.path = "/\(name)"
        let url = components.string ?? admin
        return (url, { _ = try? psql(admin, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)") })
    }

    /// Runs one SQL command with `psql` against `url`; returns what it printed (unaligned, tuples only).
    @discardableResult
    public static func psql(_ url: String, _ sql: String) throws -> String {
        guard let psql = tool(named: "psql") else { throw PostgresTestServerError("psql is not installed") }
        let process = Process()
        process.executableURL = psql
        process.arguments = [url, "-v", "ON_ERROR_STOP=1", "-X", "-q", "-A", "-t", "-c", sql]
        let result = try runToEnd(process)
        guard result.status == 0 else {
            throw PostgresTestServerError("psql failed on \(sql): \(result.error)")
        }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static let server: Result<String, PostgresTestServerError> = {
        if let url = ProcessInfo.processInfo.environment["AMBER_TEST_POSTGRES_URL"] {
            return .success(url)
        }
        guard tool(named: "initdb") != nil else {
            return .failure(PostgresTestServerError("PostgreSQL is not installed (no initdb); install it or set AMBER_TEST_POSTGRES_URL"))
        }
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/postgres-cluster")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("amber-postgres-\(UUID().uuidString)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [
            script.path, "start", directory.path, "--stop-with", String(ProcessInfo.processInfo.processIdentifier),
        ]
        // Files, not pipes: the server the script leaves running inherits its output, so a pipe
        // would never reach its end.
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("amber-postgres-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: output) }
        do {
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let handle = try FileHandle(forWritingTo: output)
            defer { try? handle.close() }
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
            process.waitUntilExit()
            let printed = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            guard process.terminationStatus == 0,
                let url = printed.split(separator: "\n").last.map(String.init), url.hasPrefix("postgres://")
            else {
                return .failure(PostgresTestServerError("scripts/postgres-cluster failed: \(printed)"))
            }
            return .success(url)
        } catch {
            return .failure(PostgresTestServerError("scripts/postgres-cluster could not run: \(error)"))
        }
    }()

    /// A PostgreSQL program on `PATH` or in Debian's `/usr/lib/postgresql/VERSION/bin`.
    static func tool(named name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { $0.compare($1, options: .numeric) == .orderedDescending }) {
            let candidate = URL(fileURLWithPath: "/usr/lib/postgresql/\(version)/bin/\(name)")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}

/// Why the tests have no PostgreSQL server.
public struct PostgresTestServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
