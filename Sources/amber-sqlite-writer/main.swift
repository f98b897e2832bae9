// A second process for the persistence tests and the crash benchmark: writes to an
// SQLiteStorage and prints the id of every write once it is acknowledged.
//
//   amber-sqlite-writer PATH KEY COUNT [PREFIX]   adds COUNT entries one by one, printing each id
import Amber
import AmberSQLite
import Foundation

struct Entry: Identifiable, Codable, Sendable, Equatable {
    let id: String
    let index: Int
    let payload: String
}

let arguments = CommandLine.arguments
guard arguments.count >= 4, let count = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: amber-sqlite-writer PATH KEY COUNT [PREFIX]\n".utf8))
    exit(2)
}
let prefix = arguments.count > 4 ? arguments[4] : "w"
do {
    let store = try IdentityStore<Entry>(key: arguments[2], storage: SQLiteStorage(path: arguments[1]))
    let payload = String(repeating: "x", count: 200)
    for index in 0..<count {
        let id = "\(prefix)-\(index)"
        try store.add(Entry(id: id, index: index, payload: payload))
        // Written straight to the descriptor, so the id is out before the next write starts.
        FileHandle.standardOutput.write(Data("\(id)\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("amber-sqlite-writer: \(error)\n".utf8))
    exit(1)
}
