import Amber
import AmberSQLite
import AmberSync
import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Two `amber-sync serve` processes on one database, as behind a load balancer: a client on
/// each converges, and a pull waiting on one wakes soon after a push to the other (within a
/// second on PostgreSQL).
@Suite(.serialized) struct TwoServerProcessesTests {
    @Test(arguments: Backend.allCases)
    func clientsOnTwoServerProcessesConvergeAndWakeEachOther(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let location = try #require(test.location)
            let token = try await test.database.addUser(named: "ann")
            let first = try Child("amber-sync", ["serve", "--port", "0", "--database", location])
            defer { first.kill() }
            let second = try Child("amber-sync", ["serve", "--port", "0", "--database", location])
            defer { second.kill() }
            let firstURL = try await Self.address(of: first)
            let secondURL = try await Self.address(of: second)
            #expect(firstURL != secondURL)

            // Each phone talks to its own server process.
            let day = try Device(server: firstURL, token: token)
            let night = try Device(server: secondURL, token: token)
            let shared = note("written on the day phone")
            try day.notes.add(shared)
            try day.notes.add(note("another"))
            try night.notes.add(note("written on the night phone"))
            try await day.client.sync()
            try await night.client.sync()
            try night.notes.update(id: shared.id) { $0.with(pinned: true) }
            try day.notes.update(id: shared.id) { $0.with(text: "edited on the day phone") }
            try await night.client.sync()
            try await day.client.sync()
            try await night.client.sync()
            #expect(day.notes.count == 3)
            #expect(Set(day.notes.all) == Set(night.notes.all))
            #expect(night.notes[id: shared.id]?.pinned == true)
            #expect(night.notes[id: shared.id]?.text == "edited on the day phone")

            // A pull waiting on the second process, woken by a push to the first.
            var cursor = try await Self.pull(secondURL, token: token, cursor: 0, wait: 0).cursor
            for round in 1...5 {
                let clock = ContinuousClock()
                let from = cursor
                async let waiting = Self.pull(secondURL, token: token, cursor: from, wait: 20)
                try await Task.sleep(for: .milliseconds(300))
                let written = note("round \(round)")
                try day.notes.add(written)
                try await day.client.sync()
                let pushed = clock.now
                let page = try await waiting
                let latency = pushed.duration(to: clock.now)
                #expect(page.changes.map(\.id) == [written.id.uuidString], "round \(round)")
                #expect(
                    latency < backend.crossProcessWakeLimit,
                    "round \(round): the waiting pull answered \(latency) after the push"
                )
                cursor = page.cursor
            }

            // And a started client on the second process sees writes through the first.
            night.client.start()
            try await Task.sleep(for: .milliseconds(300))
            let live = note("live")
            try day.notes.add(live)
            try await day.client.sync()
            let limit = Double(backend.crossProcessWakeLimit.components.seconds)
            #expect(await eventually(within: limit) { night.notes[id: live.id] != nil })
            await night.client.stop()
        }
    }

    /// The address a `serve` process printed.
    private static func address(of child: Child) async throws -> URL {
        let line = try #require(await child.line(startingWith: "listening on "), "the server did not start")
        return try #require(URL(string: String(line.dropFirst("listening on ".count))))
    }

    /// One `GET /v1/pull`, decoded.
    private static func pull(_ server: URL, token: String, cursor: Int64, wait: Int) async throws -> PullResponse {
        var request = URLRequest(url: server.appendingPathComponent("v1/pull"))
        request.url = URL(string: "\(server.absoluteString)/v1/pull?cursor=\(cursor)&wait=\(wait)")
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.timeoutInterval = 60
        let data: Data = try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else if let data, (response as? HTTPURLResponse)?.statusCode == 200 {
                    continuation.resume(returning: data)
                } else {
                    continuation.resume(throwing: SyncTestError("pull answered \(String(describing: response))"))
                }
            }.resume()
        }
        return try JSONDecoder().decode(PullResponse.self, from: data)
    }
}
