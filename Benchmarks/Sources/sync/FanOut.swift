import Foundation

/// Many pulls of one user waiting on one process, all woken by one write: the time from the
/// write's start to each pull's answer, and the server's resident memory meanwhile. The baseline
/// is one waiting pull woken the same way.
enum FanOut {
    static func run(backend: Backend, pulls: Int, writes: Int) async throws {
        let location = try await backend.newDatabase()
        let token = try await Backend.addUsers(["ann"], at: location)[0]
        let server = try await ServerProcess.start(database: location)
        defer { server.stop() }
        let url = server.url

        _ = try await LoadClient.push(
            url, token: token, clientID: "writer", mutations: [.create(1, id: "w0", index: 0)])
        _ = try await LoadClient.pull(url, token: token, cursor: 0)
        let idleMemory = server.residentMemory() ?? 0
        var mutationID: Int64 = 1

        /// One round: `count` pulls waiting at the current cursor, then one write; the latencies.
        func round(_ count: Int, memory: inout Int) async throws -> [Double] {
            let cursor = Int64(mutationID)
            let timings = Task { () -> [ContinuousClock.Instant] in
                try await withThrowingTaskGroup(of: ContinuousClock.Instant.self) { group in
                    for _ in 0..<count {
                        group.addTask {
                            let page = try await LoadClient.pull(url, token: token, cursor: cursor, wait: 60)
                            guard !page.changes.isEmpty else {
                                throw BenchmarkError("a waiting pull ended without the change")
                            }
                            return .now
                        }
                    }
                    var times: [ContinuousClock.Instant] = []
                    for try await time in group { times.append(time) }
                    return times
                }
            }
            try await Propagation.waitUntilParked(servers: [url], expected: [count])
            memory = max(memory, server.residentMemory() ?? 0)
            mutationID += 1
            let start = ContinuousClock.now
            _ = try await LoadClient.push(
                url, token: token, clientID: "writer",
                mutations: [.create(mutationID, id: "w\(mutationID)", index: Int(mutationID))])
            let times = try await timings.value
            return times.map { milliseconds(start.duration(to: $0)) }
        }

        var baselineMemory = 0
        var single: [Double] = []
        for _ in 0..<20 { single += try await round(1, memory: &baselineMemory) }
        var memory = 0
        var latencies: [Double] = []
        for _ in 0..<writes { latencies += try await round(pulls, memory: &memory) }
        memory = max(memory, server.residentMemory() ?? 0)

        let p50 = percentile(latencies, 0.5)
        let p99 = percentile(latencies, 0.99)
        let b50 = percentile(single, 0.5)
        let b99 = percentile(single, 0.99)
        let megabytes = { (bytes: Int) in format(Double(bytes) / 1_048_576, 1) }
        report(
            "sync \(backend.kind.rawValue) fan-out: \(pulls) pulls waiting on one process, woken by one write (\(writes) writes): "
                + "p50 \(format(p50, 1)) ms, p99 \(format(p99, 1)) ms, max \(format(latencies.max() ?? .nan, 1)) ms; "
                + "baseline one waiting pull (20 writes): p50 \(format(b50, 1)) ms, p99 \(format(b99, 1)) ms; ratio p99 \(format(p99 / b99)) "
                + "(target p99 ≤ 250 ms)")
        report(
            "sync \(backend.kind.rawValue) fan-out memory: server resident \(megabytes(memory)) MB with \(pulls) pulls waiting; "
                + "baseline idle \(megabytes(idleMemory)) MB; ratio \(format(Double(memory) / Double(max(idleMemory, 1)))) (target ≤ 200 MB)"
        )
        try benchmarkRun.record(
            "fan-out-p99", backend: backend,
            description: "\(pulls) pulls waiting on one server process, woken by one write (\(writes) writes): "
                + "99th percentile from the write's start to a pull's answer, against one waiting pull (20 writes)",
            ours: p99, baseline: b99, unit: "ms", targetOurs: 250,
            details: ["pulls": Double(pulls), "p50_ms": p50, "baseline_p50_ms": b50, "max_ms": latencies.max() ?? .nan])
        try benchmarkRun.record(
            "fan-out-memory", backend: backend,
            description: "the server's resident memory with \(pulls) pulls waiting, against the same process idle",
            ours: Double(memory) / 1_048_576, baseline: Double(idleMemory) / 1_048_576, unit: "MB", targetOurs: 200,
            details: ["pulls": Double(pulls)])
    }
}
