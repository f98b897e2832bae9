import AmberSyncProtocol
import AmberTestSupport
import Testing

@testable import AmberSync

/// The three-way decision for one record, case by case.
@Suite(.boundedConcurrency) struct RecordMergeTests {
    static let base: JSONObject = ["text": .string("milk"), "pinned": .bool(false)]
    static let edited: JSONObject = ["text": .string("milk, eggs"), "pinned": .bool(false)]
    static let editedThere: JSONObject = ["text": .string("milk"), "pinned": .bool(true)]

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let agreed: JSONObject?
        let mine: JSONObject?
        let theirs: JSONObject?
        var serverWentBack = false
        let decision: RecordMerge.Decision
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "unchanged on both sides", agreed: base, mine: base, theirs: base, decision: .takeTheirs),
        Case(name: "edited there only", agreed: base, mine: base, theirs: editedThere, decision: .takeTheirs),
        Case(name: "deleted there only", agreed: base, mine: base, theirs: nil, decision: .takeTheirs),
        Case(name: "edited here only", agreed: base, mine: edited, theirs: base, decision: .merge),
        Case(name: "edited on both sides", agreed: base, mine: edited, theirs: editedThere, decision: .merge),
        Case(name: "edited here, deleted there", agreed: base, mine: edited, theirs: nil, decision: .keepMine),
        Case(name: "deleted here, unchanged there", agreed: base, mine: nil, theirs: base, decision: .keepDeletion),
        Case(name: "deleted here, edited there", agreed: base, mine: nil, theirs: editedThere, decision: .takeTheirs),
        Case(name: "deleted on both sides", agreed: base, mine: nil, theirs: nil, decision: .takeTheirs),
        Case(name: "new here, unknown there", agreed: nil, mine: edited, theirs: nil, decision: .keepMine),
        Case(name: "new on both sides under one id", agreed: nil, mine: edited, theirs: editedThere, decision: .merge),
        Case(name: "new there", agreed: nil, mine: nil, theirs: editedThere, decision: .takeTheirs),
        Case(
            name: "the server went back to an older state", agreed: edited, mine: edited, theirs: base,
            serverWentBack: true, decision: .keepMine),
        Case(
            name: "the server went back, deleted here meanwhile", agreed: base, mine: nil, theirs: base,
            serverWentBack: true, decision: .keepMine),
        // Numbers compare by their digits: 1.0 is not 1.
        Case(
            name: "a number written differently is a change", agreed: ["n": .integer(1)],
            mine: ["n": .number(JSONNumber("1.0")!)], theirs: ["n": .integer(1)], decision: .merge),
    ]

    @Test(arguments: cases)
    func decides(_ test: Case) {
        let decision = RecordMerge.decide(
            agreed: test.agreed, mine: test.mine, theirs: { test.theirs }, serverWentBack: test.serverWentBack)
        #expect(decision == test.decision)
    }

    /// The server's record is written in the model's form only when the decision needs it.
    @Test func theServersRecordIsLookedAtOnlyWhenNeeded() {
        var looked = 0
        let theirs = { () -> JSONObject? in
            looked += 1
            return Self.editedThere
        }
        #expect(
            RecordMerge.decide(agreed: Self.base, mine: Self.base, theirs: theirs, serverWentBack: false) == .takeTheirs
        )
        #expect(looked == 0)
        #expect(RecordMerge.decide(agreed: Self.base, mine: nil, theirs: theirs, serverWentBack: false) == .takeTheirs)
        #expect(looked == 1)
    }
}
