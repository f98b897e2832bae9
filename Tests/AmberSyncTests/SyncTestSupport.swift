import Amber
import AmberSQLite
import AmberSync
import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Logging

@Immutable
struct Note: Identifiable, Hashable, Codable, Sendable {
    let id: UUID
    let text: String
    let tagIDs: [UUID]
    let pinned: Bool
}

@Immutable
struct Tag: Identifiable, Hashable, Codable, Sendable {
    let id: UUID
    let name: String
}

/// The note of a newer app version, with a field older versions lack.
@Immutable
struct NoteWithColor: Identifiable, Hashable, Codable, Sendable {
    let id: UUID
    let text: String
    let tagIDs: [UUID]
    let pinned: Bool
    let color: String?
}

/// The note of a newer app version whose `pinned` is text: older versions cannot read it.
@Immutable
struct ReshapedNote: Identifiable, Hashable, Codable, Sendable {
    let id: UUID
    let text: String
    let pinned: String
}

/// A note as the `notes` executable writes it.
struct NotesAppNote: Identifiable, Hashable, Codable, Sendable {
    let id: UUID
    let text: String
    let tagIDs: [UUID]
    let created: Date
    let modified: Date
}

/// What `amber-sqlite-writer` writes.
struct Entry: Identifiable, Codable, Sendable, Equatable {
    let id: String
    let index: Int
    let payload: String
}

/// How a test's clients reach its server.
enum Connection: Sendable {
    /// Over HTTP, to a server listening on a free loopback port.
    case http
    /// Through ``InProcessSyncTransport``, straight to the server's router: no socket.
    case inProcess
}

/// A sync server in this process, on a free loopback port or reached without a socket.
final class TestServer: Sendable {
    let database: any SyncDatabase
    private let running: RunningSyncServer?
    private let inProcess: InProcessSyncTransport?
    private let remove: @Sendable () async -> Void

    var port: Int {
        guard let running else { preconditionFailure("A server reached in process listens on no port.") }
        return running.port
    }
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// What carries a client's requests to this server: its router when in process, else HTTP.
    var transport: any SyncTransport {
        inProcess ?? HTTPSyncTransport(server: url)
    }

    private init(
        database: any SyncDatabase, running: RunningSyncServer?, inProcess: InProcessSyncTransport?,
        remove: @escaping @Sendable () async -> Void
    ) {
        self.database = database
        self.running = running
        self.inProcess = inProcess
        self.remove = remove
    }

    /// Starts a server on `path` (a new file by default), on `port` (a free one by default).
    static func start(path: String? = nil, port: Int = 0, over connection: Connection = .http) async throws
        -> TestServer
    {
        let path = path ?? temporaryDirectory().appendingPathComponent("server.sqlite").path
        return try await start(database: SQLiteSyncDatabase(path: path), port: port, over: connection) {}
    }

    /// Starts a server on a new database of `backend`; ``stop()`` throws the database away.
    static func start(
        _ backend: Backend, over connection: Connection = .http, jwtVerifier: JWTVerifier? = nil,
        maximumBodySize: Int = SyncLimits.defaultMaximumBody
    ) async throws -> TestServer {
        let test = try await backend.makeDatabase()
        return try await start(
            database: test.database, port: 0, over: connection, jwtVerifier: jwtVerifier,
            maximumBodySize: maximumBodySize, remove: test.remove)
    }

    private static func start(
        database: any SyncDatabase, port: Int, over connection: Connection, jwtVerifier: JWTVerifier? = nil,
        maximumBodySize: Int = SyncLimits.defaultMaximumBody, remove: @escaping @Sendable () async -> Void
    ) async throws -> TestServer {
        var logger = Logger(label: "amber-sync-test")
        logger.logLevel = .critical
        let server = SyncServer(
            database: database, port: port, maximumBodySize: maximumBodySize, logger: logger,
            jwtVerifier: jwtVerifier)
        // `AMBER_TEST_CONNECTION=http` runs the in-process tests over HTTP too.
        let forced = ProcessInfo.processInfo.environment["AMBER_TEST_CONNECTION"] == "http"
        switch forced ? .http : connection {
        case .http:
            return TestServer(database: database, running: try await server.start(), inProcess: nil, remove: remove)
        case .inProcess:
            let transport = try await InProcessSyncTransport(server: server)
            return TestServer(database: database, running: nil, inProcess: transport, remove: remove)
        }
    }

    func stop() async {
        await running?.stop()
        await remove()
    }

    func addUser(_ name: String = "ann") async throws -> String {
        try await database.addUser(named: name)
    }

    /// A client of `storage` that reaches this server as the server was started to be reached.
    func client(storage: SQLiteStorage, token: String) throws -> SyncClient {
        try SyncClient(storage: storage, transport: transport, tokenProvider: { token })
    }
}

struct SyncTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One device: a storage file with a notes and a tags store, and a sync client.
final class Device: Sendable {
    let path: String
    let storage: SQLiteStorage
    let notes: IdentityStore<Note>
    let tags: IdentityStore<Tag>
    let client: SyncClient

    /// A device that reaches the server at `server` over HTTP.
    convenience init(server: URL, token: String, path: String? = nil) throws {
        try self.init(transport: HTTPSyncTransport(server: server), path: path, tokenProvider: { token })
    }

    /// A device that reaches `server` as the server was started to be reached.
    convenience init(server: TestServer, token: String, path: String? = nil) throws {
        try self.init(server: server, path: path, tokenProvider: { token })
    }

    /// A device that reaches `server` as the server was started to be reached, with the tokens
    /// `tokenProvider` hands out.
    convenience init(
        server: TestServer, path: String? = nil, tokenProvider: @escaping @Sendable () async throws -> String
    ) throws {
        try self.init(transport: server.transport, path: path, tokenProvider: tokenProvider)
    }

    init(
        transport: any SyncTransport, path: String? = nil,
        tokenProvider: @escaping @Sendable () async throws -> String
    ) throws {
        let path = path ?? temporaryDirectory().appendingPathComponent("device.sqlite").path
        self.path = path
        storage = try SQLiteStorage(path: path)
        notes = try IdentityStore(key: "notes", storage: storage)
        tags = try IdentityStore(key: "tags", storage: storage)
        client = try SyncClient(storage: storage, transport: transport, tokenProvider: tokenProvider)
        try client.add(notes)
        try client.add(tags)
    }
}

func note(_ text: String, tags: [UUID] = [], pinned: Bool = false) -> Note {
    Note(id: UUID(), text: text, tagIDs: tags, pinned: pinned)
}
