extension Identifiable {
    /// Whether two values are snapshots of the same identity, whatever their other fields.
    ///
    /// Equality (`==`) stays value equality: Jack before and after his raise are
    /// not equal, but they are the same person.
    ///
    /// ```swift
    /// let raised = jack.with(salary: 60_000)
    /// raised == jack                    // false: the values differ
    /// raised.hasSameIdentity(as: jack)  // true: same `id`
    /// ```
    ///
    /// - Parameter other: Another snapshot of the same type.
    /// - Returns: `true` when both values have an equal `id`.
    @inlinable
    public func hasSameIdentity(as other: Self) -> Bool {
        id == other.id
    }
}

/// Whether two values are snapshots of the same identity (equal `id`), whatever their other fields.
///
/// ```swift
/// if !isSameIdentity(shownPerson, newPerson) { resetScrollPosition() }
/// ```
///
/// - Returns: `true` when `a.id == b.id`.
@inlinable
public func isSameIdentity<T: Identifiable>(_ a: T, _ b: T) -> Bool {
    a.id == b.id
}
