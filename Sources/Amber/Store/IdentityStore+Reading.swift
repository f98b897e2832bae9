extension IdentityStore {
    /// Every value, in the order identities were first added; an update keeps the position.
    ///
    /// - Complexity: O(*n*), outside the store's lock.
    public var all: [Value] {
        Array(state.withLock { $0.values }.values)
    }

    /// Every identity, in the order of ``all``.
    ///
    /// - Complexity: O(*n*), outside the store's lock.
    public var ids: [Value.ID] {
        Array(state.withLock { $0.values }.keys)
    }

    /// The number of identities in the store.
    public var count: Int {
        state.withLock { $0.values.count }
    }

    /// The value of an identity, or `nil` when the store does not hold it.
    ///
    /// ```swift
    /// let jack = store[id: "123-45-6789"]
    /// ```
    public subscript(id id: Value.ID) -> Value? {
        state.withLock { $0.values[id] }
    }

    /// The newest value of the identity `value` is a snapshot of, or `nil` when it was removed.
    ///
    /// ```swift
    /// store.latest(jack)?.salary   // the salary after any raise, even if `jack` is outdated
    /// ```
    public func latest(_ value: Value) -> Value? {
        self[id: value.id]
    }

    /// Each value replaced by the newest value of its identity, removed identities dropped, order kept.
    ///
    /// A timeline keeps its array of notes current this way when the store changes:
    ///
    /// ```swift
    /// timeline = notes.refreshed(timeline)
    /// ```
    ///
    /// - Complexity: O(*m*) for *m* values, under one short lock.
    public func refreshed(_ values: some Sequence<Value>) -> [Value] {
        let current = state.withLock { $0.values }
        return values.compactMap { current[$0.id] }
    }

    /// Stored records that no longer decode as `Value`; they stay on disk untouched.
    ///
    /// Repair them with ``recover(_:)``.
    public var undecodable: [UndecodableRecord] {
        state.withLock { $0.undecodable }
    }
}
