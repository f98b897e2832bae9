import GRDB

/// Notices commits that other processes make to the same SQLite file, and signals the change
/// notifier for each user whose records they changed, so that pulls waiting in this process
/// wake up for pushes served by another `amber-sync serve` on the same file.
///
/// It polls one read-only connection: `PRAGMA data_version` tells cheaply whether anyone else
/// committed, and only then are the users' version counters read.
final class ExternalCommitWatcher: Sendable {
    private let polling: Task<Void, Never>

    /// Starts watching the file at `path`.
    init(path: String, notifier: ChangeNotifier, interval: Duration) throws {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(1)
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        // The state at start, read before returning, so a commit right after is not taken for it.
        let start = try connection.read { db in try (Self.dataVersion(db), Self.userVersions(db)) }
        polling = Task.detached {
            var (dataVersion, userVersions) = start
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                do {
                    let newDataVersion = try await connection.read { db in try Self.dataVersion(db) }
                    guard newDataVersion != dataVersion else { continue }
                    let newUserVersions = try await connection.read { db in try Self.userVersions(db) }
                    for (userID, version) in newUserVersions where version > userVersions[userID, default: 0] {
                        notifier.notify(userID: userID)
                    }
                    (dataVersion, userVersions) = (newDataVersion, newUserVersions)
                } catch {
                    // A busy or briefly unreadable file: look again next time.
                }
            }
        }
    }

    /// A number that changes whenever another connection commits to the file.
    private static func dataVersion(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0
    }

    /// Each user's last version.
    private static func userVersions(_ db: Database) throws -> [Int64: Int64] {
        var versions: [Int64: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, version FROM users") {
            versions[row[0]] = row[1]
        }
        return versions
    }

    deinit {
        polling.cancel()
    }
}
