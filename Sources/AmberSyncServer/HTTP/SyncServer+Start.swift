import ServiceLifecycle

extension SyncServer {
    /// Starts serving in the background and returns once the server accepts connections.
    ///
    /// The server runs until ``RunningSyncServer/stop()``, the process gets SIGINT or SIGTERM,
    /// or the returned value goes away.
    ///
    /// ```swift
    /// let database = try SQLiteSyncDatabase(path: path)
    /// let token = try await database.addUser(named: "ann")
    /// let running = try await SyncServer(database: database, port: 0).start()
    /// print("serving on port \(running.port)")
    /// ```
    ///
    /// - Returns: The running server, with the port it listens on.
    /// - Throws: Why the server could not start, such as a port in use.
    public func start() async throws -> RunningSyncServer {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let serving = Task {
            defer { continuation.finish() }
            try await run { port in continuation.yield(port) }
        }
        return try await withTaskCancellationHandler {
            var iterator = ports.makeAsyncIterator()
            if let port = await iterator.next() {
                return RunningSyncServer(port: port, serving: serving)
            }
            // The server ended before it listened: report why.
            try await serving.value
            throw CancellationError()
        } onCancel: {
            serving.cancel()
        }
    }
}

/// A server is a `Service`: it runs as one service of a `ServiceGroup` of the app's own, beside
/// the app's other services, and stops gracefully when the group shuts down (on the group's
/// signals, or `triggerGracefulShutdown()`): it stops accepting connections, answers waiting
/// pulls at once, and lets requests in flight finish. Signals are the group's to handle; a
/// program that runs the server alone calls ``SyncServer/run(onListening:)``, which handles
/// SIGINT and SIGTERM itself.
///
/// ```swift
/// let server = SyncServer(database: database, port: 8080, logger: logger)
/// let group = ServiceGroup(services: [server, metricsExporter], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
extension SyncServer: Service {
    /// Serves until the enclosing `ServiceGroup` shuts down gracefully or the task is cancelled.
    ///
    /// - Throws: When the address cannot be bound.
    public func run() async throws {
        try await serve(handlingSignals: false, onListening: { _ in })
    }
}
