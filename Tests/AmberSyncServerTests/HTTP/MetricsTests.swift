import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// `GET /metrics`: request counts by route and status, push and pull latency, waiting pulls and
/// database errors, in the Prometheus text format, per server.
@Suite(.boundedConcurrency) struct MetricsTests {
    static let note = Mutation(
        mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: ["text": .string("hi")])

    static func requests(_ route: String, _ status: Int) -> String {
        #"amber_sync_requests_total{route="\#(route)",status="\#(status)"}"#
    }

    @Test(arguments: Backend.allCases)
    func aPushAndAPullAreCountedByRouteAndStatusAndTimed(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let before = try await harness.metrics()
            #expect(before["amber_sync_push_duration_seconds_count"] == 0)
            #expect(before["amber_sync_pull_duration_seconds_count"] == 0)
            #expect(before["amber_sync_waiting_pulls"] == 0)
            for operation in ["authenticate", "push", "pull"] {
                #expect(before[#"amber_sync_database_errors_total{operation="\#(operation)"}"#] == 0)
            }

            let token = try await harness.addUser("ann")
            _ = try await harness.push([Self.note], token: token)
            _ = try await harness.pull(token: token)
            _ = try await harness.pull(token: token, cursor: 1)
            #expect(try await harness.send(.get, "/v1/health", token: nil).status == .ok)
            #expect(try await harness.send(.get, "/v1/nothing-here", token: nil).status == .notFound)
            #expect(try await harness.send(.get, "/v1/pull?cursor=-1", token: token).status == .badRequest)

            let metrics = try await harness.metrics()
            #expect(metrics[Self.requests("/v1/push", 200)] == 1)
            #expect(metrics[Self.requests("/v1/pull", 200)] == 2)
            #expect(metrics[Self.requests("/v1/pull", 400)] == 1)
            #expect(metrics[Self.requests("/v1/health", 200)] == 1)
            #expect(metrics[Self.requests("unmatched", 404)] == 1)
            // The first scrape is counted too, once answered.
            #expect(metrics[Self.requests("/metrics", 200)] == 1)
            #expect(metrics["amber_sync_push_duration_seconds_count"] == 1)
            #expect(metrics[#"amber_sync_push_duration_seconds_bucket{le="+Inf"}"#] == 1)
            #expect(try #require(metrics["amber_sync_push_duration_seconds_sum"]) > 0)
            #expect(metrics["amber_sync_pull_duration_seconds_count"] == 3)
            #expect(metrics["amber_sync_waiting_pulls"] == 0)
            // Bad input is no database error.
            #expect(metrics[#"amber_sync_database_errors_total{operation="pull"}"#] == 0)
        }
    }

    @Test(arguments: Backend.allCases)
    func aRequestWithoutAValidTokenIsCountedAs401(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            _ = try await harness.addUser("ann")
            #expect(try await harness.send(.get, "/v1/pull?cursor=0", token: nil).status == .unauthorized)
            #expect(try await harness.send(.get, "/v1/pull?cursor=0", token: "not-a-token").status == .unauthorized)
            let push = Array(#"{"clientID":"c","mutations":[]}"#.utf8)
            #expect(try await harness.send(.post, "/v1/push", token: "not-a-token", body: push).status == .unauthorized)

            let metrics = try await harness.metrics()
            #expect(metrics[Self.requests("/v1/pull", 401)] == 2)
            #expect(metrics[Self.requests("/v1/push", 401)] == 1)
            #expect(metrics[Self.requests("/v1/pull", 200)] == nil)
            #expect(metrics[#"amber_sync_database_errors_total{operation="authenticate"}"#] == 0)
        }
    }

    @Test(arguments: Backend.allCases)
    func aWaitingPullShowsInTheGaugeWhileItWaits(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            async let waiting = harness.pull(token: token, cursor: 0, wait: 30)

            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(20)
            var gauge = try await harness.metrics()["amber_sync_waiting_pulls"]
            while gauge != 1, clock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                gauge = try await harness.metrics()["amber_sync_waiting_pulls"]
            }
            #expect(gauge == 1)

            _ = try await harness.push([Self.note], token: token)
            #expect(try await waiting.changes.map(\.id) == ["n"])
            let metrics = try await harness.metrics()
            #expect(metrics["amber_sync_waiting_pulls"] == 0)
            #expect(metrics[Self.requests("/v1/pull", 200)] == 1)
        }
    }

    @Test(arguments: Backend.allCases)
    func aPullsLatencyLeavesOutTheTimeItWaited(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            let clock = ContinuousClock()
            let start = clock.now
            let response = try await harness.pull(token: token, cursor: 0, wait: 3)
            let elapsed = start.duration(to: clock.now)
            #expect(response.changes.isEmpty)
            #expect(elapsed >= .milliseconds(2_900))

            let metrics = try await harness.metrics()
            #expect(metrics["amber_sync_pull_duration_seconds_count"] == 1)
            // The pull was held for 3 s less the time of its first look (which a loaded machine
            // stretches, so not all of it): at least one second is left out.
            let recorded = try #require(metrics["amber_sync_pull_duration_seconds_sum"])
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            #expect(recorded < seconds - 1, "recorded \(recorded) s of a pull that took \(seconds) s")
        }
    }

    @Test(arguments: Backend.allCases)
    func databaseErrorsAreCountedButBadInputFromTheDatabaseIsNot(backend: Backend) async throws {
        let failingPushes: (any SyncDatabase) -> any SyncDatabase = { FaultyDatabase(base: $0, pushFault: DiskFull()) }
        try await withHarness(backend, wrap: failingPushes) { harness in
            let token = try await harness.addUser("ann")
            let body = try JSONEncoder().encode(PushRequest(clientID: "c", mutations: [Self.note]))
            #expect(
                try await harness.send(.post, "/v1/push", token: token, body: Array(body)).status
                    == .internalServerError)
            let metrics = try await harness.metrics()
            #expect(metrics[#"amber_sync_database_errors_total{operation="push"}"#] == 1)
            #expect(metrics[#"amber_sync_database_errors_total{operation="pull"}"#] == 0)
            #expect(metrics[Self.requests("/v1/push", 500)] == 1)
        }
        let invalid = SyncServerError.invalidRequest("The mutation is not valid.")
        let refusingPulls: (any SyncDatabase) -> any SyncDatabase = { FaultyDatabase(base: $0, pullFault: invalid) }
        try await withHarness(backend, wrap: refusingPulls) { harness in
            let token = try await harness.addUser("ann")
            #expect(try await harness.send(.get, "/v1/pull", token: token).status == .badRequest)
            let metrics = try await harness.metrics()
            #expect(metrics[#"amber_sync_database_errors_total{operation="pull"}"#] == 0)
            #expect(metrics[Self.requests("/v1/pull", 400)] == 1)
        }
    }

    @Test(arguments: Backend.allCases)
    func serversInOneProcessKeepTheirOwnFigures(backend: Backend) async throws {
        try await backend.withDatabase { first in
            try await backend.withDatabase { second in
                let logger = Logger.quietTests
                let busy = SyncServer(database: first.database, logger: logger)
                let idle = SyncServer(database: second.database, logger: logger)
                let token = try await first.database.addUser(named: "ann")
                try await busy.makeApplication().test(.router) { client in
                    let harness = Harness(client: client, database: first.database)
                    _ = try await harness.push([Self.note], token: token)
                }
                #expect(try parsePrometheusText(busy.metrics.exposition())[Self.requests("/v1/push", 200)] == 1)
                let idleMetrics = try parsePrometheusText(idle.metrics.exposition())
                #expect(idleMetrics[Self.requests("/v1/push", 200)] == nil)
                #expect(idleMetrics["amber_sync_push_duration_seconds_count"] == 0)
            }
        }
    }
}
