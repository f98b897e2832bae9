import AmberLock

extension IdentityStore {
    /// Every value, in the order identities were first added; an update keeps the position.
    ///
    /// - Complexity: O(*n*): a copy made under the store's lock, so that no write ever has to
    ///   copy the store because a reader still shares its storage.
    public var all: [Value] {
        state.withLock { $0.values.values.withUnsafeBufferPointer { Array($0) } }
    }

    /// Every identity, in the order of ``all``.
    ///
    /// - Complexity: O(*n*), a copy made under the store's lock, like ``all``.
    public var ids: [Value.ID] {
        state.withLock { $0.values.keys.map { $0 } }
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
    /// - Complexity: O(*m*) for *m* values, under one lock.
    public func refreshed(_ values: some Sequence<Value>) -> [Value] {
        let ids = values.map(\.id)
        return state.withLock { state in ids.compactMap { state.values[$0] } }
    }

    /// Stored records that no longer decode as `Value`; they stay on disk untouched.
    ///
    /// Repair them with ``recover(_:)``.
    public var undecodable: [UndecodableRecord] {
        state.withLock { $0.undecodable }
    }
}
