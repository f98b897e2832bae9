import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Logging
import ServiceLifecycle
import Testing

@Suite(.boundedConcurrency) struct SyncServerTests {
    @Test(arguments: Backend.allCases)
    func aServerOnPort0ReportsItsPortServesAndStopsWhenCancelled(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let token = try await test.database.addUser(named: "ann")
            let logger = Logger.quietTests
            let server = SyncServer(database: test.database, port: 0, logger: logger)
            let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
            let running = Task { try await server.run { port in continuation.yield(port) } }

            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            #expect(port > 0)
            let base = URL(string: "http://127.0.0.1:\(port)")!

            let health = try await httpRequest(base.appendingPathComponent("v1/health"))
            #expect(health.status == 200)
            #expect(try JSONDecoder().decode(HealthResponse.self, from: health.body) == HealthResponse())

            // A long-poll over a real connection is woken by a push over another.
            async let waiting = httpRequest(
                URL(string: "http://127.0.0.1:\(port)/v1/pull?cursor=0&wait=20")!, token: token)
            try await Task.sleep(for: .milliseconds(300))
            let push = PushRequest(
                clientID: "c",
                mutations: [
                    Mutation(mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: ["a": .integer(1)])
                ]
            )
            let pushed = try await httpRequest(
                base.appendingPathComponent("v1/push"), method: "POST", token: token,
                body: try JSONEncoder().encode(push)
            )
            #expect(pushed.status == 200)
            let pulled = try await waiting
            #expect(pulled.status == 200)
            #expect(try JSONDecoder().decode(PullResponse.self, from: pulled.body).changes.map(\.id) == ["n"])

            let missing = try await httpRequest(base.appendingPathComponent("nowhere"))
            #expect(missing.status == 404)
            #expect(try JSONDecoder().decode(ErrorResponse.self, from: missing.body).error.isEmpty == false)

            running.cancel()
            _ = await running.result
            await #expect(throws: (any Error).self) {
                try await httpRequest(base.appendingPathComponent("v1/health"), timeout: 5)
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func startReturnsOnceListeningAndStopEndsServing(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let logger = Logger.quietTests
            let running = try await SyncServer(database: test.database, port: 0, logger: logger).start()
            let health = URL(string: "http://127.0.0.1:\(running.port)/v1/health")!
            #expect(try await httpRequest(health).status == 200)

            // A second server cannot take the same port: start throws instead of waiting forever.
            await #expect(throws: (any Error).self) {
                _ = try await SyncServer(database: test.database, port: running.port, logger: logger).start()
            }

            await running.stop()
            await #expect(throws: (any Error).self) { try await httpRequest(health, timeout: 5) }
        }
    }

    /// In a `ServiceGroup` of the app's own, the server serves until the group shuts down
    /// gracefully, and answers a pull waiting for changes at once then.
    @Test(arguments: Backend.allCases)
    func aServerInAServiceGroupStopsWhenTheGroupShutsDownGracefully(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let token = try await test.database.addUser(named: "ann")
            let logger = Logger.quietTests
            // A port free a moment ago: a service reports no port.
            let probe = try await SyncServer(database: test.database, port: 0, logger: logger).start()
            let port = probe.port
            await probe.stop()
            let server = SyncServer(database: test.database, port: port, logger: logger)
            let group = ServiceGroup(services: [server], logger: logger)
            let running = Task { try await group.run() }
            let health = URL(string: "http://127.0.0.1:\(port)/v1/health")!
            #expect(await eventually { (try? await httpRequest(health, timeout: 1))?.status == 200 })

            let started = ContinuousClock.now
            async let waiting = httpRequest(
                URL(string: "http://127.0.0.1:\(port)/v1/pull?cursor=0&wait=20")!, token: token)
            try await Task.sleep(for: .milliseconds(300))
            await group.triggerGracefulShutdown()
            let pulled = try await waiting
            #expect(pulled.status == 200)
            #expect(ContinuousClock.now - started < .seconds(10), "the waiting pull is answered at shutdown")
            try await running.value
            await #expect(throws: (any Error).self) { try await httpRequest(health, timeout: 5) }
        }
    }

}
