extension IdentityDiff {
    /// An element of both arrays that an update touched: where it stood before and where it stands after.
    struct Touched {
        /// The element's offset in the old array.
        let from: Int
        /// The element's offset in the new array.
        let to: Int
        /// Whether the element is known to keep its order relative to every untouched element,
        /// as a value whose sort key did not change does; such an element is never moved.
        let keepsItsOrder: Bool
        /// Whether its value changed: it is listed in ``IdentityDiff/updated``.
        let isUpdated: Bool
    }

    /// A diff with the offsets already known.
    init(removed: [Int], inserted: [Int], moved: [Move], updated: [Int]) {
        self.removed = removed
        self.inserted = inserted
        self.moved = moved
        self.updated = updated
    }

    /// The diff that inserts every element of an array of `count` elements into an empty one.
    static func insertingAll(_ count: Int) -> IdentityDiff {
        IdentityDiff(removed: [], inserted: Array(0..<count), moved: [], updated: [])
    }

    /// The diff of an update that touched few elements of a sorted array, in time proportional to
    /// their number rather than to the array's length.
    ///
    /// Every element not listed in `removed`, `inserted` or `touched` kept its relative order.
    /// A touched element that did not keep its order is moved only when it left the place it had
    /// among the elements that did: it is moved when it changed neighbours, not when its key
    /// changed but its place did not.
    ///
    /// - Parameters:
    ///   - removed: Offsets in the old array of the elements that left it.
    ///   - inserted: Offsets in the new array of the elements that arrived.
    ///   - touched: The touched elements in both arrays.
    /// - Complexity: O(*k* log *k*) for *k* elements listed.
    init(removed: [Int], inserted: [Int], touched: [Touched]) {
        let removed = removed.sorted()
        let inserted = inserted.sorted()
        let candidates = touched.filter { !$0.keepsItsOrder }
        // Offsets before and after of the elements whose order is not known to hold; the others,
        // steady, appear in the same order in both arrays.
        let unsteadyBefore = (removed + candidates.map(\.from)).sorted()
        let unsteadyAfter = (inserted + candidates.map(\.to)).sorted()

        // A candidate between the same steady neighbours before and after may keep its place;
        // among those between the same neighbours, a longest run whose order holds does.
        var moved: [Move] = []
        var byGap: [Int: [Touched]] = [:]
        for candidate in candidates {
            let steadyBefore = candidate.from - Self.count(of: unsteadyBefore, below: candidate.from)
            let steadyAfter = candidate.to - Self.count(of: unsteadyAfter, below: candidate.to)
            if steadyBefore == steadyAfter {
                byGap[steadyBefore, default: []].append(candidate)
            } else {
                moved.append(Move(from: candidate.from, to: candidate.to))
            }
        }
        for group in byGap.values {
            let group = group.sorted { $0.to < $1.to }
            let stays = Self.longestIncreasingSubsequenceMembers(of: group.map(\.from))
            for (candidate, stays) in zip(group, stays) where !stays {
                moved.append(Move(from: candidate.from, to: candidate.to))
            }
        }
        moved.sort { $0.to < $1.to }
        self.init(
            removed: removed, inserted: inserted, moved: moved,
            updated: touched.filter(\.isUpdated).map(\.to).sorted()
        )
    }

    /// How many elements of an ascending array are less than `value`.
    private static func count(of sorted: [Int], below value: Int) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
