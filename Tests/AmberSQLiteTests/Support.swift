import Amber
import AmberSQLite
import AmberTestSupport
import Foundation

/// The value the writer process stores (same JSON shape as its own `Entry`).
struct Entry: Identifiable, Codable, Sendable, Equatable {
    let id: String
    let index: Int
    let payload: String
}

func temporaryDatabasePath() -> String {
    temporaryDirectory().appendingPathComponent("store.sqlite").path
}

/// The `amber-sqlite-writer` executable built beside the tests.
func writerExecutable() throws -> URL {
    builtExecutable(named: "amber-sqlite-writer")
}
