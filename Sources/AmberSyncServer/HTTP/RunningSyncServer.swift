/// A ``SyncServer`` serving in the background, from ``SyncServer/start()``.
///
/// ```swift
/// let running = try await SyncServer(database: database, port: 0).start()
/// let url = URL(string: "http://127.0.0.1:\(running.port)")!
/// // ...
/// await running.stop()
/// ```
public final class RunningSyncServer: Sendable {
    /// The port the server listens on: the one asked for, or the free one it picked for port 0.
    public let port: Int
    private let serving: Task<Void, any Error>

    init(port: Int, serving: Task<Void, any Error>) {
        self.port = port
        self.serving = serving
    }

    /// Stops the server at once, ending requests in flight, and returns when it stopped.
    public func stop() async {
        serving.cancel()
        _ = await serving.result
    }

    deinit {
        serving.cancel()
    }
}
