import Amber
import AmberSQLite
import Foundation
import GRDB

/// What an app would write by hand with GRDB: one table of JSON records, with the pragmas
/// `SQLiteStorage` uses (WAL, `synchronous = FULL`).
struct RawRecords {
    let database: DatabaseQueue
    let encoder = JSONEncoder()

    init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        database = try DatabaseQueue(path: path, configuration: configuration)
        try database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS records (
                        key TEXT NOT NULL, id TEXT NOT NULL, position INTEGER NOT NULL, value TEXT NOT NULL,
                        PRIMARY KEY (key, id)) WITHOUT ROWID
                    """)
        }
    }

    /// Inserts items in one transaction.
    func insert(_ items: some Sequence<Item>, startingAt position: Int) throws {
        try database.write { db in
            let insert = try db.cachedStatement(
                sql: "INSERT INTO records (key, id, position, value) VALUES (?, ?, ?, ?)")
            var position = position
            for item in items {
                position += 1
                let json = String(decoding: try encoder.encode(item), as: UTF8.self)
                try insert.execute(arguments: ["items", String(item.id), position, json])
            }
        }
    }
}

enum SQLiteWorkloads {
    static var batch: Comparison {
        let items = Item.samples(100_000)
        return Comparison(
            target: 1.5, rounds: 5,
            ours: {
                let directory = try ScratchDirectory()
                defer { directory.remove() }
                let store = try IdentityStore<Item>(
                    key: "items", storage: SQLiteStorage(path: directory.path("store.sqlite")))
                let elapsed = try await milliseconds { try store.add(contentsOf: items) }
                precondition(store.count == items.count, "sqlite-batch-100k stored \(store.count) items")
                return elapsed
            },
            baseline: {
                let directory = try ScratchDirectory()
                defer { directory.remove() }
                let records = try RawRecords(path: directory.path("raw.sqlite"))
                return try await milliseconds { try records.insert(items, startingAt: 0) }
            }
        )
    }

    static var single: Comparison {
        let items = Item.samples(1_000)
        return Comparison(
            target: 1.3, rounds: 5,
            ours: {
                let directory = try ScratchDirectory()
                defer { directory.remove() }
                let store = try IdentityStore<Item>(
                    key: "items", storage: SQLiteStorage(path: directory.path("store.sqlite")))
                return try await milliseconds { for item in items { try store.add(item) } }
            },
            baseline: {
                let directory = try ScratchDirectory()
                defer { directory.remove() }
                let records = try RawRecords(path: directory.path("raw.sqlite"))
                return try await milliseconds {
                    for (position, item) in items.enumerated() {
                        try records.insert(CollectionOfOne(item), startingAt: position)
                    }
                }
            }
        )
    }

    /// Opening a file of 100,000 values: the store loads and decodes them all, as the baseline does by hand.
    static var open: Comparison {
        let fixture = OpenFixture(count: 100_000)
        return Comparison(
            target: 1.5, rounds: 5,
            ours: {
                let path = try fixture.path()
                var store: IdentityStore<Item>?
                let elapsed = try await milliseconds {
                    store = try IdentityStore<Item>(key: "items", storage: SQLiteStorage(path: path))
                }
                precondition(store?.count == fixture.count, "sqlite-open-100k opened \(store?.count ?? 0) items")
                return elapsed
            },
            baseline: {
                let path = try fixture.path()
                var items: [Item] = []
                let elapsed = try await milliseconds {
                    var configuration = Configuration()
                    configuration.busyMode = .timeout(10)
                    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
                    let database = try DatabaseQueue(path: path, configuration: configuration)
                    let decoder = JSONDecoder()
                    items = try database.read { db in
                        try String.fetchAll(
                            db, sql: "SELECT value FROM amber_records WHERE key = ? ORDER BY position",
                            arguments: ["items"]
                        ).map { try decoder.decode(Item.self, from: Data($0.utf8)) }
                    }
                }
                precondition(items.count == fixture.count, "sqlite-open-100k baseline read \(items.count) items")
                return elapsed
            },
            tearDown: { fixture.remove() }
        )
    }
}

/// A database file holding `count` items written by the store, made on first use.
@MainActor
final class OpenFixture {
    let count: Int
    private var directory: ScratchDirectory?

    nonisolated init(count: Int) {
        self.count = count
    }

    func path() throws -> String {
        if let directory { return directory.path("store.sqlite") }
        let directory = try ScratchDirectory()
        let path = directory.path("store.sqlite")
        try IdentityStore<Item>(key: "items", storage: SQLiteStorage(path: path)).add(contentsOf: Item.samples(count))
        self.directory = directory
        return path
    }

    func remove() {
        directory?.remove()
        directory = nil
    }
}
