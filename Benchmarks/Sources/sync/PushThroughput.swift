import Foundation
import GRDB

/// Single-record pushes over HTTP against the same row writes as raw single-statement
/// transactions on a database of the same backend.
enum PushThroughput {
    static func run(backend: Backend, pushes: Int, users: Int, rounds: Int, client: PushClient) async throws {
        // One user, `pushes` pushes from 10 clients. One user's pushes commit one after another
        // (its versions commit in order), so its target is looser.
        try await measure(
            backend: backend, figure: "push-one-user",
            name: "one user, \(pushes) single-record pushes from 10 concurrent clients",
            users: 1, clientsPerUser: 10, pushesPerClient: max(pushes / 10, 1), rounds: rounds, postgresTarget: 4,
            client: client)
        // `users` users, 100 pushes each, all at once.
        try await measure(
            backend: backend, figure: "push-many-users",
            name: "\(users) users x 100 single-record pushes, concurrently",
            users: users, clientsPerUser: 1, pushesPerClient: 100, rounds: rounds, postgresTarget: 2,
            client: client)
    }

    /// Measures one figure over `rounds` rounds, each of ours, the same pushes unstored and the
    /// baseline, one after another, and reports the medians: on a shared machine one round's
    /// times move by half from one run to the next. `postgresTarget` is its target ratio on
    /// PostgreSQL (none on SQLite).
    static func measure(
        backend: Backend, figure: String, name: String, users: Int, clientsPerUser: Int, pushesPerClient: Int,
        rounds: Int, postgresTarget: Double, client: PushClient
    ) async throws {
        var (oursRounds, serverCPURounds, unstoredRounds, unstoredCPURounds, baselineRounds) = (
            [Double](), [Double](), [Double](), [Double](), [Double]()
        )
        // The CPU this process (the load's client, or the baseline's writers) used meanwhile.
        var (clientCPURounds, baselineCPURounds) = ([Double](), [Double]())
        let total = users * clientsPerUser * pushesPerClient
        let clients = users * clientsPerUser
        for _ in 0..<max(rounds, 1) {
            let stored = try await pushLoad(
                backend: backend, users: users, clientsPerUser: clientsPerUser, pushesPerClient: pushesPerClient,
                storingPushes: true, client: client)
            let unstored = try await pushLoad(
                backend: backend, users: users, clientsPerUser: clientsPerUser, pushesPerClient: pushesPerClient,
                storingPushes: false, client: client)
            let baselineLocation = try await backend.newDatabase()
            let baselineCPU = Memory.cpuSeconds()
            baselineRounds.append(
                try await RawWrites.run(
                    backend: backend, location: baselineLocation, users: users, clients: clients,
                    writesPerClient: pushesPerClient))
            baselineCPURounds.append(Memory.cpuSeconds() - baselineCPU)
            clientCPURounds.append(stored.clientCPU)
            oursRounds.append(stored.seconds)
            serverCPURounds.append(stored.serverCPU)
            unstoredRounds.append(unstored.seconds)
            unstoredCPURounds.append(unstored.serverCPU)
        }
        let (ours, serverCPU) = (percentile(oursRounds, 0.5), percentile(serverCPURounds, 0.5))
        let (unstored, unstoredServerCPU) = (percentile(unstoredRounds, 0.5), percentile(unstoredCPURounds, 0.5))
        let baseline = percentile(baselineRounds, 0.5)
        let (clientCPU, baselineCPU) = (percentile(clientCPURounds, 0.5), percentile(baselineCPURounds, 0.5))
        let rounds = Double(oursRounds.count)
        report(
            "sync \(backend.kind.rawValue) push: \(name): \(format(ours)) s, \(Int(Double(total) / ours)) pushes/s; "
                + "baseline \(total) raw single-statement transactions from \(clients) writers: \(format(baseline)) s, "
                + "\(Int(Double(total) / baseline)) writes/s; ratio \(format(ours / baseline)) (target ≤ \(format(postgresTarget, 0)) on PostgreSQL); "
                + "server CPU \(format(serverCPU)) s, load client CPU \(format(clientCPU)) s, baseline writers' CPU "
                + "\(format(baselineCPU)) s; medians of \(oursRounds.count) rounds (ours \(list(oursRounds)) s, "
                + "baseline \(list(baselineRounds)) s)"
        )
        try benchmarkRun.record(
            figure, backend: backend,
            description: "\(name) over HTTP, against as many raw single-statement transactions from \(clients) writers "
                + "(medians of alternating rounds)",
            ours: ours, baseline: baseline, unit: "s", targetRatio: backend.kind == .postgres ? postgresTarget : nil,
            details: [
                "pushes": Double(total), "pushes_per_s": Double(total) / ours, "writes_per_s": Double(total) / baseline,
                "server_cpu_s": serverCPU, "client_cpu_s": clientCPU, "baseline_client_cpu_s": baselineCPU,
                "rounds": rounds,
            ])
        report(
            "sync \(backend.kind.rawValue) push: \(name), answered without storing: \(format(unstored)) s; "
                + "ratio to the baseline \(format(unstored / baseline)); server CPU \(format(unstoredServerCPU)) s")
        try benchmarkRun.record(
            figure + "-unstored", backend: backend,
            description:
                "the same pushes to a server that answers them without its database (`UnstoredPushes`: HTTP, tokens and JSON only), against the same raw transactions",
            ours: unstored, baseline: baseline, unit: "s", targetRatio: nil,
            details: [
                "pushes": Double(total), "pushes_per_s": Double(total) / unstored, "server_cpu_s": unstoredServerCPU,
                "rounds": rounds,
            ])
    }

    /// Runs the figure's pushes against a new server and returns their time and the CPU time the
    /// server process spent meanwhile (steadier than the time on a shared machine); with
    /// `storingPushes` false, against one that answers without storing (``UnstoredPushes``).
    static func pushLoad(
        backend: Backend, users: Int, clientsPerUser: Int, pushesPerClient: Int, storingPushes: Bool,
        client pushClient: PushClient
    ) async throws -> (seconds: Double, serverCPU: Double, clientCPU: Double) {
        let location = try await backend.newDatabase()
        let tokens = try await Backend.addUsers((0..<users).map { "user-\($0)" }, at: location)
        let server = try await ServerProcess.start(database: location, storingPushes: storingPushes)
        defer { server.stop() }
        let clients = users * clientsPerUser
        let url = server.url
        let tokenList = tokens

        // A connection for each client, opened and warmed (with the server), not measured.
        var connections: [HTTPConnection] = []
        switch pushClient {
        case .nio:
            for client in 0..<clients {
                let connection = try await HTTPConnection.connect(url)
                try await connection.pull(token: tokenList[client / clientsPerUser], cursor: 0, limit: 1)
                connections.append(connection)
            }
        case .asyncHTTPClient:
            try await concurrently(clients, width: clients) { client in
                _ = try await LoadClient.pull(url, token: tokenList[client / clientsPerUser], cursor: 0, limit: 1)
            }
        }
        let opened = connections
        defer { for connection in opened { connection.close() } }
        let cpuBefore = (server: Memory.cpuSeconds(of: server.pid), client: Memory.cpuSeconds())
        let start = ContinuousClock.now
        try await concurrently(clients, width: clients) { client in
            let token = tokenList[client / clientsPerUser]
            for push in 0..<pushesPerClient {
                let id = "c\(client)-\(push)"
                let (clientID, mutations) = (
                    "client-\(client)", [WireMutation.create(Int64(push + 1), id: id, index: push)]
                )
                let results =
                    switch pushClient {
                    case .nio: try await opened[client].push(token: token, clientID: clientID, mutations: mutations)
                    case .asyncHTTPClient:
                        try await LoadClient.push(url, token: token, clientID: clientID, mutations: mutations)
                    }
                guard results.first?.status == "applied" else { throw BenchmarkError("push \(id) was not applied") }
            }
        }
        return (
            seconds(since: start), Memory.cpuSeconds(of: server.pid) - cpuBefore.server,
            Memory.cpuSeconds() - cpuBefore.client
        )
    }
}

/// The baseline writes: one INSERT of a ~200-byte JSON row per transaction.
enum RawWrites {
    static func run(backend: Backend, location: String, users: Int, clients: Int, writesPerClient: Int) async throws
        -> Double
    {
        switch backend.kind {
        case .sqlite:
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            // The server's durability: WAL with synchronous = FULL.
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            let pool = try DatabasePool(path: location, configuration: configuration)
            defer { try? pool.close() }
            try await pool.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE records (
                            user_id INTEGER NOT NULL, collection TEXT NOT NULL, id TEXT NOT NULL,
                            version INTEGER NOT NULL, value TEXT, PRIMARY KEY (user_id, collection, id)
                        ) WITHOUT ROWID
                        """)
            }
            let start = ContinuousClock.now
            try await concurrently(clients, width: clients) { client in
                let user = client % users
                for write in 0..<writesPerClient {
                    let id = "c\(client)-\(write)"
                    let json = String(
                        decoding: try JSONEncoder().encode(WireValue.sample(id: id, index: write)), as: UTF8.self)
                    try await pool.write { db in
                        try db.execute(
                            sql:
                                "INSERT INTO records (user_id, collection, id, version, value) VALUES (?, 'notes', ?, ?, ?)",
                            arguments: [user, id, client * writesPerClient + write + 1, json])
                    }
                }
            }
            return seconds(since: start)
        case .postgres:
            return try await RawPostgres.writes(
                location, users: users, clients: clients, writesPerClient: writesPerClient)
        }
    }
}

/// The load's client of the push figures (`--push-client`).
enum PushClient: String, Sendable {
    /// ``HTTPConnection``: a keep-alive connection of each client, NIO's HTTP/1.1 codec and one handler.
    case nio
    /// ``LoadClient``: async-http-client's pool, as the other figures use.
    case asyncHTTPClient = "async-http-client"
}
