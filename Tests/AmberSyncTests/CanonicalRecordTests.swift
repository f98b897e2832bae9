import Amber
import AmberSQLite
import AmberSyncProtocol
import AmberTestSupport
import Foundation
import GRDB
import PropertyBased
import Testing

/// A pushed record is kept as its text when that text is already the protocol's own form, and
/// written in that form otherwise: either way the server stores what the writer writes.
@Suite(.boundedConcurrency) struct CanonicalRecordTests {
    /// The record of a push carrying `text` as its value, as the server reads it.
    static func pushed(_ text: String) throws(JSONWireError) -> JSONRecord? {
        let body =
            #"{"clientID":"c","mutations":[{"baseVersion":null,"collection":"notes","id":"1","mutationID":1,"value":"#
            + text + "}]}"
        return try PushRequest(jsonBytes: Array(body.utf8)).mutations[0].record
    }

    /// The writer's form of `text`.
    static func canonical(_ text: String) throws -> String {
        guard case .object(let object) = try JSONReader.value(from: Array(text.utf8)) else {
            throw JSONWireError.field(path: [], problem: "not an object")
        }
        return JSONRecord(object).text
    }

    static func isCanonical(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { JSONSyntax.isCanonical($0) }
    }

    @Test(arguments: [
        (#"{"a":1,"b":[true,null,{"c":"d"}]}"#, true),
        (#"{"b":1,"a":2}"#, false),
        (#"{"a": 1}"#, false),
        (#"{"a":[1, 2]}"#, false),
        (#"{"a":"x\/y"}"#, false),
        (#"{"a":"\u0041"}"#, false),
        (#"{"a":"\u001F"}"#, false),
        (#"{"a":"\u001f\u0000\n\r\t\b\f\"\\"}"#, true),
        (#"{"a":"\u000a"}"#, false),
        (#"{"a":"é 🍮 \u2028"}"#, false),
        (#"{"a":"é 🍮"}"#, true),
        (#"{"a":-0,"b":1.50,"c":1e400,"d":123456789012345678901234567890}"#, true),
        (#"{"a":{"z":1,"y":2}}"#, false),
        (#"{"a\"b":1}"#, false),
        (#"{"e":1,"z":2,"\#u{e9}":3}"#, true),
        (#"{"\#u{e9}":3,"e":1}"#, false),
        (#"{}"#, true),
        (#"{"":{},"a":[]}"#, true),
    ])
    func aRecordIsKeptOnlyInTheWritersForm(text: String, isCanonical: Bool) throws {
        #expect(Self.isCanonical(text) == isCanonical)
        let record = try #require(try Self.pushed(text))
        #expect(Array(record.text.utf8) == Array(try Self.canonical(text).utf8))
        if isCanonical { #expect(Array(record.text.utf8) == Array(text.utf8)) }
    }

    @Test func aValueThatIsNotAnObjectIsRefused() throws {
        #expect(throws: JSONWireError.self) { try Self.pushed(#""text""#) }
        #expect(throws: JSONWireError.self) { try Self.pushed(#"{"a":1,"a":2}"#) }
        #expect(try Self.pushed("null") == nil)
    }

    /// Any object the writer writes is canonical, unless a key needs an escape; written loosely
    /// (keys reversed, spaces, escapes the writer does not use) it is pushed as the writer writes it.
    @Test func everyObjectIsPushedInTheWritersForm() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var random = SeededGenerator(seed: UInt64(seed))
            var object: JSONObject = [:]
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                object[JSONWireTests.randomString(using: &random)] = JSONWireTests.randomValue(depth: 1, using: &random)
            }
            let written = JSONRecord(object).text
            #expect(Self.isCanonical(written) == !Self.hasEscapedKey(.object(object)), "\(written)")
            var loose = ""
            Self.writeLoosely(.object(object), to: &loose)
            do {
                let (kept, rewritten) = (try Self.pushed(written), try Self.pushed(loose))
                #expect(kept.map { Array($0.text.utf8) } == Array(written.utf8))
                #expect(rewritten.map { Array($0.text.utf8) } == Array(written.utf8), "\(loose)")
            } catch {
                Issue.record("\(loose): \(error)")
            }
        }
    }

    static func hasEscapedKey(_ value: JSONValue) -> Bool {
        switch value {
        case .object(let members):
            members.contains { key, value in
                key.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
                    || hasEscapedKey(value)
            }
        case .array(let elements): elements.contains(where: hasEscapedKey)
        default: false
        }
    }

    /// Valid JSON for `value` that is not the writer's: keys in reverse order, spaces, `\/` and
    /// `\u` escapes with capitals.
    static func writeLoosely(_ value: JSONValue, to text: inout String) {
        switch value {
        case .object(let members):
            text += "{ "
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.reversed()
            for (offset, key) in keys.enumerated() {
                if offset > 0 { text += " , " }
                writeLoosely(.string(key), to: &text)
                text += " : "
                writeLoosely(members[key]!, to: &text)
            }
            text += " }"
        case .array(let elements):
            text += "[ "
            for (offset, element) in elements.enumerated() {
                if offset > 0 { text += ", " }
                writeLoosely(element, to: &text)
            }
            text += "]"
        case .string(let string):
            text += "\""
            for scalar in string.unicodeScalars {
                switch scalar {
                case "/": text += "\\/"
                case "\"": text += "\\\""
                case "\\": text += "\\\\"
                case "a": text += "\\u0061"
                case _ where scalar.value < 0x20: text += String(format: "\\u%04X", scalar.value)
                default: text.unicodeScalars.append(scalar)
                }
            }
            text += "\""
        default:
            text += String(decoding: JSONWriter.bytes(of: value), as: UTF8.self)
        }
    }
}

/// A store's text is the protocol's form, so the server keeps what a client sends without
/// reading it: keys sorted, slashes unescaped, as `JSONWriter` writes them.
@Suite(.boundedConcurrency) struct StoredTextIsCanonicalTests {
    struct Bookmark: Identifiable, Codable, Sendable {
        let id: String
        let url: String
        let title: String
        let added: Double
        let tags: [String]
    }

    @Test func aStoreWritesItsValuesInTheProtocolsForm() throws {
        let storage = try SQLiteStorage(path: temporaryDirectory().appendingPathComponent("store.sqlite").path)
        let store = try IdentityStore<Bookmark>(key: "bookmarks", storage: storage)
        try store.add(
            Bookmark(
                id: "b", url: "https://example.org/a/b?c=d", title: "crème \"brûlée\" \\ 🍮\n", added: 1.5,
                tags: ["z", "a"]))
        let text = try #require(
            try storage.database.read { db in
                try String.fetchOne(db, sql: "SELECT value FROM amber_records WHERE key = 'bookmarks' AND id = 'b'")
            })
        #expect(text.contains("https://example.org/a/b"), "\(text)")
        #expect(Array(text.utf8).withUnsafeBytes { JSONSyntax.isCanonical($0) }, "\(text)")
        #expect(Array(text.utf8) == Array(try CanonicalRecordTests.canonical(text).utf8))
    }

    /// A text is the bytes a store wrote only when they are its very UTF-8 bytes: not the other
    /// Unicode normalization of it, not a prefix, not a longer run.
    @Test func aTextHasTheSameUTF8AsBytesOnlyWhenTheyAreItsOwn() {
        let (composed, decomposed) = (#"{"t":"caf\#u{e9}"}"#, #"{"t":"cafe\#u{301}"}"#)
        func same(_ text: String, _ bytes: [UInt8]) -> Bool {
            bytes.withUnsafeBytes { text.hasSameUTF8(asBytes: $0) }
        }
        #expect(same(composed, Array(composed.utf8)))
        #expect(!same(composed, Array(decomposed.utf8)) && !same(decomposed, Array(composed.utf8)))
        #expect(!same(composed, Array(composed.utf8.dropLast())))
        #expect(!same(composed, Array(composed.utf8) + [0x20]))
        #expect(same("", []) && !same("", [0x20]) && !same(" ", []))
    }
}
