import AmberSyncPostgres
import NIOCore
import PostgresNIO
import Testing

/// The arrays a batch of pushes binds are written by hand: byte for byte what PostgresNIO's own
/// `Array` encoding writes.
struct ArrayBindTests {
    private static func bytes(_ value: some PostgresNonThrowingEncodable) -> [UInt8] {
        var buffer = ByteBuffer()
        value.encode(into: &buffer, context: .default)
        return Array(buffer.readableBytesView)
    }

    @Test(arguments: [
        [],
        [""],
        ["notes"],
        [
            "a", "", "{\"title\":\"Vesper\"}", "caf\u{E9}", "cafe\u{301}", "\u{1F600} and more",
            String(repeating: "x", count: 70_000),
        ],
    ])
    func textArraysAreWrittenAsPostgresNIOWritesThem(_ elements: [String]) {
        #expect(Self.bytes(ArrayBind(elements)) == Self.bytes(elements))
        #expect(ArrayBind<String>.psqlType == [String].psqlType)
    }

    @Test(arguments: [[], [0], [1, -1, .max, .min, 42]] as [[Int64]])
    func int8ArraysAreWrittenAsPostgresNIOWritesThem(_ elements: [Int64]) {
        #expect(Self.bytes(ArrayBind(elements)) == Self.bytes(elements))
        #expect(ArrayBind<Int64>.psqlType == [Int64].psqlType)
    }
}
