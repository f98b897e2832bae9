import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@Suite(.boundedConcurrency) struct IsolationTests {
    @Test(arguments: Backend.allCases)
    func oneUserNeverSeesNorChangesAnothersRecords(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let ann = try await harness.addUser("ann")
            let bob = try await harness.addUser("bob")
            let annResults = try await harness.push(
                [
                    Mutation(
                        mutationID: 1, collection: "notes", id: "shared-id", baseVersion: nil,
                        value: .strings(["text": "ann's"])),
                    Mutation(
                        mutationID: 2, collection: "notes", id: "ann-only", baseVersion: nil,
                        value: .strings(["text": "secret"])),
                ],
                clientID: "same-client",
                token: ann
            )
            #expect(annResults.map(\.version) == [1, 2])

            // Bob sees nothing of Ann's, even from cursor 0.
            let bobFirstPull = try await harness.pull(token: bob)
            #expect(bobFirstPull.changes.isEmpty)
            #expect(bobFirstPull.cursor == 0)

            // The same collection, id, client id and mutation id are Bob's own: his versions start at 1.
            let bobResults = try await harness.push(
                [
                    Mutation(
                        mutationID: 1, collection: "notes", id: "shared-id", baseVersion: nil,
                        value: .strings(["text": "bob's"])),
                    Mutation(mutationID: 2, collection: "notes", id: "ann-only", baseVersion: 2, value: nil),
                    Mutation(
                        mutationID: 3, collection: "notes", id: "ann-only", baseVersion: 2, value: ["x": .integer(1)],
                        fields: ["x"]),
                ],
                clientID: "same-client",
                token: bob
            )
            #expect(bobResults[0] == MutationResult(mutationID: 1, status: .applied, version: 1))
            // A conflict tells Bob nothing of Ann's record: to him it does not exist.
            #expect(bobResults[1] == MutationResult(mutationID: 2, status: .conflict, version: 0, value: nil))
            #expect(
                bobResults[2] == MutationResult(mutationID: 3, status: .conflict, version: 0, value: nil, fields: ["x"])
            )

            let annRecords = try await harness.pullAll(token: ann)
            #expect(annRecords.map(\.value) == [.strings(["text": "ann's"]), .strings(["text": "secret"])])
            let bobRecords = try await harness.pullAll(token: bob)
            #expect(
                bobRecords == [
                    RecordChange(collection: "notes", id: "shared-id", version: 1, value: .strings(["text": "bob's"]))
                ])
        }
    }
}
