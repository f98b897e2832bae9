import AmberSyncProtocol
import AmberTestSupport
import Foundation
import PropertyBased
import Testing

/// The exact JSON reader and writer the protocol travels in.
@Suite(.boundedConcurrency) struct JSONWireTests {
    static func read(_ text: String) throws(JSONWireError) -> JSONValue {
        try JSONReader.value(from: Array(text.utf8))
    }

    static func write(_ value: JSONValue) -> String {
        JSONWriter.text(of: value)
    }

    @Test(arguments: [
        "18446744073709551615", "-9223372036854775809", "1180591620717411303424", "1.0", "-0.0", "-0", "1e400",
        "1E+2", "2.50", "0.1000000000000000000000000001", "-1.5e-7",
    ])
    func numbersKeepTheirDigits(literal: String) throws {
        let value = try Self.read(literal)
        #expect(value == .number(JSONNumber(literal)!))
        #expect(Self.write(value) == literal)
        #expect(Self.write(try Self.read("{\"n\": \(literal)}")) == "{\"n\":\(literal)}")
    }

    @Test func integersThatFitInt64AreIntegers() throws {
        #expect(try Self.read("9223372036854775807") == .integer(.max))
        #expect(try Self.read("-9223372036854775808") == .integer(.min))
        #expect(try Self.read("0") == .integer(0))
        #expect(try Self.read("9223372036854775808") == .number(JSONNumber("9223372036854775808")!))
        #expect(JSONValue.number(JSONNumber("1.0")!) != .integer(1))
        #expect(JSONNumber("18446744073709551615")?.uint64Value == .max)
        #expect(JSONNumber("01") == nil && JSONNumber("1.") == nil && JSONNumber("+1") == nil)
        #expect(JSONNumber(Double.infinity) == nil)
        #expect(JSONNumber(Double(0.1))?.text == "0.1")
    }

    @Test func stringsAndKeysKeepTheirBytes() throws {
        let composed = "caf\u{e9}"
        let decomposed = "cafe\u{301}"
        let value = try Self.read("{\"\(decomposed)\": \"\(composed)\", \"x\": \"\\u00e9\\ud83d\\ude00\\n\\\"\\/\"}")
        guard case .object(let members) = value else { Issue.record("not an object"); return }
        let key = try #require(members.keys.first { $0 != "x" })
        #expect(Array(key.utf8) == Array(decomposed.utf8))
        #expect(members["x"] == .string("\u{e9}😀\n\"/"))
        #expect(Self.write(value) == "{\"\(decomposed)\":\"\(composed)\",\"x\":\"\u{e9}😀\\n\\\"/\"}")
        // Canonically equivalent strings are different values.
        #expect(JSONValue.string(composed) != .string(decomposed))
        #expect(!JSONValue.exactlyEqual([composed: .null], [decomposed: .null]))
        #expect(JSONValue.exactlyEqual([composed: .null], [composed: .null]))
        #expect(Self.write(.string("\u{1}\u{1f}")) == "\"\\u0001\\u001f\"")
    }

    @Test func keysTwiceAreRefusedWithTheirPath() throws {
        #expect(throws: JSONWireError.field(path: [.key("a"), .index(1)], problem: "has the key `k` twice")) {
            try Self.read(#"{"a": [0, {"k": 1, "k": 2}]}"#)
        }
        do {
            _ = try Self.read("{\"caf\u{e9}\": 1, \"cafe\u{301}\": 2}")
            Issue.record("two equivalent keys were read")
        } catch {
            let sentence = error.sentence(subject: "The body")
            #expect(
                sentence.hasPrefix("The body has the keys `caf\u{e9}` (U+0063 U+0061 U+0066 U+00E9) and"), "\(sentence)"
            )
        }
    }

    @Test func malformedTextIsRefused() {
        for text in ["{", "[1,]", "01", "\"\\ud800\"", "\"\\udc00x\"", "{\"a\" 1}", "nul", "1 2"] {
            #expect(throws: JSONWireError.self, "\(text)") { try Self.read(text) }
        }
        #expect(throws: JSONWireError.syntax("has a string that is not valid UTF-8", offset: 1)) {
            try JSONReader.value(from: [0x22, 0xF0, 0x9F, 0x98, 0x22])
        }
    }

    /// Strings are scanned eight bytes at a time between the bytes a scan must look at: each such
    /// byte is found at every offset from a word's start, in a string longer than a word, and a
    /// control character is refused at its own offset.
    @Test func everyByteOfAStringIsLookedAtWhereverItFalls() throws {
        for offset in 0..<20 {
            // The string starts at index 2 (`["`): offsets 0 to 19 cover every place in a word.
            let before = String(repeating: "a", count: offset)
            let after = String(repeating: "é", count: 9)
            #expect(try Self.read(#"["\#(before)\"\#(after)"]"#) == .array([.string(before + "\"" + after)]))
            #expect(try Self.read(#"["\#(before)\n\#(after)"]"#) == .array([.string(before + "\n" + after)]))
            #expect(try Self.read(#"["\#(before)"]"#) == .array([.string(before)]))
            var bytes = Array(#"["\#(before)_\#(after)"]"#.utf8)
            for control: UInt8 in [0x00, 0x01, 0x0A, 0x1F] {
                bytes[2 + offset] = control
                #expect(throws: JSONWireError.syntax("has a control character inside a string", offset: 2 + offset)) {
                    try JSONReader.value(from: bytes)
                }
            }
            bytes[2 + offset] = 0x7F
            #expect(try JSONReader.value(from: bytes) == .array([.string(before + "\u{7F}" + after)]))
            // The writer escapes each of them wherever it falls, and reads back what it wrote.
            for (special, escaped) in [("\"", #"\""#), ("\\", #"\\"#), ("\n", #"\n"#), ("\u{01}", #"\u0001"#)] {
                let value = JSONValue.string(before + special + after)
                #expect(Self.write(value) == "\"" + before + escaped + after + "\"")
                #expect(try Self.read(Self.write(value)) == value)
            }
            #expect(Self.write(.string(before + "\u{7F}" + after)) == "\"" + before + "\u{7F}" + after + "\"")
            // The canonical check: the writer's escapes pass, others do not, a quote ends the key.
            let canonical: [(String, Bool)] = [
                (#"{"k":"\#(before)\"\#(after)"}"#, true),
                (#"{"k":"\#(before)\u001f\#(after)"}"#, true),
                (#"{"k":"\#(before)\u0041\#(after)"}"#, false),
                (#"{"k":"\#(before)\/\#(after)"}"#, false),
                (#"{"\#(before)b":1,"\#(before)a":2}"#, false),
                (#"{"\#(before)a":1,"\#(before)b":2}"#, true),
            ]
            for (text, isCanonical) in canonical {
                _ = try Self.read(text)
                #expect(Array(text.utf8).withUnsafeBytes { JSONSyntax.isCanonical($0) } == isCanonical, "\(text)")
            }
        }
    }

    @Test func protocolFieldsOfTheWrongKindAreNamed() {
        let cases: [(String, String)] = [
            (#"{"mutationID": 1.5, "collection": "c", "id": "i"}"#, "`m.mutationID` must be an integer from"),
            (
                #"{"mutationID": 1, "collection": "c", "id": "i", "baseVersion": 1e3}"#,
                "`m.baseVersion` must be an integer"
            ),
            (#"{"mutationID": 1, "collection": 1, "id": "i"}"#, "`m.collection` must be a string"),
            (#"{"mutationID": 1, "collection": "c", "id": "i", "fields": [1]}"#, "`m.fields[0]` must be a string"),
            (#"{"mutationID": 1, "collection": "c"}"#, "`m.id` is missing"),
            (#"{"mutationID": null, "collection": "c", "id": "i"}"#, "`m.mutationID` must not be null"),
        ]
        for (text, phrase) in cases {
            do {
                _ = try Mutation(json: try Self.read(text), path: [.key("m")])
                Issue.record("\(text) was read")
            } catch {
                #expect(error.sentence(subject: "It").contains(phrase), "\(text) → \(error)")
            }
        }
    }

    @Test func wireTypesRoundTrip() throws {
        let value: JSONObject = ["n": .number(JSONNumber("1.0")!), "big": .number(JSONNumber("18446744073709551615")!)]
        let push = PushRequest(
            clientID: "c",
            mutations: [
                Mutation(mutationID: 1, collection: "c", id: "i", baseVersion: nil, value: value, fields: ["n"]),
                Mutation(mutationID: 2, collection: "c", id: "j", baseVersion: 3, value: nil),
            ])
        #expect(try PushRequest(jsonBytes: JSONWriter.bytes(of: push)) == push)
        let answer = PushResponse(results: [
            MutationResult(mutationID: 1, status: .conflict, version: 4, value: nil, fields: ["n"]),
            MutationResult(mutationID: 2, status: .applied, version: 5, value: value),
        ])
        #expect(try PushResponse(jsonBytes: JSONWriter.bytes(of: answer)) == answer)
        let page = PullResponse(
            changes: [RecordChange(collection: "c", id: "i", version: 1, value: value)], cursor: 1, hasMore: false)
        #expect(try PullResponse(jsonBytes: JSONWriter.bytes(of: page)) == page)
        #expect(
            JSONWriter.text(of: page)
                == #"{"changes":[{"collection":"c","id":"i","value":{"big":18446744073709551615,"n":1.0},"version":1}],"cursor":1,"hasMore":false}"#
        )
        // The same text as `JSONEncoder` with sorted keys, for values it can write exactly.
        let plain = PullResponse(
            changes: [
                RecordChange(
                    collection: "c", id: "i/2", version: 1, value: ["t": .string("a\"b\\c\n"), "n": .integer(3)])
            ],
            cursor: 1, hasMore: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(JSONWriter.text(of: plain) == String(decoding: try encoder.encode(plain), as: UTF8.self))
    }

    /// A pull answer keeps each record as its text, checked as strictly as a whole read.
    @Test func pulledRecordsTravelAsTheirTextAndAreChecked() throws {
        let text =
            #"{"changes": [{"collection": "c", "id": "i", "value": {"z": 1.50, "a": 18446744073709551616}, "version": 1}, "#
            + #"{"collection": "c", "id": "j", "value": null, "version": 2}], "cursor": 2, "hasMore": false, "total": 2}"#
        let page = try PullResponse(jsonBytes: Array(text.utf8))
        #expect(page.changes.map(\.record?.text) == [#"{"z": 1.50, "a": 18446744073709551616}"#, nil])
        #expect(
            page.changes[0].value == [
                "z": .number(JSONNumber("1.50")!), "a": .number(JSONNumber("18446744073709551616")!),
            ])
        #expect(page.total == 2)
        // Read as a whole tree, the same answer.
        #expect(try PullResponse(readingJSONBytes: Array(text.utf8)) == page)
        // Written again, the record's text is carried as it is.
        #expect(JSONWriter.text(of: page).contains(#""value":{"z": 1.50, "a": 18446744073709551616}"#))

        let change = #"{"collection": "c", "id": "i", "version": 1, "value": "#
        let refused: [(String, String)] = [
            (change + #"{"k": 1, "k": 2}}"#, "`changes[0].value` has the key `k` twice"),
            (change + #"{"a": [{"caf\u00e9": 1, "cafe\u0301": 2}]}}"#, "`changes[0].value.a[0]` has the keys"),
            (change + #""text"}"#, "`changes[0].value` must be a JSON object or null, not a string"),
            (change + #"[1]}"#, "`changes[0].value` must be a JSON object or null, not an array"),
            (change + #"{"s": "\ud800"}}"#, "lone surrogate"),
            (
                #"{"collection": "c", "id": "i", "version": 1.5, "value": null}"#,
                "`changes[0].version` must be an integer"
            ),
            (#"{"collection": "c", "version": 1, "value": {}}"#, "`changes[0].id` is missing"),
        ]
        for (change, phrase) in refused {
            let answer = #"{"changes": ["# + change + #"], "cursor": 1, "hasMore": false}"#
            do {
                _ = try PullResponse(jsonBytes: Array(answer.utf8))
                Issue.record("\(answer) was read")
            } catch {
                #expect(error.sentence(subject: "The answer").contains(phrase), "\(answer) → \(error)")
            }
        }
        for answer in [
            #"{"cursor": 1, "hasMore": false}"#, #"{"changes": [], "changes": [], "cursor": 1, "hasMore": false}"#,
            #"{"changes": {}, "cursor": 1, "hasMore": false}"#, #"[]"#, #"{"changes": [], "cursor": 1}"#,
        ] {
            #expect(throws: JSONWireError.self, "\(answer)") { try PullResponse(jsonBytes: Array(answer.utf8)) }
        }
    }

    /// Keys are written in the order of their UTF-8 bytes: `String`'s `<` takes canonically
    /// equivalent prefixes as equal and could write the same object two ways.
    @Test func keysAreWrittenInTheOrderOfTheirBytes() throws {
        let keys = ["e\u{301}", "\u{e9}\u{7f}", "z", "a", "\u{e9}", "E"]
        let written = Set(
            (0..<20).map { round in
                var object: JSONObject = [:]
                for (offset, key) in keys.enumerated() where !(key == "\u{e9}" && round % 2 == 0) {
                    object[key] = .integer(Int64(offset))
                }
                return Self.write(.object(object))
            })
        // Two objects (with and without "é", which Swift takes for "e\u{301}"), each always the same text.
        #expect(written.count == 2)
        for text in written {
            let value = try Self.read(text)
            #expect(Self.write(value) == text)
            guard case .object(let members) = value else { continue }
            let order = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            let positions = order.map { text.range(of: "\"\($0)\"")!.lowerBound }
            #expect(positions == positions.sorted())
        }
    }

    /// Any value written and read again is the same value, and writes the same text again.
    @Test func writingThenReadingGivesTheSameValue() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var random = SeededGenerator(seed: UInt64(seed))
            let value = Self.randomValue(depth: 0, using: &random)
            let text = JSONWriter.bytes(of: value)
            do {
                let read = try JSONReader.value(from: text)
                #expect(read == value)
                #expect(JSONWriter.bytes(of: read) == text)
            } catch {
                Issue.record("\(String(decoding: text, as: UTF8.self)): \(error)")
            }
        }
    }

    static let pieces = [
        "a", "Z", "0", " ", "\u{e9}", "e\u{301}", "\"", "\\", "/", "\n", "\u{1}", "😀", "\u{7f}", "\u{2028}",
    ]

    static func randomString(using random: inout SeededGenerator) -> String {
        (0..<Int.random(in: 0...6, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
    }

    static func randomNumber(using random: inout SeededGenerator) -> JSONValue {
        if Bool.random(using: &random) { return .integer(Int64.random(in: .min ... .max, using: &random)) }
        var text = Bool.random(using: &random) ? "-" : ""
        let digits = (0..<Int.random(in: 1...25, using: &random)).map { _ in
            String(Int.random(in: 0...9, using: &random))
        }
        text += digits.first == "0" ? "0" : digits.joined()
        if Bool.random(using: &random) {
            text +=
                "."
                + (0..<Int.random(in: 1...5, using: &random)).map { _ in "\(Int.random(in: 0...9, using: &random))" }
                .joined()
        }
        if Bool.random(using: &random) {
            text +=
                ["e", "E", "e+", "e-"].randomElement(using: &random)! + "\(Int.random(in: 0...400, using: &random))"
        }
        if let integer = Int64(text), text != "-0" { return .integer(integer) }
        return .number(JSONNumber(text)!)
    }

    static func randomValue(depth: Int, using random: inout SeededGenerator) -> JSONValue {
        switch Int.random(in: 0...(depth < 4 ? 7 : 4), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2, 3: return randomNumber(using: &random)
        case 4: return .string(randomString(using: &random))
        case 5:
            return .array(
                (0..<Int.random(in: 0...4, using: &random)).map { _ in randomValue(depth: depth + 1, using: &random) })
        default:
            var object: JSONObject = [:]
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                object[randomString(using: &random)] = randomValue(depth: depth + 1, using: &random)
            }
            return .object(object)
        }
    }
}
