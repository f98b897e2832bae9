import AmberLock
import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@Suite(.boundedConcurrency) struct LongPollTests {
    static let note = Mutation(
        mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: ["text": .string("hi")])

    @Test(arguments: Backend.allCases)
    func aWaitingPullIsWokenByAPush(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            let clock = ContinuousClock()
            let start = clock.now
            async let waiting = harness.pull(token: token, cursor: 0, wait: 30)
            try await Task.sleep(for: .milliseconds(300))
            _ = try await harness.push([Self.note], token: token)
            let response = try await waiting
            #expect(response.changes.map(\.id) == ["n"])
            #expect(response.cursor == 1)
            #expect(start.duration(to: clock.now) < .seconds(15))
        }
    }

    @Test(arguments: Backend.allCases)
    func aWaitThatSeesNothingEndsEmptyWithTheSameCursor(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            _ = try await harness.push([Self.note], token: token)
            let clock = ContinuousClock()
            let start = clock.now
            let response = try await harness.pull(token: token, cursor: 1, wait: 1)
            let elapsed = start.duration(to: clock.now)
            #expect(response == PullResponse(changes: [], cursor: 1, hasMore: false))
            #expect(elapsed >= .milliseconds(900))
            #expect(elapsed < .seconds(10))
        }
    }

    @Test(arguments: Backend.allCases)
    func aWaitReturnsAtOnceWhenChangesAreThere(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            _ = try await harness.push([Self.note], token: token)
            let clock = ContinuousClock()
            let start = clock.now
            let response = try await harness.pull(token: token, cursor: 0, wait: 60)
            #expect(response.changes.count == 1)
            #expect(start.duration(to: clock.now) < .seconds(10))
        }
    }

    @Test(arguments: Backend.allCases)
    func anotherUsersPushDoesNotWakeAWait(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let ann = try await harness.addUser("ann")
            let bob = try await harness.addUser("bob")
            let clock = ContinuousClock()
            let start = clock.now
            async let bobsWait = harness.pull(token: bob, cursor: 0, wait: 2)
            try await Task.sleep(for: .milliseconds(300))
            _ = try await harness.push([Self.note], token: ann)
            let response = try await bobsWait
            #expect(response == PullResponse(changes: [], cursor: 0, hasMore: false, total: 0))
            #expect(start.duration(to: clock.now) >= .milliseconds(1_900))
        }
    }
}

@Suite(.boundedConcurrency) struct PullCoalescingTests {
    @Test(arguments: Backend.allCases)
    func pullsWokenTogetherShareOneDatabaseRead(backend: Backend) async throws {
        let counting = CountingWrap(pullDelay: .milliseconds(100))
        try await withHarness(backend, wrap: counting.wrap) { harness in
            let token = try await harness.addUser("ann")
            let waiting = 50
            try await withThrowingTaskGroup(of: PullResponse.self) { group in
                for _ in 0..<waiting {
                    group.addTask { try await harness.pull(token: token, cursor: 0, wait: 30) }
                }
                try await Task.sleep(for: .milliseconds(500))
                _ = try await harness.push([LongPollTests.note], token: token)
                var answered = 0
                for try await response in group {
                    #expect(response.changes.map(\.id) == ["n"])
                    answered += 1
                }
                #expect(answered == waiting)
            }
            // Without sharing: a read per pull before the wait and another after it.
            let reads = try #require(counting.database).pulls.value
            #expect(reads < waiting, "\(reads) database reads for \(waiting) pulls")
        }
    }

    /// The pulls of one token that one push wakes check the token again together: one lookup,
    /// not one each (a revoked token is still refused: `LongPollTests`).
    @Test(arguments: Backend.allCases)
    func pullsWokenTogetherShareOneTokenCheck(backend: Backend) async throws {
        let counting = CountingWrap()
        try await withHarness(backend, wrap: counting.wrap) { harness in
            let token = try await harness.addUser("ann")
            let lookups = { counting.database?.tokenLookups.value ?? 0 }
            let waiting = 50
            try await withThrowingTaskGroup(of: PullResponse.self) { group in
                for _ in 0..<waiting {
                    group.addTask { try await harness.pull(token: token, cursor: 0, wait: 30) }
                }
                try await Task.sleep(for: .milliseconds(500))
                let parked = lookups()
                #expect(parked >= waiting, "each pull's authentication looks its token up")
                _ = try await harness.push([LongPollTests.note], token: token)
                for try await response in group {
                    #expect(response.changes.map(\.id) == ["n"])
                }
                // The push's own authentication, and the woken pulls' checks: one each without sharing.
                let afterWake = lookups() - parked - 1
                #expect(afterWake < waiting / 2, "\(afterWake) token lookups for \(waiting) woken pulls")
            }
        }
    }
}
