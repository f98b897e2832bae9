import AmberSyncServer
import AmberTestSupport
import Foundation
import Testing

/// A database backend the protocol tests run against; a PostgreSQL backend joins as another case.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite

    var testDescription: String { rawValue }

    /// A new, empty database of this backend, and a way to throw it away.
    func makeDatabase() throws -> TestDatabase {
        switch self {
        case .sqlite:
            let directory = temporaryDirectory()
            let database = try SQLiteSyncDatabase(path: directory.appendingPathComponent("sync.sqlite").path)
            return TestDatabase(database: database) { try? FileManager.default.removeItem(at: directory) }
        }
    }
}

/// A database made for one test.
struct TestDatabase: Sendable {
    let database: any SyncDatabase
    let remove: @Sendable () -> Void
}
