/// What changed between two arrays of values: by identity (removed, inserted,
/// moved), then by value (updated).
///
/// Elements are matched by `id`. An identity present in both arrays is either in
/// place or moved; only the elements that must leave the longest run of matched
/// elements whose relative order holds are reported as moved, so moving one row
/// gives exactly one move and the rows it jumped over are not moved. A matched
/// element whose value changed (Jack after his raise) is also listed in
/// ``updated``.
///
/// ```swift
/// let old = [ann, bob, cy, dan]
/// let new = [cy, ann, bob.with(age: 31), eve]
/// let diff = IdentityDiff(from: old, to: new)
/// diff.removed    // [3]                       dan, offset in old
/// diff.inserted   // [3]                       eve, offset in new
/// diff.moved      // [Move(from: 2, to: 0)]    cy; ann and bob keep their order
/// diff.updated    // [2]                       bob's new value, offset in new
/// ```
///
/// Duplicate identities are allowed: the k-th occurrence of an `id` in `old` is
/// matched with its k-th occurrence in `new`, and extra occurrences are removed
/// or inserted. Replaying removals, insertions and moves the way a table view
/// does (see ``applied(to:new:)`` and ``batchUpdates(inSection:)``) always turns
/// `old`'s identities into `new`'s.
public struct IdentityDiff: Sendable, Equatable {
    /// An element present in both arrays that left the run of elements whose relative order holds.
    ///
    /// ```swift
    /// IdentityDiff(from: [a, b, c], to: [c, a, b]).moved   // [Move(from: 2, to: 0)]
    /// ```
    public struct Move: Sendable, Equatable {
        /// The element's offset in the old array.
        public let from: Int
        /// The element's offset in the new array.
        public let to: Int

        /// Creates a move of the element at offset `from` in the old array to offset `to` in the new one.
        ///
        /// ```swift
        /// #expect(diff.moved == [IdentityDiff.Move(from: 2, to: 0)])
        /// ```
        ///
        /// - Parameters:
        ///   - from: The element's offset in the old array.
        ///   - to: The element's offset in the new array.
        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    /// Offsets in the old array of the elements whose identity is not in the new one, ascending.
    ///
    /// ```swift
    /// IdentityDiff(from: [a, b, c], to: [a, c]).removed   // [1]
    /// ```
    public let removed: [Int]

    /// Offsets in the new array of the elements whose identity is not in the old one, ascending.
    ///
    /// ```swift
    /// IdentityDiff(from: [a, c], to: [a, b, c]).inserted   // [1]
    /// ```
    public let inserted: [Int]

    /// Elements in both arrays whose relative order changed, sorted by ``Move/to``.
    ///
    /// The elements not listed here, nor removed or inserted, form a longest run
    /// whose relative order holds: they keep their order, and fill the offsets of
    /// the new array that neither ``inserted`` nor a move's ``Move/to`` takes.
    ///
    /// ```swift
    /// IdentityDiff(from: [a, b, c, d], to: [b, c, d, a]).moved   // [Move(from: 0, to: 3)]
    /// ```
    public let moved: [Move]

    /// Offsets in the new array of the elements in both arrays whose value is not equal, ascending.
    ///
    /// Moved elements are included when their value changed too.
    ///
    /// ```swift
    /// IdentityDiff(from: [jack], to: [jack.with(salary: 60_000)]).updated   // [0]
    /// ```
    public let updated: [Int]

    /// Whether nothing changed: no removal, insertion, move or update.
    ///
    /// ```swift
    /// IdentityDiff(from: people, to: people).isEmpty   // true
    /// ```
    ///
    /// - Complexity: O(1).
    public var isEmpty: Bool {
        removed.isEmpty && inserted.isEmpty && moved.isEmpty && updated.isEmpty
    }

    /// Compares two collections by identity, then by value.
    ///
    /// ```swift
    /// let diff = IdentityDiff(from: shownNotes, to: latestNotes)
    /// if !diff.isEmpty { show(diff) }
    /// ```
    ///
    /// - Parameters:
    ///   - old: The values as they were, such as the rows on screen.
    ///   - new: The values as they are now.
    /// - Complexity: O(*n* + *m*) hashing and comparing, where *n* and *m* are the
    ///   lengths of `old` and `new`, plus O(*k* log *k*) to find the moves among the
    ///   *k* matched elements; linear when their relative order holds.
    @inlinable
    public init<C: RandomAccessCollection>(from old: C, to new: C)
    where C.Element: Identifiable & Equatable {
        let oldCount = old.count

        // Heckel-style occurrence table: for each id, its earliest old offset not
        // matched yet (-1 once all are), and, per old offset, the next one with the same id.
        var nextUnmatchedOldOffset: [C.Element.ID: Int] = [:]
        nextUnmatchedOldOffset.reserveCapacity(oldCount)
        var nextOldOffsetWithSameID = [Int](repeating: -1, count: oldCount)
        // Indices rather than elements: reading `id` in place spares copying (and retaining) each value.
        var oldIndex = old.endIndex
        var oldOffset = oldCount
        while oldIndex != old.startIndex {
            old.formIndex(before: &oldIndex)
            oldOffset -= 1
            if let following = nextUnmatchedOldOffset.updateValue(oldOffset, forKey: old[oldIndex].id) {
                nextOldOffsetWithSameID[oldOffset] = following
            }
        }

        var oldOffsetsInNewOrder: [Int] = []
        oldOffsetsInNewOrder.reserveCapacity(new.count)
        var updated: [Int] = []
        var newOffset = -1
        for newIndex in new.indices {
            newOffset += 1
            guard let entry = nextUnmatchedOldOffset.index(forKey: new[newIndex].id),
                case let matchedOldOffset = nextUnmatchedOldOffset.values[entry],
                matchedOldOffset >= 0
            else {
                oldOffsetsInNewOrder.append(-1)
                continue
            }
            nextUnmatchedOldOffset.values[entry] = nextOldOffsetWithSameID[matchedOldOffset]
            oldOffsetsInNewOrder.append(matchedOldOffset)
            if old[old.index(old.startIndex, offsetBy: matchedOldOffset)] != new[newIndex] {
                updated.append(newOffset)
            }
        }

        self.init(oldCount: oldCount, oldOffsetsInNewOrder: oldOffsetsInNewOrder, updated: updated)
    }

    /// Finishes a diff from the matching of new offsets to old offsets, which needs no element.
    ///
    /// - Parameters:
    ///   - oldCount: The length of the old collection.
    ///   - oldOffsetsInNewOrder: For each new offset, the matched old offset, or -1 for an insertion.
    ///   - updated: New offsets of the matched elements whose value changed, ascending.
    @usableFromInline
    internal init(oldCount: Int, oldOffsetsInNewOrder: [Int], updated: [Int]) {
        var isMatchedInOld = [Bool](repeating: false, count: oldCount)
        var inserted: [Int] = []
        var matchedNewOffsets: [Int] = []
        var matchedOldOffsets: [Int] = []
        matchedNewOffsets.reserveCapacity(oldOffsetsInNewOrder.count)
        matchedOldOffsets.reserveCapacity(oldOffsetsInNewOrder.count)
        for (newOffset, oldOffset) in oldOffsetsInNewOrder.enumerated() {
            if oldOffset < 0 {
                inserted.append(newOffset)
            } else {
                isMatchedInOld[oldOffset] = true
                matchedNewOffsets.append(newOffset)
                matchedOldOffsets.append(oldOffset)
            }
        }

        let keepsItsPlace = Self.longestIncreasingSubsequenceMembers(of: matchedOldOffsets)
        var moved: [Move] = []
        for (position, stays) in keepsItsPlace.enumerated() where !stays {
            moved.append(Move(from: matchedOldOffsets[position], to: matchedNewOffsets[position]))
        }

        self.removed = isMatchedInOld.indices.filter { !isMatchedInOld[$0] }
        self.inserted = inserted
        self.moved = moved
        self.updated = updated
    }

    /// Marks the members of one longest strictly increasing subsequence of `sequence`.
    ///
    /// Patience sorting: each pile keeps the index of the smallest value that ends
    /// an increasing subsequence of that length, and each element remembers the
    /// top of the pile before its own.
    ///
    /// - Returns: One flag per element of `sequence`, `true` for the members.
    /// - Complexity: O(*k* log *k*) for *k* elements; O(*k*) when `sequence` is already increasing.
    internal static func longestIncreasingSubsequenceMembers(of sequence: [Int]) -> [Bool] {
        if zip(sequence, sequence.dropFirst()).allSatisfy({ $0 < $1 }) {
            return [Bool](repeating: true, count: sequence.count)
        }

        var pileTops: [Int] = []
        var predecessor = [Int](repeating: -1, count: sequence.count)
        for (index, value) in sequence.enumerated() {
            // Mostly the order holds and the value extends the longest run: no search needed.
            if let last = pileTops.last, sequence[last] < value {
                predecessor[index] = last
                pileTops.append(index)
                continue
            }
            var low = 0
            var high = pileTops.count
            while low < high {
                let middle = (low + high) / 2
                if sequence[pileTops[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { predecessor[index] = pileTops[low - 1] }
            if low == pileTops.count { pileTops.append(index) } else { pileTops[low] = index }
        }

        var isMember = [Bool](repeating: false, count: sequence.count)
        var index = pileTops.last ?? -1
        while index >= 0 {
            isMember[index] = true
            index = predecessor[index]
        }
        return isMember
    }
}
