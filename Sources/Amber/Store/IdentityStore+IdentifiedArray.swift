import IdentifiedCollections

extension IdentityStore where Value.ID: Hashable {
    /// Every value as an `IdentifiedArray`, in the order of ``all``: look-up by id and order in one.
    ///
    /// ```swift
    /// let people = store.identified
    /// people[id: jack.id]?.salary
    /// ```
    ///
    /// - Complexity: O(*n*).
    public var identified: IdentifiedArrayOf<Value> {
        IdentifiedArray(uncheckedUniqueElements: all)
    }
}
