import Foundation

/// SQLite's order of text: by its UTF-8 bytes, which is not `String`'s order.
///
/// Writing a batch in the order of its keys fills each B-tree page in one go instead of coming
/// back to it. The order only places the rows: two strings `String` holds equal (the same text
/// in two Unicode normalizations) are two keys, ordered by their bytes.
package enum ByteOrder {
    /// Whether `left`'s UTF-8 bytes sort before `right`'s.
    ///
    /// With `memcmp`: `lexicographicallyPrecedes` is a generic call per byte in unoptimized builds.
    package static func precedes(_ left: String, _ right: String) -> Bool {
        var left = left
        var right = right
        return left.withUTF8 { leftBytes in
            right.withUTF8 { rightBytes in
                let common = min(leftBytes.count, rightBytes.count)
                let order = common == 0 ? 0 : memcmp(leftBytes.baseAddress!, rightBytes.baseAddress!, common)
                return order != 0 ? order < 0 : leftBytes.count < rightBytes.count
            }
        }
    }

    /// The indices of `texts` in the order of their bytes.
    ///
    /// Each text's first 16 bytes are read once, into two integers (zero past its end), and
    /// sorted as such; only texts whose first 16 bytes are equal are compared whole. Sorting the
    /// strings themselves retained and released two of them for each of a sort's comparisons:
    /// an eighth of an initial sync's writing.
    package static func sortedIndices(_ texts: [String]) -> [Int] {
        var keys: [(high: UInt64, low: UInt64, index: Int)] = []
        keys.reserveCapacity(texts.count)
        for (index, text) in texts.enumerated() {
            var (high, low): (UInt64, UInt64) = (0, 0)
            var text = text
            text.withUTF8 { bytes in
                for offset in 0..<min(bytes.count, 16) {
                    let byte = UInt64(bytes[offset])
                    if offset < 8 { high |= byte << (56 - 8 * offset) } else { low |= byte << (56 - 8 * (offset - 8)) }
                }
            }
            keys.append((high, low, index))
        }
        keys.sort { left, right in
            if left.high != right.high { return left.high < right.high }
            if left.low != right.low { return left.low < right.low }
            return precedes(texts[left.index], texts[right.index])
        }
        return keys.map(\.index)
    }

    /// `texts` in the order of their bytes (see ``sortedIndices(_:)``).
    package static func sorted(_ texts: [String]) -> [String] {
        sortedIndices(texts).map { texts[$0] }
    }
}
