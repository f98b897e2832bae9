import AmberLock
import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// What lets clients recover by themselves: the database's identity on every answer, the tag of
/// a cursor's history, and the refusal of a mutation id that another device already used.
@Suite(.boundedConcurrency) struct HistoryTests {
    static let databaseIDHeader = HTTPField.Name(SyncHeader.databaseID)!

    static func create(_ id: String, mutationID: Int64, text: String = "hi") -> Mutation {
        Mutation(mutationID: mutationID, collection: "notes", id: id, baseVersion: nil, value: ["text": .string(text)])
    }

    @Test(arguments: Backend.allCases)
    func everyAnswerNamesTheDatabase(backend: Backend) async throws {
        let seen = LockedValue<[String]>([])
        for _ in 0..<2 {
            try await withHarness(backend) { harness in
                let token = try await harness.addUser("ann")
                let answers = [
                    try await harness.send(.get, "/v1/health", token: nil),
                    try await harness.send(.get, "/v1/pull", token: token),
                    try await harness.send(.get, "/v1/pull", token: "wrong"),
                    try await harness.send(.get, "/v1/nothing", token: token),
                ]
                let ids = Set(answers.compactMap { $0.headers[Self.databaseIDHeader] })
                #expect(answers.allSatisfy { $0.headers[Self.databaseIDHeader] != nil })
                #expect(ids.count == 1)
                #expect(ids.first == (try await harness.database.databaseID()))
                seen.withLock { $0 += ids }
            }
        }
        #expect(Set(seen.withLock { $0 }).count == 2, "two databases, two identities")
    }

    @Test(arguments: Backend.allCases)
    func aCursorIsCheckedAgainstItsTag(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            _ = try await harness.push(
                [Self.create("a", mutationID: 1), Self.create("b", mutationID: 2)], token: token)
            let page = try await harness.send(.get, "/v1/pull", token: token).decode(PullResponse.self)
            let tag = try #require(page.cursorTag)
            #expect(page.cursor == 2)

            let same = try await harness.send(.get, "/v1/pull?cursor=1&cursorTag=\(tag)", token: token)
            #expect(same.status == .ok, "a cursor inside a push has that push's tag")
            #expect(try same.decode(PullResponse.self).cursorTag == tag)
            #expect(try await harness.send(.get, "/v1/pull?cursor=2", token: token).status == .ok, "no tag: no check")

            let other = try await harness.send(.get, "/v1/pull?cursor=2&cursorTag=0123456789abcdef", token: token)
            #expect(other.status == .gone)
            let error = try other.errorBody()
            #expect(error.code == SyncErrorCode.historyChanged && error.reset == true)

            for bad in ["", "%20", String(repeating: "a", count: 65)] {
                let response = try await harness.send(.get, "/v1/pull?cursor=2&cursorTag=\(bad)", token: token)
                #expect(response.status == .badRequest, "\(bad)")
            }

            // Another push gets another tag.
            _ = try await harness.push([Self.create("c", mutationID: 3)], token: token)
            let next = try await harness.send(.get, "/v1/pull?cursor=2&cursorTag=\(tag)", token: token)
                .decode(PullResponse.self)
            #expect(next.cursor == 3 && next.cursorTag != nil && next.cursorTag != tag)
        }
    }

    /// A push from a tagged cursor checks that tag and tags its new cursor in one look-up of the
    /// history (one round trip on PostgreSQL, not two).
    @Test(arguments: Backend.allCases)
    func aPushChecksItsCursorAndTagsTheNextInOneLookUp(backend: Backend) async throws {
        let counting = CountingWrap()
        try await withHarness(backend, wrap: counting.wrap) { harness in
            let token = try await harness.addUser("ann")
            let lookups = { counting.database?.historyLookups.value ?? 0 }
            func push(_ request: PushRequest) async throws -> PushResponse {
                let response = try await harness.send(
                    .post, "/v1/push", token: token, body: Array(try JSONEncoder().encode(request)))
                try #require(response.status == .ok, "push answered \(response.status): \(response.text)")
                return try response.decode(PushResponse.self)
            }
            let first = try await push(
                PushRequest(clientID: "phone", mutations: [Self.create("a", mutationID: 1)], cursor: 0))
            let tag = try #require(first.cursorTag)
            #expect(first.cursor == 1 && lookups() == 1, "from 0, only the new cursor's tag is read")

            let before = lookups()
            let second = try await push(
                PushRequest(
                    clientID: "phone", mutations: [Self.create("b", mutationID: 2)], cursor: 1, cursorTag: tag))
            #expect(second.cursor == 2 && second.cursorTag != nil && second.cursorTag != tag)
            #expect(lookups() - before == 1, "the cursor's tag and the next one's, together")
            let pulled = try await harness.send(.get, "/v1/pull?cursor=0", token: token).decode(PullResponse.self)
            #expect(pulled.cursor == 2 && pulled.cursorTag == second.cursorTag)

            // A tag other than the one at its cursor: checked in one look-up too, and no cursor.
            let beforeStale = lookups()
            let stale = try await push(
                PushRequest(
                    clientID: "phone", mutations: [Self.create("c", mutationID: 3)], cursor: 2, cursorTag: tag))
            #expect(stale.cursor == nil && stale.cursorTag == nil)
            #expect(lookups() - beforeStale == 1)
        }
    }

    @Test(arguments: Backend.allCases)
    func aDifferentMutationUnderAnAnsweredIDIsRefusedAndAppliesNothing(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            let first = Self.create("a", mutationID: 1, text: "from the first phone")
            let answer = try await harness.push([first], token: token)
            #expect(try await harness.push([first], token: token) == answer, "a retry is answered as before")

            let copy = Self.create("b", mutationID: 1, text: "from the copied phone")
            let body = try JSONEncoder().encode(PushRequest(clientID: "client", mutations: [copy]))
            let response = try await harness.send(.post, "/v1/push", token: token, body: Array(body))
            #expect(response.status == .conflict)
            let error = try response.errorBody()
            #expect(error.code == SyncErrorCode.clientIDReused)
            #expect(error.error.contains("client id"))

            // The client sends mutation 2; its answer to 1 is forgotten, and 1 stays refused.
            _ = try await harness.push([Self.create("c", mutationID: 2)], token: token)
            let late = try JSONEncoder().encode(PushRequest(clientID: "client", mutations: [copy]))
            let refused = try await harness.send(.post, "/v1/push", token: token, body: Array(late))
            #expect(refused.status == .conflict)
            #expect(try refused.errorBody().code == SyncErrorCode.clientIDReused)

            #expect(try await harness.pullAll(token: token).map(\.id).sorted() == ["a", "c"], "nothing of the copy")
            // Under another client id the same mutation applies.
            _ = try await harness.push([copy], clientID: "copy", token: token)
            #expect(try await harness.pullAll(token: token).map(\.id).sorted() == ["a", "b", "c"])
        }
    }
}
