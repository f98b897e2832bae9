import Foundation

/// A strict check of JSON text against RFC 8259, run before ``JSONReader`` reads it: no trailing
/// commas, no UTF-16, nothing other implementations of the protocol would refuse.
///
/// The check is iterative, so it also refuses nesting deeper than ``maximumDepth`` without
/// deep recursion, before the recursive reader sees the text.
package enum JSONSyntax {
    /// Deepest nesting of arrays and objects a body may have.
    package static let maximumDepth = 256

    /// Throws ``JSONWireError/syntax(_:offset:)`` or ``JSONWireError/tooDeep`` unless `bytes` is
    /// one JSON value, with nothing but whitespace around it, nested at most ``maximumDepth`` deep.
    ///
    /// - Complexity: O(*n*) in the number of bytes.
    package static func validate(_ bytes: UnsafeRawBufferPointer) throws(JSONWireError) {
        var scanner = Scanner(bytes: bytes)
        try scanner.scanDocument()
    }

    private enum State {
        /// A value must come (top level, after `:` or after `,` in an array).
        case value
        /// Just after `[`: a value or `]`.
        case valueOrArrayEnd
        /// Just after `{`: a key or `}`.
        case keyOrObjectEnd
        /// After `,` in an object: a key.
        case key
        /// After a complete value: `,`, a closing bracket, or the end of the text.
        case afterValue
    }

    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var index = 0
        /// For each open container, whether it is an object.
        var containers: [Bool] = []

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        mutating func scanDocument() throws(JSONWireError) {
            var state = State.value
            while true {
                skipWhitespace()
                switch state {
                case .value, .valueOrArrayEnd:
                    guard index < bytes.count else { throw invalid("ends where a value should be") }
                    if state == .valueOrArrayEnd, bytes[index] == UInt8(ascii: "]") {
                        index += 1
                        containers.removeLast()
                        state = .afterValue
                        continue
                    }
                    state = try scanValueStart()
                case .keyOrObjectEnd, .key:
                    guard index < bytes.count else { throw invalid("ends inside an object") }
                    if state == .keyOrObjectEnd, bytes[index] == UInt8(ascii: "}") {
                        index += 1
                        containers.removeLast()
                        state = .afterValue
                        continue
                    }
                    guard bytes[index] == UInt8(ascii: "\"") else {
                        throw invalid("has an object key that is not a string")
                    }
                    try scanString()
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                        throw invalid("lacks a `:` after an object key")
                    }
                    index += 1
                    state = .value
                case .afterValue:
                    guard let isObject = containers.last else {
                        guard index == bytes.count else { throw invalid("has more after the JSON value") }
                        return
                    }
                    guard index < bytes.count else { throw invalid("ends inside an \(isObject ? "object" : "array")") }
                    switch bytes[index] {
                    case UInt8(ascii: ","):
                        index += 1
                        state = isObject ? .key : .value
                    case UInt8(ascii: "}") where isObject, UInt8(ascii: "]") where !isObject:
                        index += 1
                        containers.removeLast()
                    default:
                        throw invalid("lacks a `,` or a closing bracket")
                    }
                }
            }
        }

        /// Scans a scalar whole, or opens a container; returns the state after it.
        private mutating func scanValueStart() throws(JSONWireError) -> State {
            switch bytes[index] {
            case UInt8(ascii: "{"):
                try open(isObject: true)
                return .keyOrObjectEnd
            case UInt8(ascii: "["):
                try open(isObject: false)
                return .valueOrArrayEnd
            case UInt8(ascii: "\""):
                try scanString()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                try scanNumber()
            case UInt8(ascii: "t"):
                try scanLiteral("true")
            case UInt8(ascii: "f"):
                try scanLiteral("false")
            case UInt8(ascii: "n"):
                try scanLiteral("null")
            default:
                throw invalid("has an unexpected character")
            }
            return .afterValue
        }

        private mutating func open(isObject: Bool) throws(JSONWireError) {
            guard containers.count < JSONSyntax.maximumDepth else { throw .tooDeep }
            containers.append(isObject)
            index += 1
        }

        private mutating func scanString() throws(JSONWireError) {
            index += 1  // the opening quote
            while index < bytes.count {
                index = JSONSyntax.plainRunEnd(bytes, from: index, controlsArePlain: false)
                guard index < bytes.count else { break }
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return
                case UInt8(ascii: "\\"):
                    index += 1
                    guard index < bytes.count else { break }
                    switch bytes[index] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        index += 1
                    case UInt8(ascii: "u"):
                        guard index + 4 < bytes.count, (1...4).allSatisfy({ Self.isHexDigit(bytes[index + $0]) }) else {
                            throw invalid("has a malformed \\u escape")
                        }
                        index += 5
                    default:
                        throw invalid("has an unknown escape in a string")
                    }
                case 0..<0x20:
                    throw invalid("has a control character inside a string")
                default:
                    index += 1
                }
            }
            throw invalid("ends inside a string")
        }

        private mutating func scanNumber() throws(JSONWireError) {
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, Self.isDigit(bytes[index]) else { throw invalid("has a malformed number") }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else {
                skipDigits()
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard index < bytes.count, Self.isDigit(bytes[index]) else { throw invalid("has a malformed number") }
                skipDigits()
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard index < bytes.count, Self.isDigit(bytes[index]) else { throw invalid("has a malformed number") }
                skipDigits()
            }
        }

        private mutating func scanLiteral(_ word: StaticString) throws(JSONWireError) {
            let length = word.utf8CodeUnitCount
            guard index + length <= bytes.count else { throw invalid("has an unknown word") }
            let matches = word.withUTF8Buffer { expected in
                (0..<length).allSatisfy { bytes[index + $0] == expected[$0] }
            }
            guard matches else { throw invalid("has an unknown word") }
            index += length
        }

        private mutating func skipDigits() {
            while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
        }

        private mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        private static func isDigit(_ byte: UInt8) -> Bool {
            byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
        }

        private static func isHexDigit(_ byte: UInt8) -> Bool {
            isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
        }

        private func invalid(_ problem: String) -> JSONWireError {
            .syntax(problem, offset: index)
        }
    }
}

extension JSONSyntax {
    /// Whether valid JSON text is exactly what ``JSONWriter`` writes for the value it holds: no
    /// whitespace, each object's keys in the order of their UTF-8 bytes, and in strings only the
    /// writer's escapes (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, and `\u00xx` for the other
    /// control characters). Numbers are written as they were read, so any is.
    ///
    /// `false` also for text this cannot tell cheaply: a key with an escape.
    ///
    /// - Parameter bytes: Text that ``validate(_:)`` accepted.
    package static func isCanonical(_ bytes: UnsafeRawBufferPointer) -> Bool {
        canonicalEnd(bytes, from: 0, asciiKeys: false) == bytes.count
    }

    /// The index just past the object that starts at `start`, when it is in ``JSONWriter``'s form
    /// (as ``isCanonical(_:)`` tells) and each of its keys, at any depth, is ASCII; `nil`
    /// otherwise.
    ///
    /// Keys in strictly increasing byte order are distinct; ASCII ones are then not two
    /// normalizations of one text either, so such an object needs no other check of its keys.
    ///
    /// - Parameters:
    ///   - bytes: Text that ``validate(_:)`` accepted.
    ///   - start: The index of the object's `{`.
    package static func canonicalObjectEnd(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "{") else { return nil }
        return canonicalEnd(bytes, from: start, asciiKeys: true)
    }

    /// The index just past the canonical value at `start`: its closing bracket, or the end of
    /// `bytes` for a value that is not an array or an object; `nil` when it is not canonical, or
    /// when `asciiKeys` and a key is not ASCII.
    private static func canonicalEnd(_ bytes: UnsafeRawBufferPointer, from start: Int, asciiKeys: Bool) -> Int? {
        // For each open container: whether it is an object, and the bytes of its last key.
        var open: [(object: Bool, lastKey: Range<Int>?)] = []
        var expectingKey = false
        var index = start
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), 0x09, 0x0A, 0x0D:
                return nil
            case UInt8(ascii: "{"):
                open.append((true, nil))
                expectingKey = true
            case UInt8(ascii: "["):
                open.append((false, nil))
                expectingKey = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                open.removeLast()
                expectingKey = false
                if open.isEmpty { return index + 1 }
            case UInt8(ascii: ","):
                expectingKey = open.last?.object ?? false
            case UInt8(ascii: ":"):
                expectingKey = false
            case UInt8(ascii: "\""):
                let keyStart = index + 1
                guard let (end, escaped) = canonicalStringEnd(bytes, from: keyStart) else { return nil }
                if expectingKey {
                    guard !escaped, !open.isEmpty else { return nil }
                    let key = keyStart..<end
                    if asciiKeys, !isASCII(bytes, key) { return nil }
                    if let last = open[open.count - 1].lastKey {
                        guard compare(bytes, last, key) < 0 else { return nil }
                    }
                    open[open.count - 1].lastKey = key
                    expectingKey = false
                }
                index = end
            default:
                break  // a number or a literal: written as read
            }
            index += 1
        }
        return open.isEmpty ? index : nil
    }

    private static func isASCII(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        for index in range where bytes[index] >= 0x80 { return false }
        return true
    }

    /// The index of the quote that ends the string whose first byte is at `start`, and whether
    /// it has escapes; `nil` when an escape is not the writer's.
    private static func canonicalStringEnd(_ bytes: UnsafeRawBufferPointer, from start: Int) -> (Int, Bool)? {
        var index = start
        var escaped = false
        while index < bytes.count {
            // Text that `validate(_:)` accepted holds no raw control character.
            index = plainRunEnd(bytes, from: index, controlsArePlain: true)
            guard index < bytes.count else { break }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                return (index, escaped)
            case UInt8(ascii: "\\"):
                escaped = true
                guard index + 1 < bytes.count else { return nil }
                switch bytes[index + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"),
                    UInt8(ascii: "b"), UInt8(ascii: "f"):
                    index += 2
                case UInt8(ascii: "u"):
                    // Only `\u00xx`, lowercase, for a control character without a short escape.
                    guard index + 5 < bytes.count, bytes[index + 2] == UInt8(ascii: "0"),
                        bytes[index + 3] == UInt8(ascii: "0"),
                        let high = lowercaseHex(bytes[index + 4]), let low = lowercaseHex(bytes[index + 5])
                    else { return nil }
                    let value = high << 4 | low
                    guard value < 0x20, ![0x08, 0x09, 0x0A, 0x0C, 0x0D].contains(value) else { return nil }
                    index += 6
                default:
                    return nil
                }
            default:
                index += 1
            }
        }
        return nil
    }

    /// The index of the first byte at or after `start` that a string scan must look at (a `"`,
    /// a `\`, or, unless `controlsArePlain`, a control character), or `bytes.count`; read eight
    /// bytes at a time while none of them is one.
    ///
    /// The scans of a string looked at each byte in turn: for a push of records, most of whose
    /// bytes are string contents, that was most of the server's time checking the body.
    @inline(__always)
    static func plainRunEnd(_ bytes: UnsafeRawBufferPointer, from start: Int, controlsArePlain: Bool) -> Int {
        var index = start
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            var special = hasByte(word, equalTo: UInt8(ascii: "\"")) | hasByte(word, equalTo: UInt8(ascii: "\\"))
            if !controlsArePlain { special |= hasByte(word, below: 0x20) }
            if special != 0 { break }
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || (!controlsArePlain && byte < 0x20) { break }
            index += 1
        }
        return index
    }

    /// Nonzero when a byte of `word` is `byte` (a borrow from a lower byte can mark a higher
    /// one too, never a word that holds none).
    @inline(__always)
    private static func hasByte(_ word: UInt64, equalTo byte: UInt8) -> UInt64 {
        hasByte(word ^ (0x0101_0101_0101_0101 &* UInt64(byte)), below: 1)
    }

    /// Nonzero when a byte of `word` is below `limit` (at most 0x80).
    @inline(__always)
    private static func hasByte(_ word: UInt64, below limit: UInt8) -> UInt64 {
        (word &- 0x0101_0101_0101_0101 &* UInt64(limit)) & ~word & 0x8080_8080_8080_8080
    }

    private static func lowercaseHex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// Negative, zero or positive as the bytes `left` sort before, equal to or after `right`.
    private static func compare(_ bytes: UnsafeRawBufferPointer, _ left: Range<Int>, _ right: Range<Int>) -> Int {
        let common = min(left.count, right.count)
        if common > 0 {
            let order = memcmp(bytes.baseAddress! + left.lowerBound, bytes.baseAddress! + right.lowerBound, common)
            if order != 0 { return Int(order) }
        }
        return left.count - right.count
    }
}

extension String {
    /// Whether both strings are the same UTF-8 bytes (not only canonically equivalent).
    ///
    /// With `memcmp`: `utf8.elementsEqual` is a generic call per byte in unoptimized builds
    /// (`swift run`, the tests), a second for a string of a megabyte.
    package func hasSameUTF8(as other: String) -> Bool {
        utf8.count == other.utf8.count && compareUTF8(with: other) == 0
    }

    /// Whether `bytes` are the string's UTF-8 bytes (a record's text as a store wrote it, say).
    package func hasSameUTF8(asBytes bytes: UnsafeRawBufferPointer) -> Bool {
        guard utf8.count == bytes.count else { return false }
        var text = self
        return text.withUTF8 { Self.compare(UnsafeRawBufferPointer($0), bytes) == 0 }
    }

    /// Whether the string's UTF-8 bytes sort before `other`'s: SQLite's order of text, and the
    /// order of keys in written JSON. Not `String`'s `<`, which takes canonically equivalent text
    /// as equal.
    package func precedesInUTF8(_ other: String) -> Bool {
        compareUTF8(with: other) < 0
    }

    /// Negative, zero or positive as the UTF-8 bytes sort before, equal to or after `other`'s.
    private func compareUTF8(with other: String) -> Int {
        // A native string's bytes, read in place; a bridged one is copied below.
        let inPlace = utf8.withContiguousStorageIfAvailable { leftBytes in
            other.utf8.withContiguousStorageIfAvailable { rightBytes in
                Self.compare(UnsafeRawBufferPointer(leftBytes), UnsafeRawBufferPointer(rightBytes))
            }
        }
        if let order = inPlace ?? nil { return order }
        var left = self
        var right = other
        return left.withUTF8 { leftBytes in
            right.withUTF8 { rightBytes in
                Self.compare(UnsafeRawBufferPointer(leftBytes), UnsafeRawBufferPointer(rightBytes))
            }
        }
    }

    /// Negative, zero or positive as `left` sorts before, equal to or after `right`, byte by byte.
    private static func compare(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Int {
        let common = Swift.min(left.count, right.count)
        if common > 0 {
            let order = memcmp(left.baseAddress!, right.baseAddress!, common)
            if order != 0 { return Int(order) }
        }
        return left.count - right.count
    }
}

/// Text compared and hashed by its UTF-8 bytes, as SQLite and PostgreSQL compare text: a
/// `String` takes canonically equivalent text (`"\u{e9}"` and `"e\u{301}"`) for equal, so two
/// record ids that differ only in Unicode normalization would be one dictionary key.
package struct ExactText: Hashable, Sendable {
    package let text: String

    package init(_ text: String) {
        self.text = text
    }

    package static func == (lhs: ExactText, rhs: ExactText) -> Bool {
        lhs.text.hasSameUTF8(as: rhs.text)
    }

    package func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(0xFF as UInt8)  // never in UTF-8: ends the text
    }
}
