extension IdentityDiff {
    /// Replays the diff on `old` the way a table view performs a batch update, and returns the result.
    ///
    /// The steps, all read from the diff:
    /// 1. The elements at ``removed`` (offsets in `old`) leave.
    /// 2. Each ``moved`` element leaves its ``Move/from`` offset in `old` and takes
    ///    its ``Move/to`` offset in the result.
    /// 3. Each ``inserted`` offset takes `new`'s element at that offset.
    /// 4. The other elements of `old` keep their relative order and fill the
    ///    offsets still free, first to last.
    /// 5. Each ``updated`` offset takes `new`'s value there, as a reload shows it.
    ///
    /// For a diff computed from `old` and `new`, the result equals `new`, element
    /// for element; the elements that did not change are the ones from `old`.
    ///
    /// ```swift
    /// let diff = IdentityDiff(from: old, to: new)
    /// assert(diff.applied(to: old, new: new) == new)
    /// ```
    ///
    /// - Precondition: `old` and `new` have the lengths of the arrays the diff was computed from.
    /// - Parameters:
    ///   - old: The array the diff starts from.
    ///   - new: The array the diff ends with; it supplies inserted and updated values.
    /// - Returns: `old` with the diff applied.
    /// - Complexity: O(*n* + *m*), where *n* and *m* are the lengths of `old` and `new`.
    public func applied<Element>(to old: [Element], new: [Element]) -> [Element] {
        precondition(
            old.count - removed.count == new.count - inserted.count,
            "The diff must be applied to arrays of the lengths it was computed from."
        )

        var leavesItsPlace = [Bool](repeating: false, count: old.count)
        for offset in removed { leavesItsPlace[offset] = true }
        for move in moved { leavesItsPlace[move.from] = true }

        var isInserted = [Bool](repeating: false, count: new.count)
        for offset in inserted { isInserted[offset] = true }
        var movedFrom = [Int](repeating: -1, count: new.count)
        for move in moved { movedFrom[move.to] = move.from }

        var result: [Element] = []
        result.reserveCapacity(new.count)
        var nextOldOffset = 0
        for offset in new.indices {
            if isInserted[offset] {
                result.append(new[offset])
            } else if movedFrom[offset] >= 0 {
                result.append(old[movedFrom[offset]])
            } else {
                while leavesItsPlace[nextOldOffset] { nextOldOffset += 1 }
                result.append(old[nextOldOffset])
                nextOldOffset += 1
            }
        }
        for offset in updated { result[offset] = new[offset] }
        return result
    }
}
