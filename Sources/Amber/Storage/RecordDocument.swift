import Foundation
import OrderedCollections

/// The JSON document that ``FileStorage`` and ``UserDefaultsStorage`` keep per key:
///
/// ```json
/// {"format":"amber.records","version":1,"records":[{"id":"1","value":{...}}]}
/// ```
///
/// Each `value` is the record's JSON as the store encoded it, kept byte for byte: reading a
/// document gives each record's stored bytes, and writing it back leaves untouched records as
/// they were.
enum RecordDocument {
    static let format = "amber.records"
    static let version = 1

    static func encode(_ records: OrderedDictionary<String, Data>) -> Data {
        var document = Data(#"{"format":"\#(format)","version":\#(version),"records":["#.utf8)
        let encoder = JSONEncoder()
        for (index, (id, data)) in records.enumerated() {
            if index > 0 { document.append(UInt8(ascii: ",")) }
            document.append(contentsOf: #"{"id":"#.utf8)
            document.append(try! encoder.encode(id))
            document.append(contentsOf: #","value":"#.utf8)
            document.append(data)
            document.append(UInt8(ascii: "}"))
        }
        document.append(contentsOf: "]}\n".utf8)
        return document
    }

    /// Reads a document.
    ///
    /// - Throws: A sentence saying what is wrong with it.
    static func decode(_ document: Data) throws(DocumentError) -> OrderedDictionary<String, Data> {
        let bytes = [UInt8](document)
        var scanner = JSONScanner(bytes: bytes)
        var format: String?
        var version: Int?
        var records: OrderedDictionary<String, Data>?
        do {
            try scanner.readObject { scanner, key in
                switch key {
                case "format": format = try scanner.readStringIfPresent()
                case "version": version = Int(String(decoding: try scanner.skipValue(), as: UTF8.self))
                case "records":
                    var entries: OrderedDictionary<String, Data> = [:]
                    var index = 0
                    try scanner.readArray { scanner in
                        var id: String?
                        var value: ArraySlice<UInt8>?
                        try scanner.readObject { scanner, key in
                            switch key {
                            case "id": id = try scanner.readStringIfPresent()
                            case "value": value = try scanner.skipValue()
                            default: _ = try scanner.skipValue()
                            }
                        }
                        guard let id, let value else {
                            throw DocumentError(reason: "record \(index) has no \"id\" string and \"value\"")
                        }
                        entries[id] = Data(value)
                        index += 1
                    }
                    records = entries
                default: _ = try scanner.skipValue()
                }
            }
            try scanner.expectEnd()
        } catch let error as DocumentError {
            throw error
        } catch {
            throw DocumentError(reason: "not a JSON document (\(document.count) bytes)")
        }
        guard format == Self.format else {
            throw DocumentError(reason: "not an Amber record file (no \"format\": \"\(Self.format)\")")
        }
        guard let version else { throw DocumentError(reason: "no format version") }
        guard version <= Self.version else {
            throw DocumentError(reason: "format version \(version) is newer than this library's \(Self.version)")
        }
        guard let records else { throw DocumentError(reason: "no \"records\" array") }
        return records
    }

    struct DocumentError: Error {
        let reason: String
    }
}

/// Walks a JSON text without building it, to find the bytes of values.
///
/// It checks structure (brackets, strings, separators), not the spelling of numbers and
/// literals: a record's value that is not valid JSON fails later, when the store decodes it.
private struct JSONScanner {
    struct Malformed: Error {}

    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func expect(_ character: Unicode.Scalar) throws {
        skipWhitespace()
        guard current == UInt8(ascii: character) else { throw Malformed() }
        index += 1
    }

    mutating func expectEnd() throws {
        skipWhitespace()
        guard index == bytes.count else { throw Malformed() }
    }

    /// Reads `{ "key": value, ... }`, calling `member` positioned at each value.
    mutating func readObject(_ member: (inout JSONScanner, String) throws -> Void) throws {
        try expect("{")
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            guard let key = try readStringIfPresent() else { throw Malformed() }
            try expect(":")
            try member(&self, key)
            skipWhitespace()
            guard let byte = current else { throw Malformed() }
            index += 1
            if byte == UInt8(ascii: "}") { return }
            guard byte == UInt8(ascii: ",") else { throw Malformed() }
        }
    }

    /// Reads `[ value, ... ]`, calling `element` positioned at each value.
    mutating func readArray(_ element: (inout JSONScanner) throws -> Void) throws {
        try expect("[")
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            try element(&self)
            skipWhitespace()
            guard let byte = current else { throw Malformed() }
            index += 1
            if byte == UInt8(ascii: "]") { return }
            guard byte == UInt8(ascii: ",") else { throw Malformed() }
        }
    }

    /// Reads a string value, or skips a value of another kind and returns `nil`.
    mutating func readStringIfPresent() throws -> String? {
        skipWhitespace()
        guard current == UInt8(ascii: "\"") else {
            _ = try skipValue()
            return nil
        }
        let span = try skipValue()
        let body = span.dropFirst().dropLast()
        if !body.contains(UInt8(ascii: "\\")) { return String(decoding: body, as: UTF8.self) }
        guard let string = try? JSONDecoder().decode(String.self, from: Data(span)) else { throw Malformed() }
        return string
    }

    /// Skips one value and returns its bytes.
    mutating func skipValue() throws -> ArraySlice<UInt8> {
        skipWhitespace()
        let start = index
        guard let first = current else { throw Malformed() }
        switch first {
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            repeat {
                guard let byte = current else { throw Malformed() }
                switch byte {
                case UInt8(ascii: "\""):
                    try skipString()
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                default: break
                }
                index += 1
            } while depth > 0
        default:
            while let byte = current, !Self.endsScalar(byte) { index += 1 }
            guard index > start else { throw Malformed() }
        }
        return bytes[start..<index]
    }

    private mutating func skipString() throws {
        index += 1
        while let byte = current {
            index += byte == UInt8(ascii: "\\") ? 2 : 1
            if byte == UInt8(ascii: "\"") { return }
        }
        throw Malformed()
    }

    private static func endsScalar(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]")
            || byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}

extension OrderedDictionary<String, Data> {
    /// Applies a batch: deletions first, then upserts, which keep the position of existing
    /// records and append new ones.
    mutating func apply(_ batch: StorageBatch) {
        for id in batch.deletions { removeValue(forKey: id) }
        for record in batch.upserts { self[record.id] = record.data }
    }

    var records: [StoredRecord] {
        map { StoredRecord(id: $0.key, data: $0.value) }
    }

    /// What changed from `self` to `newer`, as another writer's change: records added or whose
    /// bytes changed, and identities deleted, with those that moved last listed in both.
    func changes(to newer: OrderedDictionary<String, Data>) -> ExternalChange? {
        var deletions = Array(keys.filter { newer[$0] == nil })
        // `newer` is, in writers' order, the older records that stayed in place followed by those
        // added or moved last: the longest run of them in their old order stayed in place.
        var upserts: [StoredRecord] = []
        var oldIndex = 0
        var inPlace = true
        for (id, data) in newer {
            if inPlace, let position = index(forKey: id), position >= oldIndex {
                oldIndex = position + 1
                if values[position] != data { upserts.append(StoredRecord(id: id, data: data)) }
                continue
            }
            inPlace = false
            if self[id] != nil { deletions.append(id) }
            upserts.append(StoredRecord(id: id, data: data))
        }
        guard !upserts.isEmpty || !deletions.isEmpty else { return nil }
        return .records(upserts: upserts, deletions: deletions)
    }
}
