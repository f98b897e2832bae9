import NIOCore
import PostgresNIO

/// An array parameter (`text[]`, `int8[]`) written straight into the bind message: the array's
/// header, then each element's length and bytes, in room reserved once for all of them.
///
/// A batch of pushes sends its records as arrays of thousands of elements (`unnest` in the
/// write function). PostgresNIO's generic `Array` encoding writes each element through its
/// type's own encoding, a placeholder length set afterwards, the buffer growing as it goes;
/// this form halves the encoding's cost (in a profile of a phone's first push of 100,000
/// records, the arrays' encoding went from a seventh of the server's time to a fourteenth). The
/// bytes are those PostgresNIO writes for the same array.
package struct ArrayBind<Element: ArrayBindElement>: PostgresNonThrowingEncodable {
    package static var psqlType: PostgresDataType { Element.psqlArrayType }
    package static var psqlFormat: PostgresFormat { .binary }

    package let elements: [Element]

    package init(_ elements: [Element]) {
        self.elements = elements
    }

    package func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        // Dimensions (none for an empty array), whether any element is NULL (none), the type.
        buffer.writeMultipleIntegers(UInt32(elements.isEmpty ? 0 : 1), Int32(0), Element.psqlType.rawValue)
        guard !elements.isEmpty else { return }
        buffer.reserveCapacity(minimumWritableBytes: elements.reduce(8) { $0 + 4 + $1.boundByteCount })
        // The one dimension's length and lower bound.
        buffer.writeMultipleIntegers(Int32(elements.count), Int32(1))
        for element in elements {
            element.writeBound(into: &buffer)
        }
    }
}

/// An element of an ``ArrayBind``, in PostgreSQL's binary form; its type and its array's type
/// are postgres-nio's (`psqlType`, `psqlArrayType`).
package protocol ArrayBindElement: PostgresArrayEncodable {
    /// How many bytes the element's binary form takes.
    var boundByteCount: Int { get }
    /// Writes the element's length (4 bytes) and binary form.
    func writeBound(into buffer: inout ByteBuffer)
}

extension String: ArrayBindElement {
    package var boundByteCount: Int { utf8.count }

    package func writeBound(into buffer: inout ByteBuffer) {
        var text = self
        text.withUTF8 { bytes in
            buffer.writeInteger(Int32(bytes.count))
            buffer.writeBytes(UnsafeRawBufferPointer(bytes))
        }
    }
}

extension Int64: ArrayBindElement {
    package var boundByteCount: Int { 8 }

    package func writeBound(into buffer: inout ByteBuffer) {
        buffer.writeMultipleIntegers(Int32(8), self)
    }
}
