extension IdentityStore {
    /// Opens an ``Editor`` on the value of an identity: an edit that rebases onto newer stored values.
    ///
    /// ```swift
    /// let editor = try notes.editor(id: note.id)
    /// editor.update { $0.title = "Groceries" }
    /// try notes.update(id: note.id) { $0.with(tags: ["Ice Cream"]) }
    /// editor.value.tags    // ["Ice Cream"]: rebased before the write returned
    /// editor.value.title   // "Groceries"
    /// try editor.save()
    /// ```
    ///
    /// The editor follows the identity for as long as it is referenced; the store holds it weakly.
    ///
    /// - Parameter id: The identity to edit.
    /// - Returns: An editor whose ``Editor/base`` and ``Editor/value`` are the stored value.
    /// - Throws: ``StoreError/identityNotFound(id:)`` when the store does not hold `id`.
    @MainActor
    public func editor(id: Value.ID) throws -> Editor<Value> where Value: Mergeable & ImmutableModel {
        let (stamp, value) = beginObserving(id)
        guard let value else {
            endObserving()
            throw StoreError.identityNotFound(id: "\(id)")
        }
        return Editor(store: self, value: value, since: stamp)
    }
}
