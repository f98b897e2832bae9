import NIOCore
import PostgresNIO

/// A `text[]` parameter written straight into the bind message: the array's header, then each
/// element's length and UTF-8 bytes, in room reserved once for all of them.
///
/// A batch of pushes sends its records as arrays of thousands of elements (`unnest` in the
/// write function). PostgresNIO's generic `Array` encoding writes each element through its
/// type's own encoding, a placeholder length set afterwards, the buffer growing as it goes;
/// this form halves the encoding's cost (in a profile of a phone's first push of 100,000
/// records, the arrays' encoding went from a seventh of the server's time to a fourteenth).
package struct TextArrayBind: PostgresNonThrowingEncodable {
    package static var psqlType: PostgresDataType { .textArray }
    package static var psqlFormat: PostgresFormat { .binary }

    package let elements: [String]

    package init(_ elements: [String]) {
        self.elements = elements
    }

    package func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        let size = elements.reduce(0) { $0 + 4 + $1.utf8.count }
        ArrayBindHeader.write(into: &buffer, count: elements.count, of: .text, bytes: size)
        for var element in elements {
            element.withUTF8 { bytes in
                buffer.writeInteger(Int32(bytes.count))
                buffer.writeBytes(UnsafeRawBufferPointer(bytes))
            }
        }
    }
}

/// An `int8[]` parameter written straight into the bind message (see ``TextArrayBind``).
package struct Int8ArrayBind: PostgresNonThrowingEncodable {
    package static var psqlType: PostgresDataType { .int8Array }
    package static var psqlFormat: PostgresFormat { .binary }

    package let elements: [Int64]

    package init(_ elements: [Int64]) {
        self.elements = elements
    }

    package func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        ArrayBindHeader.write(into: &buffer, count: elements.count, of: .int8, bytes: elements.count * 12)
        for element in elements {
            buffer.writeMultipleIntegers(Int32(8), element)
        }
    }
}

/// The header of a one-dimensional array in PostgreSQL's binary form.
private enum ArrayBindHeader {
    /// Writes the header of an array of `count` elements of type `element` (none: an empty
    /// array), and reserves room for `bytes` more: its elements.
    static func write(into buffer: inout ByteBuffer, count: Int, of element: PostgresDataType, bytes: Int) {
        // Dimensions, whether any element is NULL (none), the element type.
        buffer.writeMultipleIntegers(UInt32(count == 0 ? 0 : 1), Int32(0), element.rawValue)
        guard count > 0 else { return }
        buffer.reserveCapacity(minimumWritableBytes: 8 + bytes)
        // The one dimension's length and lower bound.
        buffer.writeMultipleIntegers(Int32(count), Int32(1))
    }
}
