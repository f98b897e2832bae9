import AmberLock
import AmberSyncServer
import Foundation
import Logging
import PostgresNIO
import _ConnectionPoolModule

/// The database of a sync server that outgrows one machine: PostgreSQL, shared by several
/// stateless `amber-sync serve` processes.
///
/// It implements the same `SyncDatabase` protocol as `SQLiteSyncDatabase` and passes the same
/// server test suite. Opening it creates or upgrades its tables (all named `amber_sync_…`) and
/// refuses a database written by a newer server, leaving it untouched.
///
/// - **Versions commit in order.** Each push locks its user's counter row until it commits, so a
///   user's versions commit in the order they were handed out, and a pull never skips one. Pushes
///   of different users never wait for each other.
/// - **Wake-ups cross processes.** After a push commits, the process sends one `NOTIFY` for the
///   users it changed (batched with other pushes committed meanwhile, never inside the write
///   transaction). Every process listens on its own connection and wakes its waiting pulls. A
///   notification lost while that connection was down is made up for by a slow poll of the users'
///   counters every ``fallbackPollInterval``.
///
/// ```swift
/// let database = try await PostgresSyncDatabase(url: "postgres://amber@127.0.0.1:5432/sync", logger: logger)
/// let token = try await database.addUser(named: "ann")
/// let server = SyncServer(database: database, port: 8080, logger: logger)
/// try await server.run { port in logger.info("listening on port \(port)") }
/// ```
public final class PostgresSyncDatabase: SyncDatabase {
    /// The database's address with any password removed, for messages.
    public let location: String
    /// Wakes pulls waiting in this process, for pushes served by any process on the database.
    public let changeNotifier = ChangeNotifier()
    /// How often the users' counters are read in case a notification from another process was lost.
    public static let fallbackPollInterval = Duration.seconds(2)

    let logger: Logger
    let notifications: PostgresChangeNotifications
    /// `databaseID()`, once read.
    let identity = LockedValue<String?>(nil)
    /// Pushes waiting to be applied together.
    let waitingPushes: WaitingPushes
    /// The users of the tokens this process looked up.
    let knownTokens = KnownTokens()
    /// When to analyze the records table, which this process's pushes make grow.
    package let recordStatistics = RecordStatistics()
    /// Runs after each push batch's read and before its write, while the batch holds its
    /// connection; `nil` in a server. Tests commit there what another process might commit
    /// between the two statements.
    package let betweenReadAndWrite = LockedValue<(@Sendable () async throws -> Void)?>(nil)
    /// The pool of connections for queries, and its running; replaced after an outage.
    private let pool: LockedValue<Pool>
    private let address: PostgresAddress
    private let configuration: PostgresClient.Configuration

    /// A pool of connections, running.
    private struct Pool {
        var client: PostgresClient
        var running: Task<Void, Never>
        /// Whether a task is trying to reach the database to replace the pool.
        var recovering = false
        /// Whether ``close()`` was called: no new pool then.
        var closed = false

        init(_ client: PostgresClient) {
            self.client = client
            running = Task { await client.run() }
        }
    }

    /// The pool of connections for queries now.
    var client: PostgresClient {
        pool.withLock { $0.client }
    }

    /// Connects to the PostgreSQL database at `url`, creates or upgrades its tables, and starts
    /// listening for other processes' pushes.
    ///
    /// - Parameters:
    ///   - url: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`. Add `?sslmode=require` to insist on
    ///     TLS; without it, TLS is used when the server offers it.
    ///   - maximumConnections: The most connections this process opens for queries (one more
    ///     listens for notifications).
    ///   - logger: Where connection problems are logged.
    /// - Throws: `SyncServerError.invalidDatabaseURL(_:reason:)` for an address it cannot use,
    ///   `SyncServerError.databaseUnavailable(location:reason:)` when the server cannot be
    ///   reached, `SyncServerError.schemaTooNew(path:found:supported:)` when a newer server
    ///   wrote the database (left untouched).
    public init(url: String, maximumConnections: Int = 20, logger: Logger) async throws {
        let address = try PostgresAddress(url)
        location = address.redacted
        self.logger = logger
        var configuration = PostgresClient.Configuration(
            host: address.host, port: address.port, username: address.username, password: address.password,
            database: address.database, tls: address.clientTLS
        )
        configuration.options.maximumConnections = max(1, maximumConnections)
        configuration.options.connectTimeout = .seconds(5)
        // One connection first, made and used directly: an unreachable server or a wrong name fails
        // at once with its reason (a pool would retry for a while), and the tables are ready before
        // the pool serves anything.
        try await Self.prepare(address, location: address.redacted, logger: logger)
        // Half the pool at most: pulls and token look-ups need connections too.
        waitingPushes = WaitingPushes(maximumBatches: min(Self.maximumPushBatches, max(1, maximumConnections / 2)))
        let pool = LockedValue(Pool(PostgresClient(configuration: configuration, backgroundLogger: logger)))
        self.pool = pool
        self.address = address
        self.configuration = configuration
        notifications = PostgresChangeNotifications(
            client: { pool.withLock { $0.client } }, notifier: changeNotifier, logger: logger,
            connect: { try await Self.connect(address, logger: logger) }
        )
        do {
            try await notifications.start()
        } catch {
            pool.withLock { $0.running }.cancel()
            notifications.stop()
            throw Self.describe(error, location: location)
        }
    }

    /// Connects once to check that the database can be used, and creates or upgrades its tables.
    private static func prepare(_ address: PostgresAddress, location: String, logger: Logger) async throws {
        do {
            var quiet = logger
            quiet.logLevel = .critical
            let connection = try await connect(address, logger: quiet)
            do {
                try await migrate(on: connection, location: location, logger: quiet)
                try await connection.close()
            } catch {
                try? await connection.close()
                throw error
            }
        } catch {
            throw describe(error, location: location)
        }
    }

    /// A connection of its own, outside the pool: for the first checks and for listening.
    static func connect(_ address: PostgresAddress, logger: Logger) async throws -> PostgresConnection {
        let tls: PostgresConnection.Configuration.TLS =
            switch address.sslMode {
            case "disable": .disable
            case "require": .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            default: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        var configuration = PostgresConnection.Configuration(
            host: address.host, port: address.port, username: address.username, password: address.password,
            database: address.database, tls: tls
        )
        configuration.options.connectTimeout = .seconds(10)
        return try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
    }

    /// Stops listening and closes every connection. The database must not be used afterwards.
    ///
    /// Waits at most ``closeTimeout`` for queries still running to end; their connections are
    /// closed in the background after that.
    public func close() async {
        let listening = notifications.stop()
        let running = pool.withLock { pool in
            pool.closed = true
            return pool.running
        }
        running.cancel()
        let finished = LockedValue<CheckedContinuation<Void, Never>?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            finished.withLock { $0 = continuation }
            Task {
                for task in listening { await task.value }
                await running.value
                finished.withLock { $0.take() }?.resume()
            }
            Task {
                try? await Task.sleep(for: Self.closeTimeout)
                finished.withLock { $0.take() }?.resume()
            }
        }
    }

    /// The most batches of pushes one process applies at once, each on its own connection: more
    /// than one only next to large batches (see `WaitingPushes`).
    static let maximumPushBatches = 4

    /// The fewest mutations that make a batch of pushes large: next to a batch that large, other
    /// users' pushes are applied in batches of their own rather than waiting for it.
    package static var largePushBatch: Int { WaitingPushes.largeBatchMutations }

    /// How long ``close()`` waits for the connections to close.
    public static let closeTimeout = Duration.seconds(5)

    deinit {
        notifications.stop()
        pool.withLock { $0.running }.cancel()
    }

    /// Runs `body` in one transaction; an error thrown by `body` comes out as itself.
    func transaction<Result: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let logger = self.logger
        return try await withConnection { connection in
            try await connection.withTransaction(logger: logger) { connection in try await body(connection) }
        }
    }

    /// How long a request waits for a connection of the pool, while no other request gets one,
    /// before it fails with `SyncServerError.databaseUnavailable(location:reason:)`.
    ///
    /// While the database cannot be reached, the pool keeps trying to connect in the background
    /// for a minute or more before it gives up on waiting requests; a request is answered sooner.
    public static let connectionWait = Duration.seconds(5)

    /// The requests waiting for a connection of the pool.
    private let leases = LeaseWatch(wait: connectionWait)

    /// Runs `body` with a connection of the pool, waiting for one at most ``connectionWait``
    /// after the last request that got one.
    ///
    /// The connection is asked for by a child task, and this task waits for whichever comes
    /// first: its result, or ``LeaseWatch`` failing it. One watch checks all the requests
    /// waiting, so a statement costs no timer of its own.
    func withConnection<Result: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let (client, location, leases) = (client, location, leases)
        let unavailable = SyncServerError.databaseUnavailable(
            location: location, reason: "no connection could be had within \(Self.connectionWait)")
        do {
            return try await withThrowingTaskGroup(of: Void.self) { group in
                let lease = LeaseWatch.Lease<Result>()
                group.addTask {
                    do {
                        let result = try await client.withConnection { connection in
                            guard lease.begin() else { throw unavailable }
                            leases.leased()
                            return try await body(connection)
                        }
                        lease.finish(.success(result))
                    } catch {
                        lease.finish(.failure(error))
                    }
                }
                // A failure here (the watch's) cancels the child, which stops asking.
                return try await leases.wait(for: lease, failing: unavailable)
            }
        } catch {
            let described = Self.describe(error, location: location)
            if case SyncServerError.databaseUnavailable = described {
                recover()
            }
            throw described
        }
    }

    /// Once the pool could not give a connection: tries a connection of its own every second
    /// and, as soon as one succeeds, replaces the pool with a new one.
    ///
    /// The pool tries again by itself, but it waits longer after each failure (up to a minute),
    /// so without this the server would answer `503` long after the database is back.
    private func recover() {
        let starts = pool.withLock { pool in
            guard !pool.recovering, !pool.closed else { return false }
            pool.recovering = true
            return true
        }
        guard starts else { return }
        let (pool, address, configuration, logger) = (pool, address, configuration, logger)
        Task {
            var quiet = logger
            quiet.logLevel = .critical
            while true {
                if let connection = try? await Self.connect(address, logger: quiet) {
                    try? await connection.close()
                    let fresh = Pool(PostgresClient(configuration: configuration, backgroundLogger: logger))
                    let replaced = pool.withLock { pool -> Task<Void, Never> in
                        if pool.closed { return fresh.running }
                        let replaced = pool.running
                        pool.client = fresh.client
                        pool.running = fresh.running
                        pool.recovering = false
                        return replaced
                    }
                    replaced.cancel()
                    logger.info("The database can be reached again: serving from a new pool of connections.")
                    return
                }
                if pool.withLock({ $0.closed }) { return }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Turns a failure to reach the database into a sentence naming it; keeps every other error.
    static func describe(_ error: any Error, location: String) -> any Error {
        if let error = error as? PostgresTransactionError {
            guard let inner = error.closureError ?? error.beginError ?? error.commitError else { return error }
            return describe(inner, location: location)
        }
        if let error = error as? ConnectionPoolError, error == .connectionCreationCircuitBreakerTripped {
            return SyncServerError.databaseUnavailable(location: location, reason: "\(error)")
        }
        guard let error = error as? PSQLError else { return error }
        switch error.code {
        case .connectionError, .serverClosedConnection, .poolClosed, .saslError, .unsupportedAuthMechanism,
            .failedToAddSSLHandler, .sslUnsupported, .authMechanismRequiresPassword:
            let reason = error.serverInfo?[.message] ?? error.underlying.map { "\($0)" } ?? "\(error.code)"
            return SyncServerError.databaseUnavailable(location: location, reason: reason)
        case .server
        where error.serverInfo?[.sqlState]?.hasPrefix("28") == true
            || error.serverInfo?[.sqlState] == "3D000":
            // Invalid authorization (class 28) or no such database (3D000): the server refused us.
            return SyncServerError.databaseUnavailable(
                location: location, reason: error.serverInfo?[.message] ?? "refused")
        default:
            return error
        }
    }
}
