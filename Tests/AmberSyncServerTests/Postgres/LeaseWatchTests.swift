import AmberSyncPostgres
import AmberTestSupport
import Foundation
import Testing

/// The watch that fails requests the pool gives no connection, without a timer per request.
@Suite(.boundedConcurrency) struct LeaseWatchTests {
    struct Unavailable: Error {}

    @Test func aRequestThatGetsNoConnectionFailsAfterTheWait() async throws {
        let watch = LeaseWatch(wait: .milliseconds(500))
        let lease = LeaseWatch.Lease<Int>()
        let start = ContinuousClock.now
        await #expect(throws: Unavailable.self) { try await watch.wait(for: lease, failing: Unavailable()) }
        let waited = ContinuousClock.now - start
        #expect(waited >= .milliseconds(500) && waited < .seconds(5), "\(waited)")
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

    @Test func aLateCheckFailsNoOneAndTheNextCheckOnTimeDoes() async throws {
        // Checks every 3 s; checks are made here at chosen instants, far past the real ones.
        let watch = LeaseWatch(wait: .seconds(60))
        let lease = LeaseWatch.Lease<Int>()
        let start = ContinuousClock.now
        let waiting = Task { try await watch.wait(for: lease, failing: Unavailable()) }
        while watch.check(at: start) == nil { try await Task.sleep(for: .milliseconds(10)) }
        // The process was starved for 100 s: the request's connection may have come meanwhile.
        #expect(watch.check(at: start + .seconds(100)) == 0)
        // The next check, on time, finds the pool still gave none.
        #expect(watch.check(at: start + .seconds(103)) == 1)
        await #expect(throws: Unavailable.self) { try await waiting.value }
        #expect(!lease.begin())
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
