import AmberSyncPostgres
import AmberSyncServer
import ArgumentParser
import Logging

/// The `--database` option shared by every command.
struct DatabaseOptions: ParsableArguments {
    @Option(
        help: """
            The SQLite database file (created when missing), or a PostgreSQL database as \
            postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE (tables created when missing).
            """
    )
    var database = "amber-sync.sqlite"

    /// Whether `--database` names a PostgreSQL database rather than an SQLite file.
    var isPostgres: Bool {
        database.hasPrefix("postgres://") || database.hasPrefix("postgresql://")
    }

    /// A logger for the one-shot commands: only errors, so their output stays one line.
    static var quietLogger: Logger {
        var logger = Logger(label: "amber-sync")
        logger.logLevel = .error
        return logger
    }

    /// Opens the database, runs `body` with it, and closes it.
    func withDatabase<Result>(
        logger: Logger = Self.quietLogger,
        _ body: (any SyncDatabase) async throws -> Result
    ) async throws -> Result {
        guard isPostgres else {
            return try await body(SQLiteSyncDatabase(path: database))
        }
        let postgres = try await PostgresSyncDatabase(url: database, logger: logger)
        do {
            let result = try await body(postgres)
            await postgres.close()
            return result
        } catch {
            await postgres.close()
            throw error
        }
    }
}
