import Amber
import AmberSQLite
import AmberSync
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

/// A sync server in this process, on a free loopback port.
final class TestServer: Sendable {
    let database: any SyncDatabase
    let running: RunningSyncServer
    private let remove: @Sendable () async -> Void

    var port: Int { running.port }
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private init(database: any SyncDatabase, running: RunningSyncServer, remove: @escaping @Sendable () async -> Void) {
        self.database = database
        self.running = running
        self.remove = remove
    }

    /// Starts a server on `path` (a new file by default), on `port` (a free one by default).
    static func start(path: String? = nil, port: Int = 0) async throws -> TestServer {
        let path = path ?? temporaryDirectory().appendingPathComponent("server.sqlite").path
        return try await start(database: SQLiteSyncDatabase(path: path), port: port) {}
    }

    /// Starts a server on a new database of `backend`; ``stop()`` throws the database away.
    static func start(_ backend: Backend, jwtVerifier: JWTVerifier? = nil) async throws -> TestServer {
        let test = try await backend.makeDatabase()
        return try await start(database: test.database, port: 0, jwtVerifier: jwtVerifier, remove: test.remove)
    }

    private static func start(
        database: any SyncDatabase, port: Int, jwtVerifier: JWTVerifier? = nil,
        remove: @escaping @Sendable () async -> Void
    ) async throws -> TestServer {
        var logger = Logger(label: "amber-sync-test")
        logger.logLevel = .critical
        let running = try await SyncServer(database: database, port: port, logger: logger, jwtVerifier: jwtVerifier)
            .start()
        return TestServer(database: database, running: running, remove: remove)
    }

    func stop() async {
        await running.stop()
        await remove()
    }

    func addUser(_ name: String = "ann") async throws -> String {
        try await database.addUser(named: name)
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

    convenience init(server: URL, token: String, path: String? = nil) throws {
        try self.init(server: server, path: path, tokenProvider: { token })
    }

    init(server: URL, path: String? = nil, tokenProvider: @escaping @Sendable () async throws -> String) throws {
        let path = path ?? temporaryDirectory().appendingPathComponent("device.sqlite").path
        self.path = path
        storage = try SQLiteStorage(path: path)
        notes = try IdentityStore(key: "notes", storage: storage)
        tags = try IdentityStore(key: "tags", storage: storage)
        client = try SyncClient(storage: storage, server: server, tokenProvider: tokenProvider)
        try client.add(notes)
        try client.add(tags)
    }
}

func note(_ text: String, tags: [UUID] = [], pinned: Bool = false) -> Note {
    Note(id: UUID(), text: text, tagIDs: tags, pinned: pinned)
}
