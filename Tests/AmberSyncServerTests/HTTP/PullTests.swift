import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@Suite(.boundedConcurrency) struct PullTests {
    static func create(_ ids: some Sequence<Int>, collection: String = "notes", firstMutationID: Int64 = 1)
        -> [Mutation]
    {
        ids.enumerated().map { offset, id in
            Mutation(
                mutationID: firstMutationID + Int64(offset), collection: collection, id: "\(id)", baseVersion: nil,
                value: ["n": .integer(Int64(id))]
            )
        }
    }

    @Test(arguments: Backend.allCases)
    func pagesComeInVersionOrderWithEachRecordOnceInItsLatestState(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            _ = try await harness.push(Self.create(0..<25), token: token)  // versions 1...25
            // Records 3, 7 and 20 change again (26...28), and 7 once more (29); 12 is deleted (30).
            _ = try await harness.push(
                [
                    Mutation(
                        mutationID: 100, collection: "notes", id: "3", baseVersion: 4, value: ["n": .integer(300)]),
                    Mutation(
                        mutationID: 101, collection: "notes", id: "7", baseVersion: 8, value: ["n": .integer(700)]),
                    Mutation(
                        mutationID: 102, collection: "notes", id: "20", baseVersion: 21, value: ["n": .integer(2000)]),
                    Mutation(
                        mutationID: 103, collection: "notes", id: "7", baseVersion: 27, value: ["n": .integer(7000)]),
                    Mutation(mutationID: 104, collection: "notes", id: "12", baseVersion: 13, value: nil),
                ],
                token: token
            )

            var pages: [PullResponse] = []
            var cursor: Int64 = 0
            repeat {
                let page = try await harness.pull(token: token, cursor: cursor, limit: 10)
                pages.append(page)
                cursor = page.cursor
            } while pages.last!.hasMore && pages.count < 10
            #expect(pages.map(\.changes.count) == [10, 10, 5])
            #expect(pages.map(\.hasMore) == [true, true, false])
            // A pull from 0 counts what it lists in all (the deleted record too), for progress.
            #expect(pages.map(\.total) == [25, nil, nil])
            #expect(try await harness.pull(token: token, cursor: 0, limit: 1_000).total == 25)
            #expect(pages.map(\.cursor) == pages.map { $0.changes.last!.version })

            let changes = pages.flatMap(\.changes)
            #expect(changes.map(\.version) == changes.map(\.version).sorted())
            #expect(Set(changes.map(\.id)).count == 25)
            #expect(changes.suffix(4).map(\.id) == ["3", "20", "7", "12"])
            #expect(changes.first { $0.id == "7" }?.value == ["n": .integer(7000)])
            #expect(
                changes.first { $0.id == "12" } == RecordChange(collection: "notes", id: "12", version: 30, value: nil))
            #expect(pages.last?.cursor == 30)

            // Only what changed after a cursor; nothing after the last version.
            #expect(try await harness.pull(token: token, cursor: 28).changes.map(\.id) == ["7", "12"])
            let end = try await harness.pull(token: token, cursor: 30)
            #expect(end == PullResponse(changes: [], cursor: 30, hasMore: false))
            // A cursor beyond the user's history is one of a history the server no longer has.
            let beyond = try await harness.send(.get, "/v1/pull?cursor=1000", token: token)
            #expect(beyond.status == .gone)
            #expect(try beyond.errorBody().code == SyncErrorCode.historyChanged)
        }
    }

    @Test(arguments: Backend.allCases)
    func theLimitDefaultsTo1000AndIsCappedThere(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            _ = try await harness.push(Self.create(0..<1_050), token: token)
            let byDefault = try await harness.pull(token: token)
            #expect(byDefault.changes.count == 1_000)
            #expect(byDefault.hasMore)
            #expect(byDefault.cursor == 1_000)
            let capped = try await harness.pull(token: token, limit: 5_000)
            #expect(capped.changes.count == 1_000)
            #expect(capped.hasMore)
            let rest = try await harness.pull(token: token, cursor: capped.cursor, limit: 5_000)
            #expect(rest.changes.count == 50)
            #expect(!rest.hasMore)
            let exact = try await harness.pull(token: token, cursor: 1_000, limit: 50)
            #expect(exact.changes.count == 50)
            #expect(!exact.hasMore)
        }
    }
}
