import Foundation

/// Reads JSON text as a ``JSONValue`` exactly: numbers keep their literal text, strings and
/// object keys keep their bytes.
///
/// The text is first checked by ``JSONSyntax`` (RFC 8259, no trailing commas, at most
/// ``JSONSyntax/maximumDepth`` deep), then read; the reading also refuses strings that are not
/// UTF-8 or hold a lone surrogate escape, and objects with a key twice, counting as one key two
/// that differ only in Unicode normalization (`"\u00e9"` and `"e\u0301"`): Swift's `String`
/// compares them equal, so a `[String: JSONValue]` would keep one of them silently.
package enum JSONReader {
    /// The one JSON value of `bytes`.
    ///
    /// - Complexity: O(*n*) in the number of bytes.
    package static func value(from bytes: UnsafeRawBufferPointer) throws(JSONWireError) -> JSONValue {
        try JSONSyntax.validate(bytes)
        var parser = Parser(bytes: bytes)
        return try parser.readValue()
    }

    /// The one JSON value of `bytes`.
    package static func value(from bytes: some Collection<UInt8>) throws(JSONWireError) -> JSONValue {
        let result =
            bytes.withContiguousStorageIfAvailable { buffer in
                Result { () throws(JSONWireError) in try value(from: UnsafeRawBufferPointer(buffer)) }
            }
            ?? Array(bytes).withUnsafeBytes { buffer in
                Result { () throws(JSONWireError) in try value(from: buffer) }
            }
        return try result.get()
    }

    /// The one JSON value of `data`.
    package static func value(from data: Data) throws(JSONWireError) -> JSONValue {
        try data.withUnsafeBytes { buffer in
            Result { () throws(JSONWireError) in try value(from: buffer) }
        }.get()
    }

    /// Reads text that ``JSONSyntax`` accepted.
    struct Parser {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        mutating func readValue() throws(JSONWireError) -> JSONValue {
            skipWhitespace()
            switch bytes[index] {
            case UInt8(ascii: "{"):
                return .object(try readObject())
            case UInt8(ascii: "["):
                return .array(try readArray())
            case UInt8(ascii: "\""):
                return .string(try readString())
            case UInt8(ascii: "t"):
                index += 4
                return .bool(true)
            case UInt8(ascii: "f"):
                index += 5
                return .bool(false)
            case UInt8(ascii: "n"):
                index += 4
                return .null
            default:
                return readNumber()
            }
        }

        private mutating func readObject() throws(JSONWireError) -> [String: JSONValue] {
            index += 1
            var members: [String: JSONValue] = [:]
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
                let value: JSONValue
                do throws(JSONWireError) {
                    value = try readValue()
                } catch {
                    throw error.inside(.key(key))
                }
                if members.updateValue(value, forKey: key) != nil {
                    let other = members.index(forKey: key).map { members[$0].key } ?? key
                    throw Self.duplicate(key, other)
                }
                skipWhitespace()
                let separator = bytes[index]
                index += 1
                if separator != UInt8(ascii: ",") { return members }
            }
        }

        static func duplicate(_ key: String, _ other: String) -> JSONWireError {
            if key.utf8.elementsEqual(other.utf8) {
                return .field(path: [], problem: "has the key `\(key)` twice")
            }
            func scalars(_ text: String) -> String {
                text.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true).leftPadded }
                    .joined(separator: " ")
            }
            return .field(
                path: [],
                problem:
                    "has the keys `\(other)` (\(scalars(other))) and `\(key)` (\(scalars(key))), which differ only in Unicode normalization; an object may hold only one of them"
            )
        }

        private mutating func readArray() throws(JSONWireError) -> [JSONValue] {
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return elements
            }
            while true {
                do throws(JSONWireError) {
                    elements.append(try readValue())
                } catch {
                    throw error.inside(.index(elements.count))
                }
                skipWhitespace()
                let separator = bytes[index]
                index += 1
                if separator != UInt8(ascii: ",") { return elements }
            }
        }

        mutating func readString() throws(JSONWireError) -> String {
            index += 1  // the opening quote
            let start = index
            while true {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    let text = try Self.text(UnsafeRawBufferPointer(rebasing: bytes[start..<index]), at: start)
                    index += 1
                    return text
                case UInt8(ascii: "\\"):
                    return try readEscapedString(from: start)
                default:
                    index += 1
                }
            }
        }

        /// The rest of a string that has escapes, from its first one.
        private mutating func readEscapedString(from start: Int) throws(JSONWireError) -> String {
            var buffer = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
            while true {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return try buffer.withUnsafeBytes { text in
                        Result { () throws(JSONWireError) in try Self.text(text, at: start) }
                    }.get()
                }
                guard byte == UInt8(ascii: "\\") else {
                    buffer.append(byte)
                    index += 1
                    continue
                }
                let escape = bytes[index + 1]
                index += 2
                switch escape {
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    let escapeStart = index - 2
                    var value = hex(at: index)
                    index += 4
                    if (0xD800...0xDBFF).contains(value), index + 6 <= bytes.count,
                        bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u"),
                        case let low = hex(at: index + 2), (0xDC00...0xDFFF).contains(low)
                    {
                        value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                        index += 6
                    }
                    guard let scalar = Unicode.Scalar(value) else {
                        throw .syntax("has a \\u escape of a lone surrogate", offset: escapeStart)
                    }
                    buffer.append(contentsOf: String(Character(scalar)).utf8)
                default: buffer.append(escape)  // `"`, `\` or `/`
                }
            }
        }

        /// The four hex digits at `offset`, which ``JSONSyntax`` checked.
        private func hex(at offset: Int) -> UInt32 {
            var value: UInt32 = 0
            for byte in bytes[offset..<offset + 4] {
                let digit =
                    byte <= UInt8(ascii: "9") ? byte &- UInt8(ascii: "0") : (byte | 0x20) &- UInt8(ascii: "a") &+ 10
                value = value << 4 | UInt32(digit)
            }
            return value
        }

        /// `bytes` as a string, refused unless they are UTF-8.
        private static func text(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(JSONWireError) -> String {
            guard let text = utf8Text(bytes) else {
                throw .syntax("has a string that is not valid UTF-8", offset: offset)
            }
            return text
        }

        /// `bytes` as a string, or `nil` unless they are UTF-8.
        static func utf8Text(_ bytes: UnsafeRawBufferPointer) -> String? {
            var text = String(decoding: bytes, as: UTF8.self)
            // Decoding replaces ill-formed sequences, so any change means they were not UTF-8.
            // Compared with `memcmp`: `elementsEqual` is a generic call per byte in unoptimized builds.
            let unchanged = text.withUTF8 { decoded in
                decoded.count == bytes.count
                    && (bytes.isEmpty || memcmp(decoded.baseAddress!, bytes.baseAddress!, bytes.count) == 0)
            }
            return unchanged ? text : nil
        }

        /// An integer that fits `Int64` (but not `-0`) as ``JSONValue/integer(_:)``, any other
        /// number as its literal text.
        private mutating func readNumber() -> JSONValue {
            let start = index
            let negative = bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            var magnitude: UInt64 = 0
            var overflow = false
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(UInt64(bytes[index] &- UInt8(ascii: "0")))
                magnitude = sum
                overflow = overflow || o1 || o2
                index += 1
            }
            var isInteger = true
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"),
                    UInt8(ascii: "+"), UInt8(ascii: "-"):
                    isInteger = false
                    index += 1
                    continue
                default: break
                }
                break
            }
            if isInteger, !overflow {
                if !negative, magnitude <= UInt64(Int64.max) {
                    return .integer(Int64(magnitude))
                }
                if negative, magnitude != 0, magnitude <= UInt64(Int64.max) + 1 {
                    return .integer(Int64(bitPattern: 0 &- magnitude))
                }
            }
            let literal = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            return .number(JSONNumber(unchecked: literal))
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }
    }
}

extension String {
    /// Four hex digits at least, as `U+` code points are written.
    fileprivate var leftPadded: String {
        count >= 4 ? self : String(repeating: "0", count: 4 - count) + self
    }
}
