/// Writes JSON text exactly: numbers as their literal text, strings and keys as their UTF-8
/// bytes (escaping only `"`, `\` and control characters), object keys sorted so that equal
/// values are equal text.
package struct JSONWriter {
    /// The text written so far.
    package private(set) var bytes: [UInt8] = []

    /// An empty writer.
    package init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// Forgets the text written so far, keeping its room for the next.
    package mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// `value` as JSON text, written into room for `capacity` bytes: a good guess spares the
    /// copies of a growing buffer (two for a pull page of 8 MiB).
    package static func bytes(of value: some JSONWireEncodable, capacity: Int = 256) -> [UInt8] {
        var writer = JSONWriter(capacity: capacity)
        value.write(to: &writer)
        return writer.bytes
    }

    /// `value` as JSON text.
    package static func text(of value: some JSONWireEncodable) -> String {
        String(decoding: bytes(of: value), as: UTF8.self)
    }

    /// Appends `text` as it is: punctuation and keys known to need no escaping.
    package mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends `value`.
    package mutating func write(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let value): write(value)
        case .integer(let value): write(value)
        case .number(let number): bytes.append(contentsOf: number.text.utf8)
        case .string(let text): write(text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members): write(members)
        }
    }

    /// Appends `object`, its keys sorted by their UTF-8 bytes.
    ///
    /// Not by `String`'s `<`, which compares canonically equivalent text as equal: keys such as
    /// `"e\u{301}"` and `"\u{e9}\u{7f}"` would then come out in either order, and equal objects
    /// would not always be equal text.
    package mutating func write(_ object: [String: JSONValue]) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for (key, value) in object.sorted(by: { $0.key.precedesInUTF8($1.key) }) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            write(key)
            bytes.append(UInt8(ascii: ":"))
            write(value)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Appends `object`, or `null`.
    package mutating func write(_ object: [String: JSONValue]?) {
        if let object { write(object) } else { raw("null") }
    }

    /// Appends text known to be JSON, as it is.
    package mutating func rawText(_ text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// Appends bytes known to be JSON, as they are.
    package mutating func rawBytes(_ json: some Collection<UInt8>) {
        bytes.append(contentsOf: json)
    }

    /// Appends `record`, or `null`.
    package mutating func write(_ record: JSONRecord?) {
        if let record { rawText(record.text) } else { raw("null") }
    }

    /// Appends `value`.
    package mutating func write(_ value: Int64) {
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Appends `value`, or `null`.
    package mutating func write(_ value: Int64?) {
        if let value { write(value) } else { raw("null") }
    }

    /// Appends `true` or `false`.
    package mutating func write(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// Appends `strings` as an array.
    package mutating func write(_ strings: [String]) {
        bytes.append(UInt8(ascii: "["))
        for (offset, string) in strings.enumerated() {
            if offset > 0 { bytes.append(UInt8(ascii: ",")) }
            write(string)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Appends `text` as a string, its UTF-8 bytes as they are but for `"`, `\` and control characters.
    package mutating func write(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var plainStart = 0
            // An index loop rather than `enumerated()`: unoptimized builds (`swift run`, the tests)
            // run the generic iterator a call per byte, seconds for a note of a megabyte.
            var offset = 0
            while offset < utf8.count {
                // Plain bytes are skipped eight at a time.
                offset = JSONSyntax.plainRunEnd(UnsafeRawBufferPointer(utf8), from: offset, controlsArePlain: false)
                guard offset < utf8.count else { break }
                let byte = utf8[offset]
                offset += 1
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainStart..<offset - 1]))
                plainStart = offset
                switch byte {
                case UInt8(ascii: "\""): raw("\\\"")
                case UInt8(ascii: "\\"): raw("\\\\")
                case 0x0A: raw("\\n")
                case 0x0D: raw("\\r")
                case 0x09: raw("\\t")
                case 0x08: raw("\\b")
                case 0x0C: raw("\\f")
                default:
                    raw("\\u00")
                    bytes.append(Self.hexDigits[Int(byte >> 4)])
                    bytes.append(Self.hexDigits[Int(byte & 0xF)])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}

extension JSONWriter {
    /// Appends the elements of an array, each as it writes itself, separated by commas: the
    /// brackets are the caller's, written with the keys around them.
    package mutating func writeElements(_ elements: some Sequence<some JSONWireEncodable>) {
        for (offset, element) in elements.enumerated() {
            if offset > 0 { raw(",") }
            element.write(to: &self)
        }
    }
}

/// A protocol value that writes its own exact JSON form.
package protocol JSONWireEncodable {
    /// Appends the value's JSON text to `writer`.
    func write(to writer: inout JSONWriter)
}

/// A protocol value read from a ``JSONValue``, with errors that name the field.
package protocol JSONWireDecodable {
    /// Reads the value from `json`, found at `path` of the text.
    init(json: JSONValue, path: [JSONPathComponent]) throws(JSONWireError)
    /// Reads the value from JSON text; by default as a tree of ``JSONValue``s.
    init(jsonBytes bytes: some Collection<UInt8>) throws(JSONWireError)
}

extension JSONWireDecodable {
    /// Reads the value from JSON text with ``JSONReader``.
    package init(jsonBytes bytes: some Collection<UInt8>) throws(JSONWireError) {
        try self.init(readingJSONBytes: bytes)
    }

    /// Reads the value from JSON text with ``JSONReader``, as a whole tree.
    package init(readingJSONBytes bytes: some Collection<UInt8>) throws(JSONWireError) {
        try self.init(json: try JSONReader.value(from: bytes), path: [])
    }
}

extension JSONValue: JSONWireEncodable, JSONWireDecodable {
    package func write(to writer: inout JSONWriter) {
        writer.write(self)
    }

    package init(json: JSONValue, path: [JSONPathComponent]) {
        self = json
    }
}

extension Dictionary: JSONWireEncodable, JSONWireDecodable where Key == String, Value == JSONValue {
    package func write(to writer: inout JSONWriter) {
        writer.write(self)
    }

    package init(json: JSONValue, path: [JSONPathComponent]) throws(JSONWireError) {
        guard case .object(let members) = json else {
            throw .field(path: path, problem: "must be a JSON object")
        }
        self = members
    }
}
