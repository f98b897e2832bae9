import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@Suite(.boundedConcurrency) struct PushTests {
    static let note: JSONObject = ["id": .string("n"), "text": .string("hi"), "pinned": .bool(false)]

    @Test(arguments: Backend.allCases)
    func aNewRecordIsAppliedWithoutEchoingItsValueAndPulled(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            let results = try await harness.push(
                [Mutation(mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: Self.note)],
                token: token
            )
            #expect(results == [MutationResult(mutationID: 1, status: .applied, version: 1)])
            let pulled = try await harness.pull(token: token)
            #expect(
                pulled
                    == PullResponse(
                        changes: [RecordChange(collection: "notes", id: "n", version: 1, value: Self.note)], cursor: 1,
                        hasMore: false, total: 1))
        }
    }

    @Test(arguments: Backend.allCases)
    func aStaleBaseIsAConflictCarryingTheServerRecordAndChangesNothing(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            _ = try await harness.push(
                [Mutation(mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: Self.note)],
                token: token)
            let renamed = Self.note.merging(["text": .string("renamed")]) { $1 }
            _ = try await harness.push(
                [Mutation(mutationID: 2, collection: "notes", id: "n", baseVersion: 1, value: renamed)], token: token)

            let results = try await harness.push(
                [
                    Mutation(
                        mutationID: 1, collection: "notes", id: "n", baseVersion: 1, value: .strings(["text": "mine"]))
                ],
                clientID: "other",
                token: token
            )
            #expect(results == [MutationResult(mutationID: 1, status: .conflict, version: 2, value: renamed)])
            #expect(
                try await harness.pullAll(token: token) == [
                    RecordChange(collection: "notes", id: "n", version: 2, value: renamed)
                ])
        }
    }

    @Test(arguments: Backend.allCases)
    func withoutFieldsTheValueReplacesTheRecordWhole(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            _ = try await harness.push(
                [Mutation(mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: Self.note)],
                token: token)
            let replacement: JSONObject = ["id": .string("n"), "title": .string("new")]
            let results = try await harness.push(
                [Mutation(mutationID: 2, collection: "notes", id: "n", baseVersion: 1, value: replacement)],
                token: token
            )
            #expect(results == [MutationResult(mutationID: 2, status: .applied, version: 2)])
            #expect(try await harness.pullAll(token: token).map(\.value) == [replacement])
        }
    }

    @Test(arguments: Backend.allCases)
    func editsOfDifferentFieldsMergeOnTheServer(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            _ = try await harness.push(
                [Mutation(mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: Self.note)],
                token: token)
            // The day phone changes the text...
            let day = try await harness.push(
                [
                    Mutation(
                        mutationID: 1, collection: "notes", id: "n", baseVersion: 1,
                        value: Self.note.merging(["text": .string("sorbet")]) { $1 }, fields: ["text"])
                ],
                clientID: "day",
                token: token
            )
            #expect(day == [MutationResult(mutationID: 1, status: .applied, version: 2)])
            // ...and the night phone, still on version 1, pins the note; its stale text is not written.
            let night = try await harness.push(
                [
                    Mutation(
                        mutationID: 1, collection: "notes", id: "n", baseVersion: 1,
                        value: Self.note.merging(["pinned": .bool(true)]) { $1 }, fields: ["pinned"])
                ],
                clientID: "night",
                token: token
            )
            let merged: JSONObject = ["id": .string("n"), "text": .string("sorbet"), "pinned": .bool(true)]
            #expect(night == [MutationResult(mutationID: 1, status: .applied, version: 3, value: merged)])
            #expect(try await harness.pullAll(token: token).map(\.value) == [merged])
        }
    }

    @Test(arguments: Backend.allCases)
    func aFieldChangedOnTheServerIsAConflictListingIt(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            _ = try await harness.push(
                [Mutation(mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: Self.note)],
                token: token)
            let sorbet = Self.note.merging(["text": .string("sorbet")]) { $1 }
            _ = try await harness.push(
                [
                    Mutation(
                        mutationID: 2, collection: "notes", id: "n", baseVersion: 1, value: sorbet, fields: ["text"])
                ], token: token)

            let results = try await harness.push(
                [
                    Mutation(
                        mutationID: 1, collection: "notes", id: "n", baseVersion: 1,
                        value: ["text": .string("gelato"), "pinned": .bool(true)], fields: ["text", "pinned"])
                ],
                clientID: "night",
                token: token
            )
            #expect(
                results == [
                    MutationResult(mutationID: 1, status: .conflict, version: 2, value: sorbet, fields: ["text"])
                ])
            #expect(try await harness.pullAll(token: token).map(\.value) == [sorbet])
        }
    }

    @Test(arguments: Backend.allCases)
    func aFieldMissingFromTheValueIsRemovedAndOtherKeysKeepTheServersContent(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            _ = try await harness.push(
                [Mutation(mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: Self.note)],
                token: token)
            // An old client that knows only `id` and `text` removes `text`; `pinned`, unknown to it, stays.
            let results = try await harness.push(
                [
                    Mutation(
                        mutationID: 2, collection: "notes", id: "n", baseVersion: 1, value: ["id": .string("n")],
                        fields: ["text"])
                ], token: token
            )
            let stored: JSONObject = ["id": .string("n"), "pinned": .bool(false)]
            #expect(results == [MutationResult(mutationID: 2, status: .applied, version: 2, value: stored)])
            #expect(try await harness.pullAll(token: token).map(\.value) == [stored])
        }
    }

    @Test(arguments: Backend.allCases)
    func aDeletedRecordIsPulledAsNullConflictsWithStaleEditsAndComesBackWithBaseNull(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            _ = try await harness.push(
                [Mutation(mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: Self.note)],
                token: token)
            let deletion = try await harness.push(
                [Mutation(mutationID: 2, collection: "notes", id: "n", baseVersion: 1, value: nil)], token: token)
            #expect(deletion == [MutationResult(mutationID: 2, status: .applied, version: 2)])
            #expect(
                try await harness.pull(token: token).changes == [
                    RecordChange(collection: "notes", id: "n", version: 2, value: nil)
                ])
            #expect(
                try await harness.pull(token: token, cursor: 1).changes == [
                    RecordChange(collection: "notes", id: "n", version: 2, value: nil)
                ])

            let staleEdit = try await harness.push(
                [
                    Mutation(
                        mutationID: 1, collection: "notes", id: "n", baseVersion: 1, value: ["text": .string("x")],
                        fields: ["text"]),
                    Mutation(mutationID: 2, collection: "notes", id: "n", baseVersion: 1, value: Self.note),
                    Mutation(mutationID: 3, collection: "notes", id: "n", baseVersion: 1, value: nil),
                ],
                clientID: "night",
                token: token
            )
            #expect(
                staleEdit == [
                    MutationResult(mutationID: 1, status: .conflict, version: 2, value: nil, fields: ["text"]),
                    MutationResult(mutationID: 2, status: .conflict, version: 2, value: nil),
                    MutationResult(mutationID: 3, status: .conflict, version: 2, value: nil),
                ])

            // The edit wins: the client re-creates the record with baseVersion null.
            let recreated = Self.note.merging(["text": .string("x")]) { $1 }
            let recreation = try await harness.push(
                [Mutation(mutationID: 4, collection: "notes", id: "n", baseVersion: nil, value: recreated)],
                clientID: "night", token: token
            )
            #expect(recreation == [MutationResult(mutationID: 4, status: .applied, version: 3)])
            #expect(
                try await harness.pullAll(token: token) == [
                    RecordChange(collection: "notes", id: "n", version: 3, value: recreated)
                ])
        }
    }

    @Test(arguments: Backend.allCases)
    func eachAppliedMutationGetsItsOwnVersionAndConflictsGetNone(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            let results = try await harness.push(
                [
                    Mutation(mutationID: 10, collection: "notes", id: "a", baseVersion: nil, value: Self.note),
                    Mutation(mutationID: 11, collection: "notes", id: "a", baseVersion: nil, value: Self.note),
                    Mutation(mutationID: 12, collection: "tags", id: "a", baseVersion: nil, value: Self.note),
                    Mutation(mutationID: 13, collection: "notes", id: "a", baseVersion: 1, value: nil),
                ],
                token: token
            )
            #expect(results.map(\.status) == [.applied, .conflict, .applied, .applied])
            #expect(results.map(\.version) == [1, 1, 2, 3])
            #expect(try await harness.push([], token: token) == [])
        }
    }

    @Test(arguments: Backend.allCases)
    func aResentBatchIsAnsweredByteForByteAsTheFirstTimeAndNeverAppliedTwice(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            _ = try await harness.push(
                [Mutation(mutationID: 1, collection: "notes", id: "taken", baseVersion: nil, value: Self.note)],
                clientID: "day", token: token)
            let batch = PushRequest(
                clientID: "night",
                mutations: [
                    Mutation(mutationID: 5, collection: "notes", id: "new", baseVersion: nil, value: Self.note),
                    Mutation(mutationID: 6, collection: "notes", id: "taken", baseVersion: nil, value: Self.note),
                    Mutation(
                        mutationID: 7, collection: "notes", id: "taken", baseVersion: 1, value: ["pinned": .bool(true)],
                        fields: ["pinned"]),
                ]
            )
            let body = Array(try JSONEncoder().encode(batch))
            let first = try await harness.send(.post, "/v1/push", token: token, body: body)
            #expect(first.status == .ok)
            let firstResults = try first.decode(PushResponse.self).results
            #expect(firstResults.map(\.status) == [.applied, .conflict, .applied])
            #expect(firstResults.map(\.version) == [2, 1, 3])

            // Another client changes "taken", so answering afresh would now differ.
            _ = try await harness.push(
                [Mutation(mutationID: 2, collection: "notes", id: "taken", baseVersion: 3, value: nil)],
                clientID: "day", token: token)
            let before = try await harness.pullAll(token: token)

            let again = try await harness.send(.post, "/v1/push", token: token, body: body)
            #expect(again.status == .ok)
            #expect(again.text == first.text)
            #expect(try await harness.pullAll(token: token) == before)

            // The same mutation ids from another client are new mutations.
            let otherClient = try await harness.push(batch.mutations, clientID: "tablet", token: token)
            #expect(otherClient.map(\.status) == [.conflict, .applied, .conflict])
        }
    }

    @Test(arguments: Backend.allCases)
    func aBatchAfterAnAnsweredOneIsAnsweredAfresh(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            let first = try await harness.push(
                [Mutation(mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: Self.note)],
                token: token)
            let second = try await harness.push(
                [
                    Mutation(mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: Self.note),
                    Mutation(mutationID: 2, collection: "notes", id: "n", baseVersion: 1, value: nil),
                ],
                token: token
            )
            // Mutation 1 was processed: it is answered as before, not applied again; 2 is new.
            #expect(second == [first[0], MutationResult(mutationID: 2, status: .applied, version: 2)])
        }
    }
}
