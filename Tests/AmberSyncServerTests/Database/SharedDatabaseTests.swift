import AmberSyncPostgres
import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Logging
import Testing

/// Several server processes on one database, each standing here as its own database object on
/// the same file or URL: wake-ups cross them, and versions commit in order.
@Suite(.boundedConcurrency) struct SharedDatabaseTests {
    @Test(arguments: Backend.allCases)
    func invalidMutationsGivenToPushDirectlyAreRefusedWithoutChanges(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let database = test.database
            let token = try await database.addUser(named: "ann")
            let ann = try #require(try await database.user(forToken: token))
            let valid = Mutation(mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: [:])
            let invalid = Mutation(mutationID: 2, collection: "bad name", id: "n", baseVersion: nil, value: [:])
            await #expect(throws: SyncServerError.self) {
                try await database.push([valid, invalid], clientID: "c", for: ann)
            }
            #expect(try await database.pull(for: ann, after: 0, limit: 10).changes.isEmpty)
        }
    }

    @Test(arguments: Backend.allCases)
    func aPullWaitingOnOneProcessWakesSoonAfterAPushThroughAnother(backend: Backend) async throws {
        try await backend.withDatabase { test in
            try await test.withSecondProcess { other in
                let serving = test.database
                let token = try await serving.addUser(named: "ann")
                let ann = try #require(try await other.user(forToken: token))

                for round in 1...3 {
                    let generation = serving.changeNotifier.generation(for: ann.id)
                    async let woken = serving.changeNotifier.wait(for: ann.id, after: generation, timeout: .seconds(10))
                    try await Task.sleep(for: .milliseconds(100))
                    _ = try await other.push(
                        [
                            Mutation(
                                mutationID: Int64(round), collection: "notes", id: "n\(round)", baseVersion: nil,
                                value: [:])
                        ],
                        clientID: "c", for: ann
                    )
                    let clock = ContinuousClock()
                    let pushed = clock.now
                    #expect(await woken)
                    let elapsed = pushed.duration(to: clock.now)
                    // The one-second contract is timed between real server processes in
                    // TwoServerProcessesTests; here the waiter shares this busy test process.
                    #expect(elapsed < .seconds(5), "round \(round): woken \(elapsed) after the push")
                }
                #expect(try await serving.pull(for: ann, after: 0, limit: 10).changes.map(\.id) == ["n1", "n2", "n3"])
            }
        }
    }

    /// Pushes from two processes at once while a third reader follows the cursor: if a version
    /// could commit after a higher one, the reader would step over it and miss a record for good.
    @Test(arguments: Backend.allCases)
    func concurrentPushesCommitVersionsInOrderSoACursorMissesNothing(backend: Backend) async throws {
        try await backend.withDatabase { test in
            try await test.withSecondProcess { second in
                let first = test.database
                let token = try await first.addUser(named: "ann")
                let ann = try #require(try await first.user(forToken: token))
                let writers = 6
                let pushesPerWriter = 25

                let seen = try await withThrowingTaskGroup(of: Set<String>.self) { group in
                    for writer in 0..<writers {
                        let database = writer.isMultiple(of: 2) ? first : second
                        group.addTask {
                            for push in 1...pushesPerWriter {
                                _ = try await database.push(
                                    [
                                        Mutation(
                                            mutationID: Int64(push), collection: "notes", id: "w\(writer)-\(push)",
                                            baseVersion: nil, value: [:])
                                    ],
                                    clientID: "writer-\(writer)", for: ann
                                )
                            }
                            return []
                        }
                    }
                    group.addTask {
                        // Follows the cursor as a client would, until every record came by.
                        var seen: Set<String> = []
                        var cursor: Int64 = 0
                        let deadline = Date().addingTimeInterval(60)
                        while seen.count < writers * pushesPerWriter, Date() < deadline {
                            let page = try await first.pull(for: ann, after: cursor, limit: 7)
                            seen.formUnion(page.changes.map(\.id))
                            cursor = page.cursor
                            if page.changes.isEmpty { try await Task.sleep(for: .milliseconds(1)) }
                        }
                        return seen
                    }
                    var seen: Set<String> = []
                    for try await ids in group { seen.formUnion(ids) }
                    return seen
                }
                #expect(seen.count == writers * pushesPerWriter)
                let all = try await first.pull(for: ann, after: 0, limit: 1_000)
                #expect(all.changes.map(\.version) == Array(1...Int64(writers * pushesPerWriter)))
            }
        }
    }
}
