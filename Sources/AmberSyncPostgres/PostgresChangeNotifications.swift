import AmberLock
import AmberSyncServer
import Foundation
import Logging
import PostgresNIO

/// Carries "this user's records changed" between server processes on one PostgreSQL database.
///
/// - **Sending.** After a push commits, ``announce(userIDs:)`` sends a `pg_notify` on a pooled
///   connection, once the push is answered (a `NOTIFY` inside the write transaction would take a
///   database-wide lock at commit). One push at a time sends; pushes that commit while it does only queue their user,
///   and the sending push sends them all in its next notification.
/// - **Listening.** One pooled connection stays in `LISTEN` and wakes the pulls waiting in this
///   process through the `ChangeNotifier`. Notifications this process sent itself are skipped:
///   the HTTP layer already woke its own pulls.
/// - **Fallback.** A notification is lost when the listening connection drops. Every
///   ``PostgresSyncDatabase/fallbackPollInterval``, and right after the connection comes back,
///   the users' counters are read, and users whose counter moved are woken.
final class PostgresChangeNotifications: Sendable {
    /// The channel every Amber server process listens on.
    static let channel = "amber_sync_changes"
    /// The longest payload PostgreSQL takes is 8000 bytes; stay below it.
    static let payloadLimit = 7_000

    /// The pool of connections of the database now (a new one after an outage).
    private let client: @Sendable () -> PostgresClient
    private let notifier: ChangeNotifier
    private let logger: Logger
    /// Opens the listening connection, which stays out of the pool so that ``stop()`` can close it
    /// (a pooled one would be returned only once listening ends, and the pool waits for it).
    private let connect: @Sendable () async throws -> PostgresConnection
    /// Tells this process's notifications from other processes'.
    private let instance = UUID().uuidString
    private let state = LockedValue(State())

    private struct State {
        var queued: Set<Int64> = []
        var sending = false
        var tasks: [Task<Void, Never>] = []
        var knownVersions: [Int64: Int64] = [:]
        var stopped = false
        var listening: PostgresConnection?
    }

    init(
        client: @escaping @Sendable () -> PostgresClient, notifier: ChangeNotifier, logger: Logger,
        connect: @escaping @Sendable () async throws -> PostgresConnection
    ) {
        self.client = client
        self.notifier = notifier
        self.logger = logger
        self.connect = connect
    }

    /// Starts listening and polling; returns once the first `LISTEN` is in place, so no change
    /// committed afterwards is missed.
    func start() async throws {
        try await poll(notifyingChanges: false)
        let listening = AsyncStream<Result<Void, any Error>>.makeStream()
        let listener = Task { await self.listen(reporting: listening.continuation) }
        let poller = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: PostgresSyncDatabase.fallbackPollInterval)
                try? await self.poll(notifyingChanges: true)
            }
        }
        state.withLock { $0.tasks += [listener, poller] }
        for await first in listening.stream {
            try first.get()
            return
        }
    }

    /// Stops listening, polling and sending; returns the tasks that end, to wait for them.
    @discardableResult
    func stop() -> [Task<Void, Never>] {
        let (tasks, listening) = state.withLock { state in
            state.stopped = true
            defer { (state.tasks, state.listening) = ([], nil) }
            return (state.tasks, state.listening)
        }
        for task in tasks { task.cancel() }
        // Ends the notification sequence the listener waits on; the listener then releases it.
        listening?.close().whenComplete { _ in }
        return tasks
    }

    /// Wakes the pulls of every user in `userIDs` in every other process; call it after the push
    /// committed. It sends on a connection of the pool: the push's own went back at its commit.
    ///
    /// When no notification is being sent, this call sends one at once, for these users and every
    /// other user queued meanwhile, until the queue is empty. Otherwise it queues the users for
    /// the notification in flight to pick up, and returns.
    func announce(userIDs: some Sequence<Int64>) async {
        let sendsNow = state.withLock { state in
            guard !state.stopped else { return false }
            state.queued.formUnion(userIDs)
            if state.sending { return false }
            state.sending = true
            return true
        }
        guard sendsNow else { return }
        while true {
            let users = state.withLock { state -> [Int64] in
                let users = Array(state.queued)
                state.queued = []
                if users.isEmpty { state.sending = false }
                return users
            }
            guard !users.isEmpty else { return }
            for payload in payloads(for: users) {
                do {
                    try await client().query("SELECT pg_notify(\(Self.channel), \(payload))", logger: logger)
                } catch {
                    // The other processes' fallback poll will find these changes.
                    logger.warning("could not notify other server processes: \(String(reflecting: error))")
                }
            }
        }
    }

    /// `INSTANCE ID,ID,…` payloads, each under the size PostgreSQL takes.
    private func payloads(for users: [Int64]) -> [String] {
        var payloads: [String] = []
        var current = ""
        for user in users {
            let id = String(user)
            if !current.isEmpty, current.utf8.count + id.utf8.count + 1 > Self.payloadLimit {
                payloads.append(current)
                current = ""
            }
            current += current.isEmpty ? "\(instance) \(id)" : ",\(id)"
        }
        if !current.isEmpty { payloads.append(current) }
        return payloads
    }

    /// Keeps one connection listening, reconnecting after a failure; reports the first outcome.
    private func listen(reporting started: AsyncStream<Result<Void, any Error>>.Continuation) async {
        var reported = false
        while !Task.isCancelled {
            do {
                let connection = try await connect()
                let keep = state.withLock { state -> Bool in
                    guard !state.stopped else { return false }
                    state.listening = connection
                    return true
                }
                guard keep else {
                    try? await connection.close()
                    break
                }
                var listenError: (any Error)?
                do {
                    try await connection.listen(on: Self.channel) { notifications in
                        if reported {
                            // Changes committed while the connection was down sent no notification here.
                            try? await self.poll(notifyingChanges: true)
                        } else {
                            reported = true
                            started.yield(.success(()))
                            started.finish()
                        }
                        for try await notification in notifications {
                            self.received(notification.payload)
                        }
                    }
                } catch {
                    listenError = error
                }
                state.withLock { state in
                    if state.listening === connection { state.listening = nil }
                }
                // Closed before it is released: a connection must not outlive its channel.
                try? await connection.close()
                if let listenError { throw listenError }
            } catch {
                if !reported {
                    reported = true
                    started.yield(.failure(error))
                    started.finish()
                    return
                }
                if Task.isCancelled { return }
                logger.warning("listening for other server processes failed, retrying: \(String(reflecting: error))")
            }
            try? await Task.sleep(for: .seconds(1))
        }
        if !reported { started.finish() }
    }

    /// Wakes the pulls of the users another process announced.
    private func received(_ payload: String) {
        let parts = payload.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0] != instance else { return }
        for id in parts[1].split(separator: ",") {
            if let userID = Int64(id) { notifier.notify(userID: userID) }
        }
    }

    /// Reads every user's counter; wakes the users whose counter moved since the last reading.
    private func poll(notifyingChanges: Bool) async throws {
        let rows = try await client().query("SELECT id, version FROM amber_sync_users", logger: logger)
        var versions: [Int64: Int64] = [:]
        for try await (id, version) in rows.decode((Int64, Int64).self) {
            versions[id] = version
        }
        let moved = state.withLock { state in
            defer { state.knownVersions = versions }
            return versions.filter { id, version in version > state.knownVersions[id, default: 0] }.map(\.key)
        }
        guard notifyingChanges else { return }
        for userID in moved { notifier.notify(userID: userID) }
    }
}
