import AmberSyncProtocol
import Testing

@testable import AmberSyncServer

/// The kept answers of a push, written and read back.
@Suite struct PushAnswersTests {
    @Test func answersReadBackExactlyByMutationID() throws {
        var answers = PushAnswers()
        #expect(answers.isEmpty && answers.firstMutationID == nil)
        let value: JSONObject = [
            "n": .number(JSONNumber("123456789012345678901234567890")!), "caf\u{e9}": .string("e\u{301}"),
        ]
        answers.append(MutationResult(mutationID: 3, status: .applied, version: 10), fingerprint: "ab")
        answers.append(
            MutationResult(mutationID: 5, status: .conflict, version: 4, value: value, fields: ["n"]), fingerprint: nil)
        answers.append(MutationResult(mutationID: 9, status: .conflict, version: 0), fingerprint: "cd")
        #expect(answers.firstMutationID == 3 && answers.lastMutationID == 9)
        let read = try PushAnswers.read(results: answers.resultsText, fingerprints: answers.fingerprintsText)
        #expect(read.count == 3)
        #expect(read[3]?.result == MutationResult(mutationID: 3, status: .applied, version: 10))
        #expect(read[3]?.fingerprint == "ab")
        #expect(read[5]?.result.value == value && read[5]?.fingerprint == nil)
        #expect(JSONValue.exactlyEqual(read[5]?.result.value, value), "keys and digits keep their bytes")
        #expect(read[9]?.result.value == nil && read[9]?.result.status == .conflict)
        #expect(answers.fingerprintsText == #"["ab",null,"cd"]"#)
    }

    @Test(arguments: [
        (#"[{"mutationID":1,"status":"applied","version":1}]"#, #"[]"#),
        (#"[{"mutationID":1,"status":"applied","version":1}]"#, #"[1]"#),
        (#"{}"#, #"[]"#),
        (#"[{"mutationID":1,"status":"sent","version":1}]"#, #"["ab"]"#),
    ])
    func aRowAlteredBehindTheServersBackIsAnErrorNotAnAnswer(results: String, fingerprints: String) {
        #expect(throws: (any Error).self) { try PushAnswers.read(results: results, fingerprints: fingerprints) }
    }
}
