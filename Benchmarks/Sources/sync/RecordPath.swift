import Amber
import AmberSQLite
import AmberSync
import AmberSyncServer
import Foundation
import GRDB
import PostgresNIO

/// A phone that had notes before its user signed in: its first sync pushes them all, against
/// writing the same JSON into the server's database raw. Each round pushes to a new server and
/// database and writes the baseline into a new table; the figure is the ratio of the medians, as
/// for the push figures: one round's ratio moves by a third from one run to the next here.
enum FirstPush {
    static func run(backend: Backend, records: Int, rounds: Int) async throws {
        var (oursRounds, baselineRounds, clientCPURounds, serverCPURounds) = (
            [Double](), [Double](), [Double](), [Double]()
        )
        for round in 0..<max(rounds, 1) {
            let pushed = try await pushOnce(backend: backend, records: records, round: round)
            oursRounds.append(pushed.seconds)
            clientCPURounds.append(pushed.clientCPU)
            serverCPURounds.append(pushed.serverCPU)
            baselineRounds.append(try await RawServerInsert.insert(pushed.rows, backend: backend, round: round))
        }
        let (ours, baseline) = (percentile(oursRounds, 0.5), percentile(baselineRounds, 0.5))
        let (clientCPU, serverCPU) = (percentile(clientCPURounds, 0.5), percentile(serverCPURounds, 0.5))
        report(
            "sync \(backend.kind.rawValue) first-push: \(records) local records pushed by a client's first sync in "
                + "\(format(ours)) s (\(format(ours / Double(records) * 1e6, 1)) µs a record); baseline raw insert of the "
                + "same JSON into a table like the server's, one transaction, \(format(baseline)) s; ratio "
                + "\(format(ours / baseline)) (target ≤ 3); CPU: client \(format(clientCPU)) s, server \(format(serverCPU)) s; "
                + "medians of \(oursRounds.count) rounds (ours \(list(oursRounds)) s, baseline \(list(baselineRounds)) s)"
        )
        try benchmarkRun.record(
            "first-push", backend: backend,
            description: "\(records) local records pushed by a client's first sync, against a raw insert of the "
                + "same JSON into a table like the server's, in one transaction (medians of alternating rounds)",
            ours: ours, baseline: baseline, unit: "s", targetRatio: 3,
            details: [
                "records": Double(records), "µs_a_record": ours / Double(records) * 1e6, "client_cpu_s": clientCPU,
                "server_cpu_s": serverCPU, "rounds": Double(oursRounds.count),
            ])
    }

    /// One round: a new server and database, a new client store of `records` notes, its first
    /// sync timed; the store's rows, for the baseline.
    private static func pushOnce(backend: Backend, records: Int, round: Int) async throws -> (
        seconds: Double, clientCPU: Double, serverCPU: Double, rows: [(String, String, String)]
    ) {
        let location = try await backend.newDatabase()
        let token = try await Backend.addUsers(["ann"], at: location)[0]
        let server = try await ServerProcess.start(database: location)
        defer { server.stop() }

        // The notes, written before the store is synced.
        let path = backend.scratchPath("client-\(round).sqlite")
        let storage = try SQLiteStorage(path: path)
        let notes = try IdentityStore<BenchNote>(key: "notes", storage: storage)
        try notes.add(
            contentsOf: (0..<records).map { index in
                let sample = WireValue.sample(id: UUID().uuidString, index: index)
                return BenchNote(
                    id: sample.id, text: sample.text, tags: sample.tags, created: sample.created,
                    modified: sample.modified)
            })
        // The same JSON the client pushes: the store's records.
        var readOnly = Configuration()
        readOnly.readonly = true
        let file = try DatabaseQueue(path: path, configuration: readOnly)
        let rows = try await file.read { db in
            try Row.fetchAll(db, sql: "SELECT id, value FROM amber_records WHERE key = 'notes'").map {
                (row: Row) -> (String, String, String) in ("notes", row[0], row[1])
            }
        }
        try file.close()
        let client = try SyncClient(storage: storage, server: URL(string: server.url)!, token: token)
        try client.add(notes)

        let cpuBefore = (client: Memory.cpuSeconds(), server: Memory.cpuSeconds(of: server.pid))
        let start = ContinuousClock.now
        let syncReport = try await client.sync()
        let elapsed = seconds(since: start)
        let cpu = (
            client: Memory.cpuSeconds() - cpuBefore.client, server: Memory.cpuSeconds(of: server.pid) - cpuBefore.server
        )
        guard syncReport.pushed == records else {
            throw BenchmarkError("the first sync pushed \(syncReport.pushed) records, not \(records)")
        }
        return (elapsed, cpu.client, cpu.server, rows)
    }
}

/// Raw writes of `(collection, id, json)` rows into a table shaped like the server's records.
enum RawServerInsert {
    static func insert(_ rows: [(String, String, String)], backend: Backend, round: Int) async throws -> Double {
        switch backend.kind {
        case .sqlite:
            let queue = try DatabaseQueue(path: backend.scratchPath("raw-server-\(round).sqlite"))
            defer { try? queue.close() }
            try await queue.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE records (
                            user_id INTEGER NOT NULL, collection TEXT NOT NULL, id TEXT NOT NULL,
                            version INTEGER NOT NULL, value TEXT, PRIMARY KEY (user_id, collection, id)) WITHOUT ROWID;
                        CREATE UNIQUE INDEX records_by_version ON records(user_id, version);
                        """)
            }
            let start = ContinuousClock.now
            try await queue.write { db in
                let insert = try db.cachedStatement(
                    sql: "INSERT INTO records (user_id, collection, id, version, value) VALUES (1, ?, ?, ?, ?)")
                for (offset, row) in rows.enumerated() {
                    try insert.execute(arguments: [row.0, row.1, offset + 1, row.2])
                }
            }
            return seconds(since: start)
        case .postgres:
            let location = try await backend.newDatabase()
            return try await RawPostgres.withClient(location, connections: 1) { client in
                try await client.query(
                    """
                    CREATE TABLE raw_records (
                        user_id bigint NOT NULL, collection text NOT NULL, id text NOT NULL,
                        version bigint NOT NULL, value text, PRIMARY KEY (user_id, collection, id))
                    """, logger: RawPostgres.logger)
                // The index the server's table keeps for pulls, as on SQLite.
                try await client.query(
                    "CREATE UNIQUE INDEX raw_records_by_version ON raw_records(user_id, version)",
                    logger: RawPostgres.logger)
                let start = ContinuousClock.now
                try await client.withTransaction(logger: RawPostgres.logger) { connection in
                    // In statements of 1,000 rows, as arrays: one round trip each.
                    for first in stride(from: 0, to: rows.count, by: 1_000) {
                        let batch = rows[first..<min(first + 1_000, rows.count)]
                        let collections = batch.map(\.0)
                        let ids = batch.map(\.1)
                        let values = batch.map(\.2)
                        let versions = batch.indices.map { Int64($0 + 1) }
                        try await connection.query(
                            """
                            INSERT INTO raw_records (user_id, collection, id, version, value)
                            SELECT 1, * FROM unnest(\(collections)::text[], \(ids)::text[], \(versions)::bigint[], \(values)::text[])
                            """, logger: RawPostgres.logger)
                    }
                }
                return seconds(since: start)
            }
        }
    }
}

/// One pull page of 1,000 records read by the server's database layer, against reading the same
/// rows raw.
enum PageRead {
    static func run(backend: Backend, records: Int) async throws {
        let location = try await backend.newDatabase()
        let database = try await Backend.open(location)
        let token = try await database.addUser(named: "ann")
        let server = try await ServerProcess.start(database: location)
        _ = try await seed(records, to: server.url, token: token)
        server.stop()
        guard let user = try await database.user(forToken: token) else { throw BenchmarkError("no user") }
        let pages = records / 1_000
        let cursors = (0..<pages).map { Int64($0 * 1_000) }
        // Each side reads every page once before the clock starts: both run on a warm cache.
        for cursor in cursors { _ = try await database.pull(for: user, after: cursor, limit: 1_000) }
        let raw = try await RawPage(backend: backend, location: location, userID: user.id)
        for cursor in cursors { _ = try await raw.read(after: cursor) }

        var ours: [Double] = []
        var baseline: [Double] = []
        for _ in 0..<5 {
            for cursor in cursors {
                let start = ContinuousClock.now
                let page = try await database.pull(for: user, after: cursor, limit: 1_000)
                ours.append(seconds(since: start))
                guard page.changes.count == 1_000 else { throw BenchmarkError("a page of \(page.changes.count)") }
                let rawStart = ContinuousClock.now
                let rows = try await raw.read(after: cursor)
                baseline.append(seconds(since: rawStart))
                guard rows == 1_000 else { throw BenchmarkError("a raw page of \(rows)") }
            }
        }
        try await raw.close()
        let (oursMedian, baselineMedian) = (percentile(ours, 0.5), percentile(baseline, 0.5))
        report(
            "sync \(backend.kind.rawValue) page: one pull page of 1,000 records read by the server's database layer in "
                + "\(format(oursMedian * 1e3)) ms (median of \(ours.count)); baseline the same rows read raw "
                + "\(format(baselineMedian * 1e3)) ms; ratio \(format(oursMedian / baselineMedian)) (target ≤ 2)"
        )
        try benchmarkRun.record(
            "page", backend: backend,
            description: "one pull page of 1,000 records read by the server's database layer (median of "
                + "\(ours.count)), against the same rows read with the database's own API",
            ours: oursMedian * 1e3, baseline: baselineMedian * 1e3, unit: "ms", targetRatio: 2,
            details: ["records": Double(records)])
    }
}

/// The raw read of one page: the rows the server's pull reads, with the database's own API.
struct RawPage {
    let backend: Backend
    let queue: DatabaseQueue?
    let client: PostgresClient?
    let running: Task<Void, Never>?
    let userID: Int64

    init(backend: Backend, location: String, userID: Int64) async throws {
        self.backend = backend
        self.userID = userID
        switch backend.kind {
        case .sqlite:
            var configuration = Configuration()
            configuration.readonly = true
            queue = try DatabaseQueue(path: location, configuration: configuration)
            (client, running) = (nil, nil)
        case .postgres:
            let client = PostgresClient(
                configuration: try RawPostgres.configuration(location), backgroundLogger: RawPostgres.logger)
            running = Task { await client.run() }
            self.client = client
            queue = nil
        }
    }

    /// Reads the 1,000 records after `cursor`; returns how many.
    func read(after cursor: Int64) async throws -> Int {
        if let queue {
            return try await queue.read { db in
                var count = 0
                let rows = try Row.fetchCursor(
                    db,
                    sql: """
                        SELECT collection, id, version, value FROM amber_sync_records
                        WHERE user_id = ? AND version > ? ORDER BY version LIMIT 1000
                        """,
                    arguments: [userID, cursor])
                while let row = try rows.next() {
                    let value: String? = row[3]
                    count += value == nil ? 0 : 1
                }
                return count
            }
        }
        guard let client else { return 0 }
        let rows = try await client.query(
            """
            SELECT collection, id, version, value FROM amber_sync_records
            WHERE user_id = \(userID) AND version > \(cursor) ORDER BY version LIMIT 1000
            """, logger: RawPostgres.logger)
        var count = 0
        for try await (_, _, _, value) in rows.decode((String, String, Int64, String?).self) {
            count += value == nil ? 0 : 1
        }
        return count
    }

    func close() async throws {
        try queue?.close()
        running?.cancel()
    }
}
