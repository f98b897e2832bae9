import AmberSyncPostgres
import AmberSyncServer
import AmberTestSupport
import Foundation
import Logging
import Testing

/// A database backend the protocol tests run against.
///
/// PostgreSQL joins when it is installed or required (`AMBER_REQUIRE_POSTGRES=1` in CI), on the
/// throwaway server of ``PostgresTestServer``; each test gets its own database.
public enum Backend: String, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    /// The backends to run on this machine.
    public static let allCases: [Backend] = PostgresTestServer.isWanted ? [.sqlite, .postgres] : [.sqlite]

    public var testDescription: String { rawValue }

    /// How soon a push through one server process must wake a pull waiting in another.
    ///
    /// PostgreSQL notifies (the contract is one second); SQLite processes hear of each other's
    /// commits through file events on Linux (elsewhere they look every 250 ms), which a loaded
    /// machine delays, so they get more room.
    public var crossProcessWakeLimit: Duration {
        switch self {
        case .sqlite: .seconds(5)
        case .postgres: .seconds(1)
        }
    }

    /// A new, empty database of this backend, and a way to throw it away.
    public func makeDatabase() async throws -> TestDatabase {
        switch self {
        case .sqlite:
            let directory = temporaryDirectory()
            let database = try SQLiteSyncDatabase(path: directory.appendingPathComponent("sync.sqlite").path)
            return TestDatabase(database: database) { try? FileManager.default.removeItem(at: directory) }
        case .postgres:
            let (url, drop) = try PostgresTestServer.makeDatabase()
            var logger = Logger(label: "amber-sync-tests")
            logger.logLevel = .critical
            let database = try await PostgresSyncDatabase(url: url, maximumConnections: 4, logger: logger)
            return TestDatabase(database: database, location: url) {
                await database.close()
                drop()
            }
        }
    }
}

/// A database made for one test, and the way to throw it away.
public struct TestDatabase: Sendable {
    public let database: any SyncDatabase
    /// The file path or URL another process opens it with.
    public let location: String?
    public let remove: @Sendable () async -> Void

    public init(database: any SyncDatabase, location: String? = nil, remove: @escaping @Sendable () async -> Void) {
        self.database = database
        self.location = location ?? (database as? SQLiteSyncDatabase)?.path
        self.remove = remove
    }

    /// Runs `body` with the database, then throws it away, also when `body` throws.
    public func use<Result>(_ body: (any SyncDatabase) async throws -> Result) async throws -> Result {
        do {
            let result = try await body(database)
            await remove()
            return result
        } catch {
            await remove()
            throw error
        }
    }
}

extension Backend {
    /// Runs `body` with a new, empty database of this backend and throws it away afterwards.
    public func withDatabase<Result>(_ body: (TestDatabase) async throws -> Result) async throws -> Result {
        let test = try await makeDatabase()
        return try await test.use { _ in try await body(test) }
    }
}

extension TestDatabase {
    /// Runs `body` with another database object on the same file or URL, as another server
    /// process would open it, and closes it afterwards.
    public func withSecondProcess<Result>(_ body: (any SyncDatabase) async throws -> Result) async throws -> Result {
        guard let location else { throw PostgresTestServerError("this test database has no location") }
        if database is SQLiteSyncDatabase {
            return try await body(SQLiteSyncDatabase(path: location))
        }
        var logger = Logger(label: "amber-sync-tests")
        logger.logLevel = .critical
        let other = try await PostgresSyncDatabase(url: location, maximumConnections: 4, logger: logger)
        do {
            let result = try await body(other)
            await other.close()
            return result
        } catch {
            await other.close()
            throw error
        }
    }
}
