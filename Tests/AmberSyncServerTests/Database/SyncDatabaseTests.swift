import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// The user, token and prune rules every backend follows.
@Suite(.boundedConcurrency) struct SyncDatabaseTests {
    @Test(arguments: Backend.allCases)
    func usersGetDistinctRandomTokensAndNamesAreUnique(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let database = test.database
            let ann = try await database.addUser(named: "ann")
            let annLaptop = try await database.addToken(forUserNamed: "ann")
            let bob = try await database.addUser(named: "bob")
            #expect(Set([ann, annLaptop, bob]).count == 3)
            for token in [ann, annLaptop, bob] {
                #expect(token.count == 43)
                #expect(token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
            }
            let annUser = try #require(try await database.user(forToken: ann))
            #expect(annUser.name == "ann")
            #expect(try await database.user(forToken: annLaptop) == annUser)
            #expect(try await database.user(forToken: bob)?.name == "bob")
            #expect(try await database.user(forToken: bob) != annUser)

            await #expect(throws: SyncServerError.userExists("ann")) { try await database.addUser(named: "ann") }
            await #expect(throws: SyncServerError.unknownUser("carol")) {
                try await database.addToken(forUserNamed: "carol")
            }
            for name in ["", "   ", "tab\tname", "new\nline", String(repeating: "n", count: 257)] {
                await #expect(throws: SyncServerError.invalidUserName(name)) { try await database.addUser(named: name) }
            }
            #expect(try await database.user(forToken: "") == nil)
            #expect(try await database.user(forToken: AccessToken.generate()) == nil)
            #expect(try await database.revokeToken("never issued") == false)
        }
    }

    /// A batch's mutations see the records as the mutations before them in the batch left them:
    /// a record created, edited from that version, deleted, then edited from a version before its
    /// deletion (a conflict); and a record stored before the batch, edited.
    @Test(arguments: Backend.allCases)
    func mutationsOfOneBatchSeeTheRecordsTheMutationsBeforeThemStored(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let database = test.database
            let token = try await database.addUser(named: "ann")
            let ann = try #require(try await database.user(forToken: token))
            let stored = try await database.push(
                [
                    Mutation(
                        mutationID: 1, collection: "notes", id: "old", baseVersion: nil, value: ["text": .string("old")]
                    )
                ],
                clientID: "c", for: ann)
            #expect(stored.map(\.version) == [1])
            let results = try await database.push(
                [
                    Mutation(
                        mutationID: 2, collection: "notes", id: "a", baseVersion: nil, value: ["text": .string("one")]),
                    Mutation(
                        mutationID: 3, collection: "notes", id: "a", baseVersion: 2, value: ["text": .string("two")]),
                    Mutation(
                        mutationID: 4, collection: "notes", id: "old", baseVersion: 1, value: ["text": .string("new")]),
                    Mutation(mutationID: 5, collection: "notes", id: "a", baseVersion: 3, value: nil),
                    Mutation(
                        mutationID: 6, collection: "notes", id: "a", baseVersion: 3, value: ["text": .string("late")]),
                    Mutation(
                        mutationID: 7, collection: "tags", id: "a", baseVersion: nil, value: ["name": .string("t")]),
                ],
                clientID: "c", for: ann)
            #expect(results.map(\.status) == [.applied, .applied, .applied, .applied, .conflict, .applied])
            #expect(results.map(\.version) == [2, 3, 4, 5, 5, 6])
            let page = try await database.pull(for: ann, after: 1, limit: 100)
            let changes = Dictionary(uniqueKeysWithValues: page.changes.map { ("\($0.collection)/\($0.id)", $0) })
            #expect(changes["notes/a"]?.version == 5 && changes["notes/a"]?.record == nil)
            #expect(changes["notes/old"]?.record?.object == ["text": .string("new")])
            #expect(changes["tags/a"]?.record?.object == ["name": .string("t")])
        }
    }

    /// A batch naming each record once, in order, as clients send them: its creations are written
    /// as new, except where a record is stored under the name already, which each is decided
    /// against: a live one conflicts, a deletion's is created again, a retry is answered as before.
    @Test(arguments: Backend.allCases)
    func creationsOfAnOrderedBatchAreDecidedAgainstRecordsStoredUnderTheirNames(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let database = test.database
            let token = try await database.addUser(named: "ann")
            let ann = try #require(try await database.user(forToken: token))
            func create(_ mutationID: Int64, _ id: String, _ text: String) -> Mutation {
                Mutation(
                    mutationID: mutationID, collection: "notes", id: id, baseVersion: nil,
                    value: ["text": .string(text)])
            }
            // "b" lives, "c" was deleted: stored by another client.
            let other = try await database.push(
                [
                    create(1, "b", "other b"), create(2, "c", "other c"),
                    Mutation(mutationID: 3, collection: "notes", id: "c", baseVersion: 2, value: nil),
                ],
                clientID: "other", for: ann)
            #expect(other.map(\.version) == [1, 2, 3])
            let batch = [create(1, "a", "a"), create(2, "b", "mine"), create(3, "c", "again"), create(4, "d", "d")]
            let results = try await database.push(batch, clientID: "phone", for: ann)
            #expect(results.map(\.status) == [.applied, .conflict, .applied, .applied])
            #expect(results.map(\.version) == [4, 1, 5, 6])
            #expect(results[1].value == ["text": .string("other b")])
            // Sent again with the next: answered as before, nothing stored twice.
            let again = try await database.push(batch + [create(5, "e", "e")], clientID: "phone", for: ann)
            #expect(again.map(\.version) == [4, 1, 5, 6, 7])
            let page = try await database.pull(for: ann, after: 0, limit: 100)
            #expect(page.cursor == 7)
            let texts = Dictionary(
                uniqueKeysWithValues: page.changes.map { ($0.id, $0.record?.object["text"]) })
            #expect(
                texts == [
                    "a": .string("a"), "b": .string("other b"), "c": .string("again"), "d": .string("d"),
                    "e": .string("e"),
                ])
        }
    }

    /// A push's answers are kept together: a client that lost an answer sends the batch again,
    /// with the next batch after it, and each mutation of the first is answered as before (a
    /// conflict with its value too) while the next is applied; sent once more, all are answered
    /// as before; a different mutation under an answered id is refused.
    @Test(arguments: Backend.allCases)
    func aBatchSentAgainWithTheNextIsAnsweredAsBeforeMutationByMutation(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let database = test.database
            let token = try await database.addUser(named: "ann")
            let ann = try #require(try await database.user(forToken: token))
            // Stored by another client: this client's edit of it from no base conflicts, and its
            // answer carries a number no 64-bit integer holds.
            let big: JSONValue = .number(JSONNumber("123456789012345678901234567890")!)
            _ = try await database.push(
                [Mutation(mutationID: 1, collection: "notes", id: "x", baseVersion: nil, value: ["n": big])],
                clientID: "laptop", for: ann)
            let first = (1...3).map {
                Mutation(
                    mutationID: Int64($0), collection: "notes", id: "\($0)", baseVersion: nil,
                    value: ["n": .integer(Int64($0))])
            }
            let conflicting = Mutation(
                mutationID: 4, collection: "notes", id: "x", baseVersion: nil, value: ["n": .integer(0)])
            let answered = try await database.push(first + [conflicting], clientID: "phone", for: ann)
            #expect(answered.map(\.status) == [.applied, .applied, .applied, .conflict])
            #expect(answered[3].value == ["n": big])
            let next = (5...6).map {
                Mutation(
                    mutationID: Int64($0), collection: "notes", id: "\($0)", baseVersion: nil,
                    value: ["n": .integer(Int64($0))])
            }
            let together = try await database.push(first + [conflicting] + next, clientID: "phone", for: ann)
            #expect(Array(together.prefix(4)) == answered, "answered as before, the conflict's value too")
            #expect(together.suffix(2).map(\.status) == [.applied, .applied])
            #expect(together.suffix(2).map(\.version) == [5, 6], "versions 2 to 4 went to the first batch")
            let again = try await database.push(first + [conflicting] + next, clientID: "phone", for: ann)
            #expect(again == together)
            // A re-send that begins and ends inside the kept batches: 3 and 4 of the first, 5 of the next.
            let middle = try await database.push([first[2], conflicting, next[0]], clientID: "phone", for: ann)
            #expect(middle == Array(together[2...4]))
            #expect(try await database.pull(for: ann, after: 0, limit: 100).cursor == 6, "nothing applied twice")
            // A copied phone's mutation under an id answered in either kept batch is refused.
            for id: Int64 in [2, 6] {
                let other = Mutation(
                    mutationID: id, collection: "notes", id: "other", baseVersion: nil, value: ["n": .integer(9)])
                await #expect(throws: SyncServerError.clientIDReused(clientID: "phone", mutationID: id)) {
                    try await database.push([other], clientID: "phone", for: ann)
                }
            }
            // The client got the answers: its next batch starts after them, and they are forgotten.
            let later = Mutation(mutationID: 7, collection: "notes", id: "7", baseVersion: nil, value: [:])
            #expect(try await database.push([later], clientID: "phone", for: ann).map(\.version) == [7])
            await #expect(throws: SyncServerError.clientIDReused(clientID: "phone", mutationID: 3)) {
                try await database.push([first[2]], clientID: "phone", for: ann)
            }
        }
    }

    /// The tags of several versions read together are each version's own: versions of one push
    /// share its tag, another push's differ, and a version past the history has none.
    @Test(arguments: Backend.allCases)
    func historyTagsReadTogetherAreEachVersionsTag(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let database = test.database
            let ann = try #require(try await database.user(forToken: try await database.addUser(named: "ann")))
            let bob = try #require(try await database.user(forToken: try await database.addUser(named: "bob")))
            func create(_ ids: ClosedRange<Int64>, for user: SyncUser) async throws {
                _ = try await database.push(
                    ids.map {
                        Mutation(mutationID: $0, collection: "notes", id: "\($0)", baseVersion: nil, value: [:])
                    },
                    clientID: "phone", for: user)
            }
            try await create(1...2, for: ann)
            try await create(3...3, for: ann)
            try await create(1...1, for: bob)
            let versions: [Int64] = [3, 1, 2, 4, 1]
            let tags = try await database.historyTags(for: ann, at: versions)
            var one: [String?] = []
            for version in versions { one.append(try await database.historyTag(for: ann, at: version)) }
            #expect(tags == one)
            #expect(tags[1] != nil && tags[1] == tags[2] && tags[4] == tags[1], "versions 1 and 2: one push")
            #expect(tags[0] != nil && tags[0] != tags[1], "version 3: another push")
            #expect(tags[3] == nil, "no version 4 yet")
            #expect(
                try await database.historyTags(for: bob, at: [1, 2]) == [
                    try await database.historyTag(for: bob, at: 1), nil,
                ])
            #expect(try await database.historyTags(for: ann, at: []) == [])
        }
    }

    @Test func tokensAreHashedWithSHA256AsLowercaseHex() {
        #expect(AccessToken.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(AccessToken.generate() != AccessToken.generate())
    }

    /// A token is given on command lines (`notes sync --token $token`), where a leading `-` reads
    /// as an option: one in 64 base64url tokens would start with it.
    @Test func tokensAre43Base64URLCharactersNeverStartingWithADash() {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        for _ in 0..<2_000 {
            let token = AccessToken.generate()
            #expect(token.count == 43 && token.allSatisfy(alphabet.contains) && !token.hasPrefix("-"), "\(token)")
        }
    }

    @Test(arguments: Backend.allCases)
    func aPullFromBeforePrunedDeletionsIs410WithResetAndFrom0Succeeds(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            _ = try await harness.push(
                [
                    Mutation(mutationID: 1, collection: "notes", id: "kept", baseVersion: nil, value: [:]),
                    Mutation(mutationID: 2, collection: "notes", id: "gone", baseVersion: nil, value: [:]),
                    Mutation(mutationID: 3, collection: "notes", id: "gone", baseVersion: 2, value: nil),
                ],
                token: token
            )
            // Nothing is older than an hour ago; everything deleted is older than a second from now.
            #expect(try await harness.database.prune(deletionsOlderThan: Date().addingTimeInterval(-3_600)) == 0)
            #expect(try await harness.database.prune(deletionsOlderThan: Date().addingTimeInterval(1)) == 1)

            for cursor in [1, 2] {
                let response = try await harness.send(.get, "/v1/pull?cursor=\(cursor)", token: token)
                #expect(response.status == .gone)
                let error = try response.errorBody()
                #expect(error.reset == true)
                #expect(error.code == SyncErrorCode.cursorExpired)
            }
            let fromZero = try await harness.pull(token: token, cursor: 0)
            #expect(fromZero.changes.map(\.id) == ["kept"])
            #expect(try await harness.pull(token: token, cursor: 3).changes.isEmpty)

            // Another user's cursor is not affected.
            let bob = try await harness.addUser("bob")
            _ = try await harness.push(
                [Mutation(mutationID: 1, collection: "notes", id: "b", baseVersion: nil, value: [:])], token: bob)
            #expect(try await harness.send(.get, "/v1/pull?cursor=1", token: bob).status == .ok)
        }
    }
}
