import AmberSyncProtocol
import AmberTestSupport
import Foundation
import PropertyBased
import Testing

/// A push's mutations are read member by member, without a dictionary, when they are written
/// plainly, and their records in one pass when canonical with ASCII keys; any other text takes
/// the full reading. Whichever way, a push reads as the same mutations as a reading of its whole
/// tree, and a push one refuses the other refuses.
@Suite(.boundedConcurrency) struct MutationReadingTests {
    /// Both readings of `body` as a `Value` agree: its own (`init(jsonBytes:)`) and that of its
    /// whole tree (`init(readingJSONBytes:)`, which writes each record again) give equal values,
    /// on which `check` then runs with the value read, or both refuse.
    static func expectSame<Value: JSONWireDecodable & Equatable>(
        _ type: Value.Type, _ body: [UInt8], sourceLocation: SourceLocation = #_sourceLocation,
        check: (Value) -> Void = { _ in }
    ) {
        let text = String(decoding: body, as: UTF8.self)
        let read = Result { () throws(JSONWireError) in try Value(jsonBytes: body) }
        let tree = Result { () throws(JSONWireError) in try Value(readingJSONBytes: body) }
        switch (read, tree) {
        case (.success(let read), .success(let tree)):
            #expect(read == tree, "\(text)", sourceLocation: sourceLocation)
            check(read)
        case (.failure, .failure):
            break
        case (let read, let tree):
            Issue.record("\(text): read \(read), as a tree \(tree)", sourceLocation: sourceLocation)
        }
    }

    /// A push reads as its tree does, each record in the writer's form, as the tree writes it.
    static func expectSameReading(_ body: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        expectSame(PushRequest.self, body, sourceLocation: sourceLocation) { read in
            for mutation in read.mutations {
                guard let record = mutation.record else { continue }
                #expect(
                    Array(record.text.utf8) == Array(JSONRecord(record.object).text.utf8),
                    "\(String(decoding: body, as: UTF8.self))", sourceLocation: sourceLocation)
            }
        }
    }

    static func push(_ mutations: [String]) -> [UInt8] {
        Array(#"{"clientID":"c","mutations":[\#(mutations.joined(separator: ","))]}"#.utf8)
    }

    @Test(arguments: [
        #"{"baseVersion":null,"collection":"notes","id":"1","mutationID":1,"value":{"a":1}}"#,
        #"{"value":{"a":1},"mutationID":1,"id":"1","collection":"notes"}"#,
        #" { "mutationID" : 1 , "collection" : "notes" , "id" : "1" , "value" : null } "#,
        #"{"mutationID":1,"collection":"notes","id":"1","baseVersion":7,"fields":["a","b"],"value":{"a":1,"b":2}}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","fields":null}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","extra":true,"value":{"a":1}}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","value":{"a":1},"extra":[1]}"#,
        #"{"mutationID":1,"collection":"notes","i\u0064":"1","value":{"a":1}}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","id":"2"}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","value":{"a":1},"value":{"a":1}}"#,
        #"{"mutationID":1.0,"collection":"notes","id":"1"}"#,
        #"{"mutationID":"1","collection":"notes","id":"1"}"#,
        #"{"mutationID":99999999999999999999,"collection":"notes","id":"1"}"#,
        #"{"mutationID":1,"collection":5,"id":"1"}"#,
        #"{"mutationID":1,"id":"1"}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","baseVersion":"7"}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","fields":["a",1]}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","fields":"a"}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","value":"text"}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","value":[1]}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","value":{"b":1,"a":2}}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","value":{"a":1,"a":2}}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","value":{"caf\#u{e9}":1,"cafe\#u{301}":2}}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","value":{"cafe\#u{301}":1,"caf\#u{e9}":2}}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","value":{"k":{"caf\#u{e9}":1,"cafe\#u{301}":2}}}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","value":{"caf\#u{e9}":"\#u{e9} 🍮"}}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","value":{"a":"\u00e9"}}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","value":{"a":"\ud83c\udf6e"}}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","value":{"a":"\ud83c"}}"#,
        #"{"mutationID":1,"collection":"notes","id":"1","value":{}}"#,
        #"{}"#,
        #"[]"#,
        #"null"#,
    ])
    func aMutationReadsAsItsTreeDoes(mutation: String) {
        Self.expectSameReading(Self.push([mutation]))
    }

    /// Bytes that are not UTF-8, in a record's value or key or in an id, are refused however the
    /// record is written.
    @Test func textThatIsNotUTF8IsRefused() {
        let plain = Array(#"{"mutationID":1,"collection":"notes","id":"1","value":{"a":"x"#.utf8)
        for invalid: [UInt8] in [[0xFF], [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xC0, 0xAF]] {
            let value = plain + invalid + Array(#""}}"#.utf8)
            let key =
                Array(#"{"mutationID":1,"collection":"notes","id":"1","value":{"a"#.utf8) + invalid
                + Array(#"":1}}"#.utf8)
            let id = Array(#"{"mutationID":1,"collection":"notes","id":"1"#.utf8) + invalid + Array(#""}"#.utf8)
            for mutation in [value, key, id] {
                let body = Array(#"{"clientID":"c","mutations":["#.utf8) + mutation + Array("]}".utf8)
                guard
                    case .failure(let error) = Result(catching: { () throws(JSONWireError) in
                        try PushRequest(jsonBytes: body)
                    })
                else {
                    Issue.record("accepted \(mutation)")
                    continue
                }
                #expect(error.sentence(subject: "The push").contains("UTF-8"), "\(error)")
            }
        }
    }

    /// Mutations written in any order, with members missing, twice, unknown, escaped or of the
    /// wrong kind, and records written canonically or loosely, read as their trees do.
    @Test func anyMutationReadsAsItsTreeDoes() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int.max)) { seed in
            var random = SeededGenerator(seed: UInt64(seed))
            let mutations = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                Self.randomMutation(using: &random)
            }
            Self.expectSameReading(Self.push(mutations))
        }
    }

    static func randomMutation(using random: inout SeededGenerator) -> String {
        func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }
        var members: [(String, String)] = []
        if !chance(5) {
            members.append(("mutationID", chance(90) ? String(Int64.random(in: 1...1_000_000, using: &random)) : "1.5"))
        }
        if !chance(5) { members.append(("collection", chance(95) ? #""notes""# : "7")) }
        if !chance(5) {
            members.append(("id", chance(95) ? text(.string(JSONWireTests.randomString(using: &random))) : "null"))
        }
        if chance(50) {
            members.append(("baseVersion", chance(80) ? String(Int.random(in: 1...99, using: &random)) : "null"))
        }
        if chance(20) { members.append(("fields", chance(80) ? #"["a","b"]"# : (chance(50) ? "null" : "[1]"))) }
        if !chance(10) {
            var object: JSONObject = [:]
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                object[
                    chance(50)
                        ? "k\(Int.random(in: 0...9, using: &random))" : JSONWireTests.randomString(using: &random)] =
                    JSONWireTests.randomValue(depth: 1, using: &random)
            }
            var loose = ""
            if chance(30) { CanonicalRecordTests.writeLoosely(.object(object), to: &loose) }
            members.append(("value", chance(95) ? (loose.isEmpty ? JSONRecord(object).text : loose) : "null"))
        }
        if chance(5) { members.append(("extra", "true")) }
        if chance(5), let twice = members.randomElement(using: &random) { members.append(twice) }
        members.shuffle(using: &random)
        let escapedKey = chance(5)
        return "{"
            + members.map { key, value in
                (escapedKey && key == "id" ? #""i\u0064""# : text(.string(key))) + (chance(10) ? " : " : ":") + value
            }.joined(separator: ",") + "}"
    }

    static func text(_ value: JSONValue) -> String {
        String(decoding: JSONWriter.bytes(of: value), as: UTF8.self)
    }

    /// A push's answer reads as the reading of its whole tree does, result by result.
    static func expectSameAnswer(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectSame(PushResponse.self, Array(text.utf8), sourceLocation: sourceLocation)
    }

    @Test(arguments: [
        #"{"mutationID":1,"status":"applied","version":7}"#,
        #"{ "version" : 7 , "status" : "conflict" , "mutationID" : 1 }"#,
        #"{"mutationID":1,"status":"conflict","value":null,"version":7}"#,
        #"{"mutationID":1,"status":"conflict","value":{"a":1},"version":7}"#,
        #"{"fields":["a"],"mutationID":1,"status":"applied","value":{"a":1},"version":7}"#,
        #"{"mutationID":1,"status":"applied","version":7,"extra":1}"#,
        #"{"mutationID":1,"status":"applied","version":7,"version":8}"#,
        #"{"mutationID":1,"st\u0061tus":"applied","version":7}"#,
        #"{"mutationID":1,"status":"done","version":7}"#,
        #"{"mutationID":1,"status":"applied","version":7.0}"#,
        #"{"mutationID":1,"status":"applied"}"#,
        #"{"mutationID":"1","status":"applied","version":7}"#,
        #"{}"#,
        #"[]"#,
        #"7"#,
    ])
    func anAnswerReadsAsItsTreeDoes(result: String) {
        Self.expectSameAnswer(#"{"results":["# + result + #"],"cursor":9,"cursorTag":"t"}"#)
        Self.expectSameAnswer(
            #"{"cursor":9,"results":[{"mutationID":0,"status":"applied","version":1},"# + result + "]}")
    }

    @Test func answersWithoutResultsOrOfOtherShapesReadAsTheirTreesDo() {
        for text in [
            #"{"results":[]}"#, #"{"cursor":1}"#, #"{"results":[],"results":[]}"#, #"{"results":{}}"#,
            #"{"results":[],"cursor":"9"}"#, #"[]"#,
        ] {
            Self.expectSameAnswer(text)
        }
    }

    /// A pull's changes read as the reading of its whole tree does; a record kept as text keeps
    /// the bytes it came with.
    static func expectSamePull(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectSame(PullResponse.self, Array(text.utf8), sourceLocation: sourceLocation) { read in
            for change in read.changes {
                guard let record = change.record else { continue }
                #expect(text.utf8.contains(record.text.utf8), "\(text)", sourceLocation: sourceLocation)
            }
        }
    }

    static func pull(_ changes: [String]) -> String {
        #"{"changes":["# + changes.joined(separator: ",") + #"],"cursor":9,"cursorTag":"t","hasMore":false}"#
    }

    @Test(arguments: [
        #"{"collection":"notes","id":"1","value":{"a":1},"version":3}"#,
        #"{ "version" : 3 , "value" : { "b" : 1 , "a" : 2 } , "id" : "1" , "collection" : "notes" }"#,
        #"{"collection":"notes","id":"1","value":null,"version":3}"#,
        #"{"collection":"notes","id":"1","version":3}"#,
        #"{"collection":"notes","id":"1","value":{"a":1},"version":3,"extra":1}"#,
        #"{"collection":"notes","id":"1","id":"2","value":{"a":1},"version":3}"#,
        #"{"collection":"notes","i\u0064":"1","value":{"a":1},"version":3}"#,
        #"{"collection":"notes","id":"1","value":{"a":1},"version":"3"}"#,
        #"{"collection":"notes","id":"1","value":"text","version":3}"#,
        #"{"collection":"notes","id":"1","value":{"a":1,"a":2},"version":3}"#,
        #"{"collection":"notes","id":"1","value":{"caf\#u{e9}":1,"cafe\#u{301}":2},"version":3}"#,
        #"{"collection":"notes","id":"1","value":{"cafe\#u{301}":1,"caf\#u{e9}":2},"version":3}"#,
        #"{"collection":"notes","id":"1","value":{"a":"\ud83c"},"version":3}"#,
        #"{"collection":"notes","id":"1","value":{"a":"\u00e9 \/"},"version":3}"#,
        #"{"collection":"notes","id":"1","value":{"a":"\#u{e9} 🍮","b":[1,{"c":null}]},"version":3}"#,
    ])
    func aPulledChangeReadsAsItsTreeDoes(change: String) {
        Self.expectSamePull(Self.pull([change]))
    }

    /// Records written canonically or loosely, with keys of any kind, read as their trees do.
    @Test func anyPulledChangeReadsAsItsTreeDoes() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var random = SeededGenerator(seed: UInt64(seed))
            var object: JSONObject = [:]
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                object[JSONWireTests.randomString(using: &random)] = JSONWireTests.randomValue(depth: 1, using: &random)
            }
            var loose = ""
            CanonicalRecordTests.writeLoosely(.object(object), to: &loose)
            let value = Bool.random(using: &random) ? JSONRecord(object).text : loose
            Self.expectSamePull(Self.pull([#"{"collection":"notes","id":"1","value":"# + value + #","version":3}"#]))
        }
    }

    /// The comparisons above compare readings, not refusals: plain texts read.
    @Test func plainTextsRead() throws {
        let mutation = try PushRequest(
            jsonBytes: Self.push([
                #"{"baseVersion":2,"collection":"notes","fields":["a"],"id":"1","mutationID":5,"value":{"a":"\#u{e9}"}}"#
            ])
        ).mutations
        #expect(
            mutation == [
                Mutation(
                    mutationID: 5, collection: "notes", id: "1", baseVersion: 2,
                    record: JSONRecord(unchecked: #"{"a":"\#u{e9}"}"#), fields: ["a"])
            ])
        let answer = try PushResponse(
            jsonBytes: Array(#"{"results":[{"mutationID":5,"status":"applied","version":7}],"cursor":7}"#.utf8))
        #expect(answer == PushResponse(results: [.init(mutationID: 5, status: .applied, version: 7)], cursor: 7))
        let pull = try PullResponse(
            jsonBytes: Array(Self.pull([#"{"collection":"notes","id":"1","value":{"a":1},"version":3}"#]).utf8))
        #expect(pull.changes.map(\.record?.text) == [#"{"a":1}"#])
        #expect(pull.changes.map(\.version) == [3])
    }

    @Test func aCanonicalObjectEndsAtItsClosingBrace() {
        func end(_ text: String, from start: Int = 0) -> Int? {
            Array(text.utf8).withUnsafeBytes { JSONSyntax.canonicalObjectEnd($0, from: start) }
        }
        #expect(end(#"{"a":{"b":[1,{}]},"c":"}"},"rest""#) == 26)
        #expect(end(#"x{"a":1}"#, from: 1) == 8)
        #expect(end(#"{}"#) == 2)
        #expect(end(#"[1]"#) == nil)
        #expect(end(#"{"b":1,"a":2}"#) == nil)
        #expect(end(#"{"a":1,"a":2}"#) == nil)
        #expect(end(#"{"a": 1}"#) == nil)
        #expect(end(#"{"\#u{e9}":1}"#) == nil)
        #expect(end(#"{"a":{"\#u{e9}":1}}"#) == nil)
        #expect(end(#"{"a":"\#u{e9}"}"#) == 10)
    }
}
