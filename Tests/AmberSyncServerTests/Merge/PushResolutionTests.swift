import AmberSyncProtocol
import AmberSyncServer
import AmberTestSupport
import Crypto
import Testing

/// The order of the push rules, apart from any backend.
@Suite(.boundedConcurrency) struct PushResolutionTests {
    let stored = ServerRecord(
        value: ["text": .string("old")], version: 4, createdVersion: 2, fieldVersions: ["text": 4])

    func mutation(_ id: Int64, base: Int64?, text: String) -> Mutation {
        Mutation(mutationID: id, collection: "notes", id: "n", baseVersion: base, value: ["text": .string(text)])
    }

    func isClientIDReused(_ error: any Error, mutationID: Int64) -> Bool {
        guard case SyncServerError.clientIDReused("phone", let id) = error else { return false }
        return id == mutationID
    }

    @Test func appliedMutationsTakeTheNextVersionsAndConflictsNone() throws {
        var resolution = PushResolution(clientID: "phone", version: 4, lastMutationID: 2)
        let first = mutation(3, base: 4, text: "a")
        let step = try resolution.resolve(first, fingerprint: MutationFingerprint.of(first), answered: nil) { stored }
        guard case .decided(.applied(let record, let result)) = step else {
            Issue.record("expected the mutation to apply, got \(step)")
            return
        }
        #expect(record.version == 5 && result.version == 5 && resolution.version == 5)
        let stale = mutation(4, base: 4, text: "b")
        let second = try resolution.resolve(stale, fingerprint: MutationFingerprint.of(stale), answered: nil) {
            record
        }
        #expect(second.isConflict && resolution.version == 5, "a conflict takes no version")
    }

    @Test func aRetryIsAnsweredAsBeforeWithoutReadingTheRecord() throws {
        var resolution = PushResolution(clientID: "phone", version: 9, lastMutationID: 3)
        let sent = mutation(3, base: 4, text: "a")
        let before = MutationResult(mutationID: 3, status: .applied, version: 5)
        let step = try resolution.resolve(
            sent, fingerprint: MutationFingerprint.of(sent), answered: (before, MutationFingerprint.of(sent))
        ) {
            Issue.record("a retry reads no record")
            return nil
        }
        #expect(step == .answeredBefore(before))
        #expect(resolution.version == 9)
        // Answers kept before fingerprints were have none: taken as retries.
        #expect(
            try resolution.resolve(sent, fingerprint: "f", answered: (before, nil)) { nil } == .answeredBefore(before))
    }

    @Test func anotherMutationUnderAnAnsweredIDIsAClientIDReused() throws {
        var resolution = PushResolution(clientID: "phone", version: 9, lastMutationID: 3)
        let other = mutation(3, base: 4, text: "from the copied phone")
        let before = MutationResult(mutationID: 3, status: .applied, version: 5)
        #expect {
            _ = try resolution.resolve(
                other, fingerprint: MutationFingerprint.of(other), answered: (before, "another fingerprint")
            ) { nil }
        } throws: { isClientIDReused($0, mutationID: 3) }
    }

    @Test(arguments: [1, 3] as [Int64])
    func aNewMutationNotNewerThanTheClientsLastIsAClientIDReused(id: Int64) throws {
        var resolution = PushResolution(clientID: "phone", version: 9, lastMutationID: 3)
        let old = mutation(id, base: nil, text: "a")
        #expect {
            _ = try resolution.resolve(old, fingerprint: MutationFingerprint.of(old), answered: nil) { nil }
        } throws: { isClientIDReused($0, mutationID: id) }
        #expect(resolution.version == 9, "nothing was decided")
    }

    /// A fingerprint is the SHA-256 of the mutation's canonical JSON, in lowercase hex: the
    /// same whether taken alone or with the others of a push, longer ones before shorter ones.
    @Test func fingerprintsAreTheSHA256OfTheCanonicalJSONAloneOrTogether() {
        let long = Mutation(
            mutationID: 7, collection: "notes", id: "n", baseVersion: 3,
            value: ["text": .string(String(repeating: "x", count: 2_000)), "n": .integer(1)])
        let short = mutation(8, base: nil, text: "é")
        let text = #"{"baseVersion":null,"collection":"notes","id":"n","mutationID":8,"value":{"text":"é"}}"#
        let expected = SHA256.hash(data: Array(text.utf8)).map { String($0, radix: 16) }
            .map { $0.count == 1 ? "0" + $0 : $0 }.joined()
        #expect(MutationFingerprint.of(short) == expected)
        let together = MutationFingerprint.ofEach([long, short, long])
        #expect(together == [MutationFingerprint.of(long), expected, MutationFingerprint.of(long)])
        #expect(together[0] != together[1] && together[0].count == 64)
    }
}

extension PushResolution.Step {
    fileprivate var isConflict: Bool {
        if case .decided(.conflict) = self { true } else { false }
    }
}
