/// A JSON number kept as its literal text, so it comes back with the digits it was sent with.
///
/// `18446744073709551615`, `1.0`, `-0.0` and `1e400` each stay exactly as written: none of them
/// goes through `Double` or `Int64` on the way.
///
/// ```swift
/// let big = JSONNumber("18446744073709551615")   // beyond Int64
/// big?.uint64Value                                 // 18446744073709551615
/// JSONNumber(1.5).text                             // "1.5"
/// ```
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible, ExpressibleByFloatLiteral,
    ExpressibleByIntegerLiteral
{
    /// The number as written: a valid JSON number literal (RFC 8259), such as `-0.0` or `1e400`.
    public let text: String

    /// The number written as `text`, or `nil` when `text` is not a JSON number literal.
    ///
    /// - Parameter text: A JSON number literal, such as `12`, `-0.5` or `6.02e23`.
    public init?(_ text: String) {
        guard Self.isLiteral(text.utf8) else { return nil }
        self.text = text
    }

    /// `value` written the shortest way that reads back as the same `Double`; `nil` when it is
    /// infinite or not a number, which JSON cannot write.
    ///
    /// - Parameter value: A finite number.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        self.text = value.description
    }

    /// A number from a floating-point literal in code, written as Swift writes that `Double`.
    public init(floatLiteral value: Double) {
        self.text = value.description
    }

    /// A number from an integer literal in code.
    public init(integerLiteral value: Int64) {
        self.text = String(value)
    }

    /// A literal already checked by the JSON reader.
    init(unchecked text: String) {
        self.text = text
    }

    /// The literal text.
    public var description: String { text }

    /// The nearest `Double` (infinite past its range, as `Double("1e400")` is).
    public var doubleValue: Double { Double(text) ?? .nan }

    /// The number as an `Int64`, or `nil` when it has a fraction or exponent part or does not fit.
    public var int64Value: Int64? { Int64(text) }

    /// The number as a `UInt64`, or `nil` when it is negative, has a fraction or exponent part,
    /// or does not fit.
    public var uint64Value: UInt64? { UInt64(text) }

    /// Whether `bytes` are one JSON number literal, nothing before or after.
    static func isLiteral(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        var byte = iterator.next()
        func isDigit(_ byte: UInt8?) -> Bool { byte.map { $0 >= 0x30 && $0 <= 0x39 } ?? false }
        if byte == UInt8(ascii: "-") { byte = iterator.next() }
        guard isDigit(byte) else { return false }
        if byte == UInt8(ascii: "0") {
            byte = iterator.next()
        } else {
            repeat { byte = iterator.next() } while isDigit(byte)
        }
        if byte == UInt8(ascii: ".") {
            byte = iterator.next()
            guard isDigit(byte) else { return false }
            repeat { byte = iterator.next() } while isDigit(byte)
        }
        if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            byte = iterator.next()
            if byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") { byte = iterator.next() }
            guard isDigit(byte) else { return false }
            repeat { byte = iterator.next() } while isDigit(byte)
        }
        return byte == nil
    }
}
