import AmberSyncServer
import ArgumentParser

/// The `--database` option shared by every command.
struct DatabaseOptions: ParsableArguments {
    @Option(help: "The SQLite database file; created when missing.")
    var database = "amber-sync.sqlite"

    /// Opens the database, refusing locations this build cannot serve.
    func open() throws -> SQLiteSyncDatabase {
        if database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") {
            throw CommandFailure("This build of amber-sync has no PostgreSQL backend yet; pass an SQLite file path.")
        }
        return try SQLiteSyncDatabase(path: database)
    }
}
