import AmberSyncProtocol
import AmberSyncServer
import AmberTestSupport
import Testing

@Suite(.boundedConcurrency)
struct MutationResolverTests {
    /// A record created at version 10 with text and pinned, whose text changed at 12.
    let record = ServerRecord(
        value: ["id": .string("n"), "text": .string("sorbet"), "pinned": .bool(false)],
        version: 12,
        createdVersion: 10,
        fieldVersions: ["id": 10, "text": 12, "pinned": 10]
    )

    func mutation(base: Int64?, value: JSONObject?, fields: [String]? = nil) -> Mutation {
        Mutation(mutationID: 7, collection: "notes", id: "n", baseVersion: base, value: value, fields: fields)
    }

    @Test func aNewRecordAppliesWithBaseVersionNullAndGetsEveryFieldAtItsVersion() {
        let value: JSONObject = ["id": .string("n"), "text": .string("hi")]
        let outcome = MutationResolver.resolve(mutation(base: nil, value: value), against: nil, newVersion: 1)
        #expect(
            outcome
                == .applied(
                    ServerRecord(value: value, version: 1, createdVersion: 1, fieldVersions: [:]),
                    MutationResult(mutationID: 7, status: .applied, version: 1)
                )
        )
        guard case .applied(let record, _) = outcome else { return }
        #expect(record.version(ofField: "id") == 1 && record.version(ofField: "text") == 1)
    }

    @Test func aNewRecordIsStoredAsItsSentTextWhichIsNotRead() {
        // Keys in another order than the protocol writes them: were the record read and written
        // again, its text would change. A record created by a push is stored as sent.
        let sent = JSONRecord(unchecked: #"{"text":"hi","id":"n"}"#)
        let created = MutationResolver.resolve(
            Mutation(mutationID: 7, collection: "notes", id: "n", baseVersion: nil, record: sent), against: nil,
            newVersion: 3)
        guard case .applied(let record, let result) = created else {
            Issue.record("expected applied, got \(created)")
            return
        }
        #expect(record.record?.text == sent.text && record.isLive)
        #expect(result == MutationResult(mutationID: 7, status: .applied, version: 3))
        // Created again after its deletion, on the deletion's version: stored as sent too.
        let tombstone = ServerRecord(record: nil, version: 5, createdVersion: 5, fieldVersions: [:])
        let again = MutationResolver.resolve(
            Mutation(mutationID: 8, collection: "notes", id: "n", baseVersion: 5, record: sent), against: tombstone,
            newVersion: 6)
        #expect(
            again
                == .applied(
                    ServerRecord(record: sent, version: 6, createdVersion: 6, fieldVersions: [:]),
                    MutationResult(mutationID: 8, status: .applied, version: 6)))
    }

    @Test func aFieldWiseEditOfARecordCreatedInTheSameBatchMergesOnItsUntouchedFields() {
        let created = ServerRecord(
            record: JSONRecord(["id": .string("n"), "text": .string("a"), "pinned": .bool(false)]), version: 3,
            createdVersion: 3, fieldVersions: [:])
        // A field-wise edit based on the creation: applies, and only its field moves.
        let edit = MutationResolver.resolve(
            mutation(base: 3, value: ["pinned": .bool(true)], fields: ["pinned"]), against: created, newVersion: 4)
        guard case .applied(let edited, _) = edit else {
            Issue.record("expected applied, got \(edit)")
            return
        }
        #expect(edited.value == ["id": .string("n"), "text": .string("a"), "pinned": .bool(true)])
        #expect(edited.version(ofField: "pinned") == 4 && edited.version(ofField: "text") == 3)
        // Another device's edit of `text`, based on the creation: merges, since `text` never moved.
        let other = MutationResolver.resolve(
            mutation(base: 3, value: ["text": .string("b")], fields: ["text"]), against: edited, newVersion: 5)
        guard case .applied(let merged, _) = other else {
            Issue.record("expected applied, got \(other)")
            return
        }
        #expect(merged.value == ["id": .string("n"), "text": .string("b"), "pinned": .bool(true)])
        // And an edit of `pinned` based on the creation conflicts on that field alone.
        let late = MutationResolver.resolve(
            mutation(base: 3, value: ["pinned": .bool(false)], fields: ["pinned"]), against: merged, newVersion: 6)
        #expect(late.result.status == .conflict && late.result.fields == ["pinned"])
    }

    @Test func aFieldWiseEditKeepsTheKeyAndTextBytesAsSent() {
        let composed = "caf\u{e9}"
        let decomposed = "cafe\u{301}"
        let stored = ServerRecord(
            value: ["id": .string("n"), composed: .string(composed)], version: 4, createdVersion: 1,
            fieldVersions: ["id": 1, composed: 4])
        // The client writes the key, and its value, in the other normalization.
        let sent: JSONObject = ["id": .string("n"), decomposed: .string(decomposed)]
        guard
            case .applied(let record, let result) = MutationResolver.resolve(
                mutation(base: 4, value: sent, fields: [decomposed]), against: stored, newVersion: 5)
        else {
            Issue.record("expected applied")
            return
        }
        let keys = record.value?.keys.map { Array($0.utf8) } ?? []
        #expect(keys.contains(Array(decomposed.utf8)) && !keys.contains(Array(composed.utf8)))
        #expect(record.value?[decomposed] == .string(decomposed))
        #expect(record.fieldVersions[decomposed] == 5)
        // Stored exactly as sent, so the answer carries no value.
        #expect(result == MutationResult(mutationID: 7, status: .applied, version: 5))
    }

    @Test func aNonNullBaseVersionForARecordTheServerNeverHadIsAConflictWithValueNull() {
        let outcome = MutationResolver.resolve(
            mutation(base: 3, value: ["a": .integer(1)]), against: nil, newVersion: 1)
        #expect(outcome == .conflict(MutationResult(mutationID: 7, status: .conflict, version: 0, value: nil)))
    }

    @Test func baseVersionNullAgainstALiveRecordIsAConflictCarryingTheRecord() {
        let outcome = MutationResolver.resolve(
            mutation(base: nil, value: ["a": .integer(1)]), against: record, newVersion: 13)
        #expect(
            outcome == .conflict(MutationResult(mutationID: 7, status: .conflict, version: 12, value: record.value)))
    }

    @Test func aWholeReplaceOnTheCurrentVersionDropsMissingKeysAndVersionsOnlyChangedKeys() {
        let sent: JSONObject = ["id": .string("n"), "text": .string("sorbet"), "color": .string("red")]
        guard
            case .applied(let stored, let result) = MutationResolver.resolve(
                mutation(base: 12, value: sent), against: record, newVersion: 13)
        else {
            Issue.record("expected applied")
            return
        }
        #expect(stored.value == sent)
        #expect(stored.fieldVersions == ["id": 10, "text": 12, "pinned": 13, "color": 13])
        #expect(stored.createdVersion == 10)
        #expect(result == MutationResult(mutationID: 7, status: .applied, version: 13))
    }

    @Test func aWholeReplaceOnAnOlderVersionIsAConflictWithoutFields() {
        let outcome = MutationResolver.resolve(
            mutation(base: 11, value: ["id": .string("n")]), against: record, newVersion: 13)
        #expect(
            outcome == .conflict(MutationResult(mutationID: 7, status: .conflict, version: 12, value: record.value)))
    }

    @Test func fieldsUnchangedSinceAnOlderBaseMergeAndTheResultCarriesTheMergedRecord() {
        let sent: JSONObject = ["id": .string("n"), "text": .string("vanilla"), "pinned": .bool(true)]
        let outcome = MutationResolver.resolve(
            mutation(base: 10, value: sent, fields: ["pinned"]), against: record, newVersion: 13)
        let merged: JSONObject = ["id": .string("n"), "text": .string("sorbet"), "pinned": .bool(true)]
        #expect(
            outcome
                == .applied(
                    ServerRecord(
                        value: merged, version: 13, createdVersion: 10,
                        fieldVersions: ["id": 10, "text": 12, "pinned": 13]),
                    MutationResult(mutationID: 7, status: .applied, version: 13, value: merged)
                )
        )
    }

    @Test func aFieldMissingFromTheValueIsRemoved() {
        let outcome = MutationResolver.resolve(
            mutation(base: 12, value: ["id": .string("n")], fields: ["pinned"]), against: record, newVersion: 13
        )
        guard case .applied(let stored, _) = outcome else {
            Issue.record("expected applied")
            return
        }
        #expect(stored.value == ["id": .string("n"), "text": .string("sorbet")])
        #expect(stored.fieldVersions["pinned"] == 13)
    }

    @Test func aFieldChangedOnTheServerSinceTheBaseIsAConflictNamingOnlyThatField() {
        let outcome = MutationResolver.resolve(
            mutation(
                base: 11, value: ["text": .string("x"), "pinned": .bool(true)], fields: ["text", "pinned", "text"]),
            against: record,
            newVersion: 13
        )
        #expect(
            outcome
                == .conflict(
                    MutationResult(mutationID: 7, status: .conflict, version: 12, value: record.value, fields: ["text"])
                )
        )
    }

    @Test func aFieldRemovedOnTheServerSinceTheBaseCountsAsChanged() {
        var removed = record
        removed.value?["pinned"] = nil
        removed.fieldVersions["pinned"] = 12
        let outcome = MutationResolver.resolve(
            mutation(base: 11, value: ["pinned": .bool(true)], fields: ["pinned"]), against: removed, newVersion: 13
        )
        #expect(outcome.result.status == .conflict)
        #expect(outcome.result.fields == ["pinned"])
    }

    @Test func aBaseOlderThanTheRecordsReCreationIsAConflictListingEveryField() {
        let outcome = MutationResolver.resolve(
            mutation(base: 9, value: ["pinned": .bool(true)], fields: ["pinned"]), against: record, newVersion: 13
        )
        #expect(outcome.result.status == .conflict)
        #expect(outcome.result.fields == ["pinned"])
    }

    @Test func aDeleteOnTheCurrentVersionLeavesATombstoneAndADeleteWithFieldsDeletesWhole() {
        for fields in [nil, ["text"]] as [[String]?] {
            let outcome = MutationResolver.resolve(
                mutation(base: 12, value: nil, fields: fields), against: record, newVersion: 13)
            #expect(
                outcome
                    == .applied(
                        ServerRecord(value: nil, version: 13, createdVersion: 13, fieldVersions: [:]),
                        MutationResult(mutationID: 7, status: .applied, version: 13)
                    )
            )
        }
    }

    @Test func aDeleteOnAnOlderVersionIsAConflictEvenWhenItsFieldsDidNotChange() {
        let outcome = MutationResolver.resolve(
            mutation(base: 10, value: nil, fields: ["pinned"]), against: record, newVersion: 13)
        #expect(outcome.result.status == .conflict)
    }

    @Test func againstADeletedRecordAnEditConflictsWithValueNullAndAReCreationApplies() {
        let tombstone = ServerRecord(value: nil, version: 14, createdVersion: 14, fieldVersions: [:])
        let edit = MutationResolver.resolve(
            mutation(base: 12, value: ["text": .string("x")], fields: ["text"]), against: tombstone, newVersion: 15
        )
        #expect(
            edit
                == .conflict(
                    MutationResult(mutationID: 7, status: .conflict, version: 14, value: nil, fields: ["text"])))

        let value: JSONObject = ["id": .string("n"), "text": .string("back")]
        let recreation = MutationResolver.resolve(
            mutation(base: nil, value: value, fields: ["text"]), against: tombstone, newVersion: 15)
        #expect(
            recreation
                == .applied(
                    ServerRecord(value: value, version: 15, createdVersion: 15, fieldVersions: [:]),
                    MutationResult(mutationID: 7, status: .applied, version: 15)
                )
        )
    }

    @Test func aBaseNewerThanTheRecordIsAConflict() {
        let outcome = MutationResolver.resolve(
            mutation(base: 40, value: ["text": .string("x")], fields: ["text"]), against: record, newVersion: 13)
        #expect(outcome.result.status == .conflict)
        #expect(outcome.result.version == 12)
    }
}
