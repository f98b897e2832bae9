import AmberSQLite
import AmberTestSupport
import GRDB
import Testing

/// The order a batch is written in: SQLite's order of the texts' bytes, whatever the texts.
@Suite(.boundedConcurrency) struct ByteOrderTests {
    /// Texts that differ past their 16th byte, only in normalization, by a NUL, or in length.
    static let awkward = [
        "", "a", "a\u{0}", "a\u{0}\u{0}", "note-0000000000001", "note-0000000000002", "note-000000000000",
        "caf\u{e9}", "cafe\u{301}", "é", "\u{10FFFF}", "Z", "z", "0123456789abcdefX", "0123456789abcdef",
        "0123456789abcdeg", "🍮 crème", "🍮",
    ]

    @Test func textsAreOrderedByTheirBytes() {
        var generator = SeededGenerator(seed: 7)
        let alphabet: [Character] = ["a", "b", "é", "\u{301}", "\u{0}", "🍮", "0", "-", "Z"]
        var texts = Self.awkward
        for _ in 0..<2_000 {
            let length = Int.random(in: 0...24, using: &generator)
            texts.append(String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        let expected = texts.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        #expect(ByteOrder.sorted(texts).map { Array($0.utf8) } == expected.map { Array($0.utf8) })
        #expect(
            ByteOrder.sortedIndices(texts).map { texts[$0] }.map { Array($0.utf8) } == expected.map { Array($0.utf8) })
        #expect(ByteOrder.sortedIndices([]) == [])
    }

    /// SQLite orders the same texts the same way: the order is the table's.
    @Test func theOrderIsSQLites() throws {
        let database = try DatabaseQueue()
        let fromSQLite = try database.write { db in
            try db.execute(sql: "CREATE TABLE t (id TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID")
            for text in Set(Self.awkward.map { Array($0.utf8) }) {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO t (id) VALUES (?)", arguments: [String(decoding: text, as: UTF8.self)])
            }
            return try String.fetchAll(db, sql: "SELECT id FROM t ORDER BY id")
        }
        #expect(fromSQLite.map { Array($0.utf8) } == ByteOrder.sorted(fromSQLite).map { Array($0.utf8) })
    }
}
