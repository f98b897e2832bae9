import Foundation

/// When each change id reached a receiver.
final class Arrivals: @unchecked Sendable {
    // @unchecked: `times` is only touched while `lock` is held.
    private let lock = NSLock()
    private var times: [String: ContinuousClock.Instant] = [:]

    func record(_ ids: [String], at time: ContinuousClock.Instant) {
        lock.lock()
        for id in ids where times[id] == nil { times[id] = time }
        lock.unlock()
    }

    func time(of id: String) -> ContinuousClock.Instant? {
        lock.lock()
        defer { lock.unlock() }
        return times[id]
    }
}

/// One change pushed through server A reaching a long-polling client on server B (another
/// process on the same database), with other clients waiting; the baseline is the same change
/// reaching a long-polling client on A itself.
enum Propagation {
    static func run(backend: Backend, changes: Int, waiting: Int) async throws {
        let location = try await backend.newDatabase()
        let tokens = try await Backend.addUsers(["ann"] + (0..<waiting).map { "other-\($0)" }, at: location)
        let token = tokens[0]
        let others = Array(tokens.dropFirst())
        let a = try await ServerProcess.start(database: location)
        defer { a.stop() }
        let b = try await ServerProcess.start(database: location)
        defer { b.stop() }
        let servers = [a.url, b.url]
        let otherTokens = others

        let sameProcess = Arrivals()
        let otherProcess = Arrivals()
        let listening = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Other users' clients, waiting on both processes: they are never woken.
                for (index, other) in otherTokens.enumerated() {
                    group.addTask {
                        while !Task.isCancelled {
                            _ = try await LoadClient.pull(servers[index % 2], token: other, cursor: 0, wait: 60)
                        }
                    }
                }
                for (server, arrivals) in [(a.url, sameProcess), (b.url, otherProcess)] {
                    group.addTask {
                        var cursor: Int64 = 0
                        while !Task.isCancelled {
                            let page = try await LoadClient.pull(server, token: token, cursor: cursor, wait: 30)
                            arrivals.record(page.changes.map(\.id), at: .now)
                            cursor = page.cursor
                        }
                    }
                }
                _ = try await group.next()
            }
        }
        defer { listening.cancel() }

        // Each process holds its half of the other clients and one receiver before every change.
        let expected = [waiting - waiting / 2 + 1, waiting / 2 + 1]
        var crossing: [Double] = []
        var local: [Double] = []
        for change in 0..<changes {
            // A change comes at a random moment, not in step with the other process's polling.
            try await Task.sleep(for: .microseconds(Int.random(in: 0..<250_000)))
            try await waitUntilParked(servers: servers, expected: expected)
            let id = "p\(change)"
            let start = ContinuousClock.now
            _ = try await LoadClient.push(
                a.url, token: token, clientID: "writer", mutations: [.create(Int64(change + 1), id: id, index: change)])
            let deadline = start + .seconds(10)
            while sameProcess.time(of: id) == nil || otherProcess.time(of: id) == nil {
                guard ContinuousClock.now < deadline else {
                    throw BenchmarkError("change \(id) did not arrive within 10 s")
                }
                try await Task.sleep(for: .microseconds(200))
            }
            local.append(milliseconds(start.duration(to: sameProcess.time(of: id)!)))
            crossing.append(milliseconds(start.duration(to: otherProcess.time(of: id)!)))
        }
        let p50 = percentile(crossing, 0.5)
        let p99 = percentile(crossing, 0.99)
        let b50 = percentile(local, 0.5)
        let b99 = percentile(local, 0.99)
        report(
            "sync \(backend.kind.rawValue) propagation: \(changes) changes pushed through one process reaching a client "
                + "long-polling on the other, \(waiting) other clients waiting: p50 \(format(p50, 1)) ms, p99 \(format(p99, 1)) ms, "
                + "max \(format(crossing.max() ?? .nan, 1)) ms; baseline (a client on the same process): p50 \(format(b50, 1)) ms, "
                + "p99 \(format(b99, 1)) ms; ratios p50 \(format(p50 / b50)), p99 \(format(p99 / b99)) (target p50 ≤ 20 ms, p99 ≤ 100 ms)"
        )
        let description =
            "\(changes) changes pushed through one server process reaching a client long-polling on the other, "
            + "\(waiting) other clients waiting, against a client on the process that took the push"
        let details = ["changes": Double(changes), "max_ms": crossing.max() ?? .nan]
        try benchmarkRun.record(
            "propagation-p50", backend: backend, description: description, ours: p50, baseline: b50, unit: "ms",
            targetOurs: 20, details: details)
        try benchmarkRun.record(
            "propagation-p99", backend: backend, description: description, ours: p99, baseline: b99, unit: "ms",
            targetOurs: 100, details: details)
    }

    /// Waits until each server holds `expected` waiting pulls (its `/metrics` gauge).
    static func waitUntilParked(servers: [String], expected: [Int]) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        for (server, count) in zip(servers, expected) {
            while try await LoadClient.metrics(server)["amber_sync_waiting_pulls"].map(Int.init) ?? 0 < count {
                guard ContinuousClock.now < deadline else {
                    throw BenchmarkError("\(server) did not hold \(count) waiting pulls within 30 s")
                }
                try await Task.sleep(for: .milliseconds(1))
            }
        }
    }
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
}
