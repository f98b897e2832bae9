// A second process for the persistence tests and the crash benchmark.
//
//   amber-sqlite-writer PATH KEY COUNT [PREFIX]            adds COUNT entries one by one, printing each id
//   amber-sqlite-writer PATH KEY increment ID COUNT        adds 1 to the index of entry ID, COUNT times
//   amber-sqlite-writer files:DIR KEY ...                  the same on a FileStorage in DIR
//   amber-sqlite-writer defaults:SUITE KEY ...             the same on a UserDefaultsStorage
//
// Each write is printed once it is acknowledged.
import Amber
import AmberSQLite
import Foundation

struct Entry: Identifiable, Codable, Sendable, Equatable {
    let id: String
    let index: Int
    let payload: String
}

func storage(_ location: String) throws -> any StoreStorage {
    if location.hasPrefix("files:") {
        return FileStorage(directory: URL(fileURLWithPath: String(location.dropFirst(6))))
    }
    if location.hasPrefix("defaults:") { return UserDefaultsStorage(suiteName: String(location.dropFirst(9))) }
    return try SQLiteStorage(path: location)
}

func say(_ line: String) {
    // Written straight to the descriptor, so the line is out before the next write starts.
    FileHandle.standardOutput.write(Data("\(line)\n".utf8))
}

let arguments = CommandLine.arguments

/// The writes, off the main queue: a store gives writes made on the main actor only a short wait
/// for another process's lock (so a UI never freezes), and this process is a background writer.
func write() {
    do {
        if arguments.count == 6, arguments[3] == "increment", let count = Int(arguments[5]) {
            let store = try IdentityStore<Entry>(key: arguments[2], storage: storage(arguments[1]))
            for _ in 0..<count {
                let updated = try store.update(id: arguments[4]) {
                    Entry(id: $0.id, index: $0.index + 1, payload: $0.payload)
                }
                say("\(updated?.index ?? -1)")
            }
        } else if arguments.count >= 4, let count = Int(arguments[3]) {
            let prefix = arguments.count > 4 ? arguments[4] : "w"
            let store = try IdentityStore<Entry>(key: arguments[2], storage: storage(arguments[1]))
            let payload = String(repeating: "x", count: 200)
            for index in 0..<count {
                let id = "\(prefix)-\(index)"
                try store.add(Entry(id: id, index: index, payload: payload))
                say(id)
            }
        } else {
            FileHandle.standardError.write(
                Data("usage: amber-sqlite-writer LOCATION KEY COUNT [PREFIX] | LOCATION KEY increment ID COUNT\n".utf8))
            exit(2)
        }
    } catch {
        FileHandle.standardError.write(Data("amber-sqlite-writer: \(error)\n".utf8))
        exit(1)
    }
}

DispatchQueue.global().sync(execute: write)
