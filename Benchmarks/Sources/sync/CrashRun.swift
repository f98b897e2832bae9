import Amber
import Foundation

/// SIGKILLs of the server process while `clients` `SyncClient`s write and sync at once.
///
/// - lost: records a client wrote before a sync that succeeded (so the server had answered
///   them) and that the server lacks after the kills, before any further sync;
/// - applied twice: versions the server spent beyond one per record (every mutation creates
///   one record), plus mutations the clients saw answered `applied` more than once;
/// - converged: clients whose store holds exactly the server's records after two more syncs.
enum CrashRun {
    /// What one client wrote and had acknowledged.
    final class Tally: @unchecked Sendable {
        // @unchecked: touched only by its client's task until that task ends, then read.
        var written: [String] = []
        var acknowledged = 0
        var pushed = 0
        var failedSyncs = 0
    }

    static func run(backend: Backend, kills: Int, clients: Int) async throws {
        let location = try await backend.newDatabase()
        let token = try await Backend.addUsers(["ann"], at: location)[0]
        var server = try await ServerProcess.start(database: location)
        let port = server.port
        let url = server.url
        let devices = try (0..<clients).map { client in
            try Device(path: backend.scratchPath("crash-client-\(client).sqlite"), server: url, token: token)
        }
        let tallies = (0..<clients).map { _ in Tally() }
        let stop = Flag()

        let writing = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (device, tally) in zip(devices, tallies) {
                    group.addTask {
                        var index = 0
                        while !stop.isSet {
                            // A few local writes, then a sync that the kills may cut at any point.
                            for _ in 0..<Int.random(in: 1...5) {
                                let id = UUID().uuidString
                                try device.notes.add(
                                    BenchNote(
                                        id: id, text: "written before a sync, \(index)", tags: [],
                                        created: Double(index), modified: Double(index)))
                                tally.written.append(id)
                                index += 1
                            }
                            let before = tally.written.count
                            do {
                                let syncReport = try await device.client.sync()
                                tally.pushed += syncReport.pushed
                                tally.acknowledged = before
                            } catch {
                                tally.failedSyncs += 1
                                try await Task.sleep(for: .milliseconds(Int.random(in: 5...30)))
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }

        var killed = 0
        for _ in 0..<kills {
            try await Task.sleep(for: .milliseconds(Int.random(in: 50...400)))
            server.kill()
            if server.process.terminationReason == .uncaughtSignal, server.process.terminationStatus == SIGKILL {
                killed += 1
            }
            server = try await ServerProcess.restart(database: location, port: port)
        }
        stop.set()
        try await writing.value

        // What the server has now, before the clients sync again.
        let afterKills = try await LoadClient.pullAll(server.url, token: token)
        var lost = 0
        for tally in tallies {
            lost += tally.written.prefix(tally.acknowledged).filter { afterKills.ids[$0] == nil }.count
        }

        // Two more syncs each, then every store must equal the server.
        for _ in 0..<2 {
            for (device, tally) in zip(devices, tallies) { tally.pushed += try await device.client.sync().pushed }
        }
        let final = try await LoadClient.pullAll(server.url, token: token)
        server.stop()
        let written = tallies.reduce(0) { $0 + $1.written.count }
        let pushed = tallies.reduce(0) { $0 + $1.pushed }
        let extraVersions = Int(final.cursor) - final.ids.count
        let appliedTwice = max(extraVersions, 0) + max(pushed - written, 0)
        let serverIDs = Set(final.ids.keys)
        let converged = devices.filter { Set($0.notes.ids) == serverIDs }.count
        let missing = tallies.reduce(0) { sum, tally in sum + tally.written.filter { final.ids[$0] == nil }.count }
        let failed = tallies.reduce(0) { $0 + $1.failedSyncs }
        report(
            "sync \(backend.kind.rawValue) crash: \(killed) of \(kills) SIGKILLs of the server during syncs of \(clients) clients "
                + "(\(written) records written, \(failed) syncs cut): \(lost) acknowledged lost, \(appliedTwice) applied twice, "
                + "\(missing) written and missing at the end, \(converged) of \(clients) clients converged "
                + "(target 0 lost, 0 twice, all converged)")
        try benchmarkRun.record(
            "crash", backend: backend,
            description: "\(killed) SIGKILLs of the server during syncs of \(clients) clients: acknowledged records "
                + "lost (details: applied twice, missing at the end, clients converged)",
            ours: Double(lost), baseline: nil, unit: "records lost", target: "0 lost, 0 applied twice, all converged",
            met: killed == kills && lost == 0 && appliedTwice == 0 && missing == 0 && converged == clients,
            details: [
                "kills": Double(killed), "written": Double(written), "syncs_cut": Double(failed),
                "applied_twice": Double(appliedTwice), "missing": Double(missing), "converged": Double(converged),
                "clients": Double(clients),
            ])
        if killed != kills || lost != 0 || appliedTwice != 0 || missing != 0 || converged != clients {
            throw BenchmarkError("the crash check failed")
        }
    }
}

/// A flag set once, read from any task.
final class Flag: @unchecked Sendable {
    // @unchecked: `value` is only touched while `lock` is held.
    private let lock = NSLock()
    private var value = false

    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }
}
