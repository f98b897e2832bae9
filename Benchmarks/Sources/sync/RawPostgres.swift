import Foundation
import Logging
import NIOCore
import PostgresNIO

/// The PostgreSQL baselines: the same reads and writes with PostgresNIO, no server in between.
enum RawPostgres {
    static let logger: Logger = {
        var logger = Logger(label: "raw-postgres")
        logger.logLevel = .critical
        return logger
    }()

    /// `postgres://USER@HOST:PORT/DATABASE` as a connection configuration, without TLS (loopback).
    static func configuration(_ location: String) throws -> PostgresClient.Configuration {
        guard let components = URLComponents(string: location), let host = components.host, let user = components.user
        else { throw BenchmarkError("cannot read the PostgreSQL URL \(location)") }
        return PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: components.password,
            database: String(components.path.dropFirst()), tls: .disable)
    }

    /// Runs `body` with a pool of at most `connections` connections.
    static func withClient<Result: Sendable>(
        _ location: String, connections: Int, _ body: (PostgresClient) async throws -> Result
    ) async throws -> Result {
        var configuration = try configuration(location)
        configuration.options.maximumConnections = connections
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let running = Task { await client.run() }
        defer { running.cancel() }
        return try await body(client)
    }

    /// Reads every record of `user` in version order, as the server's pull does.
    static func selectAll(_ location: String, user: String) async throws -> (
        seconds: Double, rows: [(String, String, String)]
    ) {
        try await withClient(location, connections: 1) { client in
            // Connect before the clock starts.
            _ = try await client.query("SELECT 1", logger: logger).collect()
            let start = ContinuousClock.now
            let rows = try await client.query(
                """
                SELECT r.collection, r.id, r.value FROM amber_sync_records r JOIN amber_sync_users u ON u.id = r.user_id
                WHERE u.name = \(user) AND r.value IS NOT NULL ORDER BY r.version
                """, logger: logger)
            var result: [(String, String, String)] = []
            for try await row in rows.decode((String, String, String).self) { result.append(row) }
            return (seconds(since: start), result)
        }
    }

    /// `writesPerClient` single-statement INSERTs (each its own transaction) from `clients` writers at once.
    static func writes(_ location: String, users: Int, clients: Int, writesPerClient: Int) async throws -> Double {
        try await withClient(location, connections: 20) { client in
            try await client.query(
                """
                CREATE TABLE raw_records (
                    user_id bigint NOT NULL, collection text NOT NULL, id text NOT NULL,
                    version bigint NOT NULL, value text, PRIMARY KEY (user_id, collection, id))
                """, logger: logger)
            try await concurrently(20, width: 20) { _ in
                _ = try await client.query("SELECT 1", logger: logger).collect()
            }
            let start = ContinuousClock.now
            try await concurrently(clients, width: clients) { index in
                let user = index % users
                for write in 0..<writesPerClient {
                    let id = "c\(index)-\(write)"
                    let json = String(
                        decoding: try JSONEncoder().encode(WireValue.sample(id: id, index: write)), as: UTF8.self)
                    let version = index * writesPerClient + write + 1
                    try await client.query(
                        "INSERT INTO raw_records (user_id, collection, id, version, value) VALUES (\(user), 'notes', \(id), \(version), \(json))",
                        logger: logger)
                }
            }
            return seconds(since: start)
        }
    }
}
