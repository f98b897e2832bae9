import AmberLock
import AmberSyncProtocol
import Foundation
import GRDB

/// The embedded database of a sync server: one SQLite file, through GRDB.
///
/// The file runs in WAL mode with `synchronous = FULL`, so an answered push survives a crash
/// or a power loss. Each push is one transaction. Other processes may open the same file at the
/// same time: `amber-sync user add` and `token revoke` take effect at once in a running server,
/// which looks tokens up on every request, and several `amber-sync serve` processes can share
/// one file: a push served by one wakes the pulls waiting in the others. On Linux a server
/// hears of another's commit as its writes reach the file (inotify on the file's folder),
/// typically within a few milliseconds; elsewhere it looks every ``externalCommitCheckInterval``.
///
/// ```swift
/// let database = try SQLiteSyncDatabase(path: "amber-sync.sqlite")
/// let token = try await database.addUser(named: "ann")
/// let server = SyncServer(database: database, port: 0, logger: Logger(label: "sync"))
/// ```
public final class SQLiteSyncDatabase: SyncDatabase {
    /// The path of the database file.
    public let path: String
    /// Wakes pulls waiting for a user's changes, pushed through this process or another one on the same file.
    public let changeNotifier = ChangeNotifier()
    let pool: DatabasePool
    /// ``databaseID()``, once read.
    let identity = LockedValue<String?>(nil)
    private let externalCommits: ExternalCommitWatcher

    /// Opens the database at `path`, creating it when missing, and brings its schema up to date.
    ///
    /// - Parameter path: The database file; its folder must exist.
    /// - Throws: ``SyncServerError/schemaTooNew(path:found:supported:)`` when a newer server wrote
    ///   the file, ``SyncServerError/notASyncDatabase(path:reason:)`` when the file is something
    ///   else (both leave the file untouched), or a GRDB `DatabaseError` when SQLite fails.
    public convenience init(path: String) throws {
        try self.init(path: path, watchesFileEvents: true)
    }

    /// Opens the database at `path`; with `watchesFileEvents` false, other processes' commits are
    /// looked for every ``externalCommitCheckInterval`` only, as on platforms without inotify.
    package init(path: String, watchesFileEvents: Bool) throws {
        self.path = path
        // Look before opening for writing: opening switches the file to WAL mode, which writes to it.
        if FileManager.default.fileExists(atPath: path) {
            try Self.checkSchema(ofExistingFileAt: path)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in try Self.migrate(db, path: path) }
        externalCommits = try ExternalCommitWatcher(
            path: path, notifier: changeNotifier, fallbackInterval: Self.externalCommitCheckInterval,
            fileEvents: watchesFileEvents
        )
    }

    /// How often the file is checked for pushes committed by other processes, so pulls waiting
    /// here wake up for them too, where file events do not tell when: on platforms other than
    /// Linux, or when inotify is unavailable (its limits reached). With file events the file is
    /// checked as it is written, and every second besides.
    public static let externalCommitCheckInterval = Duration.milliseconds(250)

    /// Whether this process hears of other processes' commits through file events (inotify), rather
    /// than by checking every ``externalCommitCheckInterval``.
    package var watchesFileEvents: Bool { externalCommits.usesFileEvents }

    /// Brings the schema up to date; ``init(path:)`` already did, so this finds nothing to do
    /// unless another process changed the file since.
    ///
    /// - Throws: ``SyncServerError/schemaTooNew(path:found:supported:)`` when a newer server wrote the file.
    public func migrate() async throws {
        let path = self.path
        try await pool.write { db in try Self.migrate(db, path: path) }
    }

    private static func checkSchema(ofExistingFileAt path: String) throws {
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            _ = try queue.read { db in try schemaVersion(db, path: path) }
        } catch let error as SyncServerError {
            throw error
        } catch let error as DatabaseError {
            throw SyncServerError.notASyncDatabase(path: path, reason: error.message ?? "\(error.resultCode)")
        }
    }
}
