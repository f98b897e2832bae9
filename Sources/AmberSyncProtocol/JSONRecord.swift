/// A record's JSON object kept as its text: the one form a record has from the server's
/// database to the client's sync tables.
///
/// The server hands the text it stored to the answer without reading it, and a client takes it
/// from the answer as it is (after checking it as strictly as a whole read of the answer), so a record
/// is read into a tree of ``JSONValue``s only where a merge needs its fields: ``object``.
///
/// Two records are equal when their objects are (`==` of ``JSONObject``); equal text is the
/// quick case, since the protocol writes objects with sorted keys.
public struct JSONRecord: Sendable, Equatable, CustomStringConvertible {
    /// The object's JSON text.
    public let text: String
    /// The object, when the record was made from it: ``object`` then reads nothing.
    private let read: JSONObject?

    /// The record of `object`, written with sorted keys.
    public init(_ object: JSONObject) {
        text = JSONWriter.text(of: object)
        read = object
    }

    /// Text known to be one JSON object that the protocol's reading accepts: what this package
    /// wrote, or checked before storing.
    package init(unchecked text: String) {
        self.text = text
        read = nil
    }

    /// Text and the object read from it: a record a server read from its database to merge.
    package init(text: String, object: JSONObject) {
        self.text = text
        read = object
    }

    /// The object, read exactly.
    ///
    /// A record is checked when made, so reading it cannot fail; text that a server's database
    /// altered behind its back stops the process here rather than being read as another record.
    public var object: JSONObject {
        if let read { return read }
        var text = text
        let read = text.withUTF8 { utf8 in
            Result { () throws(JSONWireError) in try JSONReader.value(from: UnsafeRawBufferPointer(utf8)) }
        }
        switch read {
        case .success(.object(let members)):
            return members
        case .success(let other):
            preconditionFailure("a stored record is \(other.kindDescription), not a JSON object")
        case .failure(let error):
            preconditionFailure("a stored record is not JSON: \(error.sentence(subject: "The record"))")
        }
    }

    /// The JSON text.
    public var description: String { text }

    /// Whether both records hold the same object.
    public static func == (left: JSONRecord, right: JSONRecord) -> Bool {
        left.text.hasSameUTF8(as: right.text) || left.object == right.object
    }
}

extension JSONRecord: JSONWireEncodable {
    package func write(to writer: inout JSONWriter) {
        writer.rawText(text)
    }
}

extension JSONReader.Parser {
    /// Goes over the value at the index as ``readValue()`` would, with the same checks, without
    /// keeping it.
    mutating func checkValue() throws(JSONWireError) {
        skipWhitespace()
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            skipWhitespace()
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return
            }
            var keys: Set<String> = []
            while true {
                skipWhitespace()
                let key = try readString()
                let (inserted, other) = keys.insert(key)
                if !inserted { throw Self.duplicate(key, other) }
                skipWhitespace()
                index += 1  // the colon
                do throws(JSONWireError) {
                    try checkValue()
                } catch {
                    throw error.inside(.key(key))
                }
                skipWhitespace()
                let separator = bytes[index]
                index += 1
                if separator != UInt8(ascii: ",") { return }
            }
        case UInt8(ascii: "["):
            index += 1
            skipWhitespace()
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return
            }
            var count = 0
            while true {
                do throws(JSONWireError) {
                    try checkValue()
                } catch {
                    throw error.inside(.index(count))
                }
                count += 1
                skipWhitespace()
                let separator = bytes[index]
                index += 1
                if separator != UInt8(ascii: ",") { return }
            }
        case UInt8(ascii: "\""):
            _ = try readString()
        default:
            // A literal or a number, which the syntax check accepted: up to the next delimiter.
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D: return
                default: index += 1
                }
            }
        }
    }

    /// Reads the members of the object at the index as ``readValue()`` would, but hands each
    /// member whose key is in `special` to `body` (which must read or check its value) instead
    /// of reading it.
    ///
    /// - Throws: When the value is not an object, with `path`.
    mutating func readObject(
        at path: [JSONPathComponent], special: Set<String>,
        _ body: (inout Self, String) throws(JSONWireError) -> Void
    ) throws(JSONWireError) -> [String: JSONValue] {
        skipWhitespace()
        guard bytes[index] == UInt8(ascii: "{") else {
            let found = try readValue()
            throw .field(path: path, problem: "must be a JSON object, not \(found.kindDescription)")
        }
        index += 1
        var members: [String: JSONValue] = [:]
        var specialSeen: Set<String> = []
        skipWhitespace()
        if bytes[index] == UInt8(ascii: "}") {
            index += 1
            return members
        }
        while true {
            skipWhitespace()
            let key = try readString()
            skipWhitespace()
            index += 1  // the colon
            if special.contains(key) {
                if !specialSeen.insert(key).inserted || members[key] != nil { throw Self.duplicate(key, key) }
                try body(&self, key)
            } else {
                let value: JSONValue
                do throws(JSONWireError) {
                    value = try readValue()
                } catch {
                    throw error.inside(.key(key))
                }
                if members.updateValue(value, forKey: key) != nil || specialSeen.contains(key) {
                    let other = members.index(forKey: key).map { members[$0].key } ?? key
                    throw Self.duplicate(key, other)
                }
            }
            skipWhitespace()
            let separator = bytes[index]
            index += 1
            if separator != UInt8(ascii: ",") { return members }
        }
    }

    /// Reads the elements of the array at the index, each by `body`.
    ///
    /// - Throws: When the value is not an array, with `path`.
    mutating func readArray(
        at path: [JSONPathComponent], _ body: (inout Self, Int) throws(JSONWireError) -> Void
    ) throws(JSONWireError) {
        skipWhitespace()
        guard bytes[index] == UInt8(ascii: "[") else {
            let found = try readValue()
            throw .field(path: path, problem: "must be an array, not \(found.kindDescription)")
        }
        index += 1
        skipWhitespace()
        if bytes[index] == UInt8(ascii: "]") {
            index += 1
            return
        }
        var count = 0
        while true {
            try body(&self, count)
            count += 1
            skipWhitespace()
            let separator = bytes[index]
            index += 1
            if separator != UInt8(ascii: ",") { return }
        }
    }

    /// The object at the index as a record, checked, or `nil` for `null`.
    ///
    /// A record in the protocol's own form whose keys are ASCII and whose text is UTF-8 is taken
    /// in one pass over its bytes (``readWritersFormRecord()``).
    ///
    /// - Throws: When the value is neither, with `path`.
    mutating func readRecord(at path: [JSONPathComponent]) throws(JSONWireError) -> JSONRecord? {
        skipWhitespace()
        if let record = readWritersFormRecord() { return record }
        return try readAnyRecord(at: path)
    }

    /// The record at the index (after whitespace) when its text is in the protocol's own form
    /// (``JSONSyntax/canonicalObjectEnd(_:from:)``) with ASCII keys, and UTF-8; `nil`, the index
    /// unmoved, otherwise.
    ///
    /// Such a record needs no other check: its keys, sorted and distinct, are not two
    /// normalizations of one text either, and the writer's escapes are all valid.
    private mutating func readWritersFormRecord() -> JSONRecord? {
        guard let end = JSONSyntax.canonicalObjectEnd(bytes, from: index),
            let text = Self.utf8Text(UnsafeRawBufferPointer(rebasing: bytes[index..<end]))
        else { return nil }
        index = end
        return JSONRecord(unchecked: text)
    }

    /// ``readRecord(at:)`` for any text: each key and string read and checked.
    private mutating func readAnyRecord(at path: [JSONPathComponent]) throws(JSONWireError) -> JSONRecord? {
        switch bytes[index] {
        case UInt8(ascii: "n"):
            index += 4
            return nil
        case UInt8(ascii: "{"):
            let start = index
            do throws(JSONWireError) {
                try checkValue()
            } catch {
                throw error.prefixed(path)
            }
            return JSONRecord(
                unchecked: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
        default:
            let found = try readValue()
            throw .field(path: path, problem: "must be a JSON object or null, not \(found.kindDescription)")
        }
    }
}

extension JSONReader.Parser {
    /// Reads the record at the index as ``readRecord(at:)`` does, kept as its text when that text
    /// is already the protocol's own form (``JSONSyntax/isCanonical(_:)``), and written in that
    /// form otherwise: what a client sends is its stored text, which is, so the server reads no
    /// tree of it and writes nothing again.
    mutating func readCanonicalRecord(at path: [JSONPathComponent]) throws(JSONWireError) -> JSONRecord? {
        skipWhitespace()
        if let record = readWritersFormRecord() { return record }
        let start = index
        guard let record = try readAnyRecord(at: path) else { return nil }
        if JSONSyntax.isCanonical(UnsafeRawBufferPointer(rebasing: bytes[start..<index])) { return record }
        return JSONRecord(record.object)
    }
}

extension JSONWireError {
    /// The same error with `path` before a field's path.
    func prefixed(_ path: [JSONPathComponent]) -> JSONWireError {
        guard case .field(let inner, let problem) = self else { return self }
        return .field(path: path + inner, problem: problem)
    }
}
