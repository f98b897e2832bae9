import AmberSyncPostgres
import AmberTestSupport
import Foundation
import Testing

/// The watch that fails requests the pool gives no connection, without a timer per request.
@Suite(.boundedConcurrency) struct LeaseWatchTests {
    struct Unavailable: Error {}

    @Test func aRequestThatGetsNoConnectionFailsAfterTheWait() async throws {
        let watch = LeaseWatch(wait: .milliseconds(200))
        let lease = LeaseWatch.Lease<Int>()
        let start = ContinuousClock.now
        await #expect(throws: Unavailable.self) { try await watch.wait(for: lease, failing: Unavailable()) }
        let waited = ContinuousClock.now - start
        #expect(waited >= .milliseconds(200) && waited < .seconds(2), "\(waited)")
        // A connection that comes after the failure is not used.
        #expect(!lease.begin())
    }

    @Test func aRequestWaitsOnWhileOthersGetConnections() async throws {
        let watch = LeaseWatch(wait: .seconds(1))
        let lease = LeaseWatch.Lease<Int>()
        let others = Task {
            // Other requests get connections for 3 s, three times the wait, then this one does.
            // From a thread of its own: in a full run the tests' cooperative threads can hold a
            // sleeping task past the wait.
            let began = try await onOwnThread { () -> Bool in
                for _ in 0..<60 {
                    watch.leased()
                    Thread.sleep(forTimeInterval: 0.05)
                }
                return lease.begin()
            }
            #expect(began)
            lease.finish(.success(7))
        }
        #expect(try await watch.wait(for: lease, failing: Unavailable()) == 7)
        try await others.value
    }

    @Test func aRequestThatHasItsConnectionIsNeverFailed() async throws {
        let watch = LeaseWatch(wait: .milliseconds(100))
        let lease = LeaseWatch.Lease<String>()
        #expect(lease.begin())
        let slow = Task {
            try await Task.sleep(for: .milliseconds(500))
            lease.finish(.success("done"))
        }
        #expect(try await watch.wait(for: lease, failing: Unavailable()) == "done")
        #expect(!lease.fail(Unavailable()))
        try await slow.value
    }

    @Test func anOutcomeKnownBeforeTheWaitIsReturnedAndAnErrorThrown() async throws {
        let watch = LeaseWatch(wait: .seconds(5))
        let done = LeaseWatch.Lease<Int>()
        #expect(done.begin())
        done.finish(.success(1))
        #expect(try await watch.wait(for: done, failing: Unavailable()) == 1)
        struct Refused: Error {}
        let refused = LeaseWatch.Lease<Int>()
        refused.finish(.failure(Refused()))
        await #expect(throws: Refused.self) { try await watch.wait(for: refused, failing: Unavailable()) }
    }
}
