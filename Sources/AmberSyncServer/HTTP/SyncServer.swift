import AmberSyncProtocol
import Hummingbird
import HummingbirdCore
import Logging

/// The sync server: the HTTP API of the wire protocol on Hummingbird, over one ``SyncDatabase``.
///
/// The `amber-sync serve` command and in-process tests start it the same way:
///
/// ```swift
/// let database = try SQLiteSyncDatabase(path: path)
/// let token = try await database.addUser(named: "ann")
/// let server = SyncServer(database: database, port: 0, logger: Logger(label: "sync"))
/// let task = Task {
///     try await server.run { port in print("listening on http://127.0.0.1:\(port)") }
/// }
/// // ...
/// task.cancel()   // or SIGINT / SIGTERM: in-flight requests finish first
/// ```
public struct SyncServer: Sendable {
    /// Where users, tokens and records are kept.
    public let database: any SyncDatabase
    /// The address to listen on, such as `127.0.0.1` or `0.0.0.0`.
    public let host: String
    /// The port to listen on; 0 picks a free one, which `onListening` of ``run(onListening:)`` receives.
    public let port: Int
    /// The largest request body accepted, in bytes; larger ones are answered `413`.
    public let maximumBodySize: Int
    /// Where the server logs.
    public let logger: Logger
    /// What the server counts and times, served at `GET /metrics` (see ``SyncServerMetrics``).
    public let metrics: SyncServerMetrics
    /// What the server holds at most, and how long it waits for a slow client.
    public let limits: SyncServerLimits
    /// Verifies the app's own JWTs beside the operator's tokens; `nil` accepts operator tokens only.
    public let jwtVerifier: JWTVerifier?
    /// Shares database reads among pulls that ask the same question at once.
    let pullCoalescer = PullCoalescer()
    /// Token checks shared by the pulls one push wakes.
    let tokenChecks = SharedReads<TokenCheck, SyncUser?>()
    /// History checks shared by pulls that arrive together at one cursor.
    let historyChecks = SharedReads<HistoryCheck, String?>()
    /// The pulls held waiting for a change, counted against ``limits``.
    let waitingPulls = WaitingPulls()
    /// The connections open, counted against ``limits``.
    let connections = ConnectionCount()
    /// The SHA-256 of uploads left unfinished by a part, for the request that continues them.
    let uploadHashes = UploadHashes()

    /// Creates a server; nothing listens until ``run(onListening:)``.
    ///
    /// - Parameters:
    ///   - database: Where users, tokens and records are kept.
    ///   - host: The address to listen on.
    ///   - port: The port to listen on; 0 picks a free one.
    ///   - maximumBodySize: The largest request body accepted, in bytes.
    ///   - logger: Where the server logs.
    ///   - metrics: Where the server counts and times its work; new ones unless given.
    ///   - limits: What the server holds at most, and how long it waits for a slow client.
    ///   - jwtVerifier: Verifies the app's own JWTs (see the article "Signing in" of `AmberSync`); operator tokens only when `nil`.
    public init(
        database: any SyncDatabase,
        host: String = "127.0.0.1",
        port: Int = 8080,
        maximumBodySize: Int = SyncLimits.defaultMaximumBody,
        logger: Logger = Logger(label: "amber-sync"),
        metrics: SyncServerMetrics = SyncServerMetrics(),
        limits: SyncServerLimits = SyncServerLimits(),
        jwtVerifier: JWTVerifier? = nil
    ) {
        precondition(maximumBodySize > 0, "The maximum body size must be a positive number of bytes.")
        self.database = database
        self.host = host
        self.port = port
        self.maximumBodySize = maximumBodySize
        self.logger = logger
        self.metrics = metrics
        self.limits = limits
        self.jwtVerifier = jwtVerifier
    }

    /// Serves until the calling task is cancelled or the process gets SIGINT or SIGTERM.
    ///
    /// On a signal the server shuts down gracefully: it stops accepting connections, answers
    /// waiting pulls at once, and lets requests in flight finish. Cancelling the task stops at once.
    ///
    /// - Parameter onListening: Called once the server accepts connections, with the port it listens on.
    /// - Throws: When the address cannot be bound.
    public func run(onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }) async throws {
        try await serve(handlingSignals: true, onListening: onListening)
    }

    /// Migrates the database and serves; with `handlingSignals`, SIGINT and SIGTERM shut the
    /// server down gracefully, and without, only the enclosing `ServiceGroup`'s shutdown does.
    func serve(handlingSignals: Bool, onListening: @escaping @Sendable (_ port: Int) async -> Void) async throws {
        try await database.migrate()
        let application = makeApplication(onListening: onListening)
        guard let jwtVerifier else {
            try await application.runService(gracefulShutdownSignals: handlingSignals ? [.sigterm, .sigint] : [])
            return
        }
        // The JWKS document is fetched at start and refreshed for as long as the server runs.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await jwtVerifier.refreshKeys() }
            try await application.runService(gracefulShutdownSignals: handlingSignals ? [.sigterm, .sigint] : [])
            group.cancelAll()
        }
    }

    /// The Hummingbird application of this server, for tests (`app.test(.router)`) or to run in
    /// a `ServiceGroup` of one's own.
    ///
    /// - Parameter onListening: Called once the server accepts connections, with the port it listens on.
    /// - Returns: An application serving `GET /v1/health`, `POST /v1/push`, `GET /v1/pull`,
    ///   `GET /v1/openapi.json` and `GET /metrics`.
    public func makeApplication(
        onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let (port, limits, maximumBodySize, connections) = (
            self.port, self.limits, self.maximumBodySize, self.connections
        )
        return Application(
            router: makeRouter(),
            server: HTTPServerBuilder { responder in
                SyncHTTPChannel(
                    responder: responder, limits: limits, maximumBodySize: maximumBodySize,
                    connections: connections)
            },
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "amber-sync"),
            onServerRunning: { channel in
                await onListening(channel.localAddress?.port ?? port)
            },
            logger: logger
        )
    }
}
