import AmberLock
import OrderedCollections

extension IdentityStore {
    /// Inserts `value`, or replaces the value of its identity; the identity keeps its position.
    ///
    /// ```swift
    /// try store.add(jack)                          // inserted
    /// try store.add(jack.update(salary: 60_000))   // updated, count stays 1
    /// try store.add(jack.update(salary: 60_000))   // equal to what is stored: nil, nothing written
    /// ```
    ///
    /// - Returns: The change, or `nil` when `value` equals (`==`, for `Equatable` values) what is stored.
    /// - Throws: ``StoreError`` when persisting fails; then nothing changed.
    @inlinable @discardableResult
    public func add(_ value: Value) throws -> StoreChange<Value>? {
        guard persistence != nil else { return try addInMemory(value) }
        return try commit { values, writes in
            if let old = values[value.id] {
                if isEqual?(old, value) != true { writes.updated.append(.init(old: old, new: value)) }
            } else {
                writes.inserted.append(value)
            }
        }.change
    }

    /// ``add(_:)`` for a store without storage, the most common write: resolved and applied in
    /// one step under the state lock, with one look-up of the identity.
    @inlinable
    func addInMemory(_ value: Value) throws -> StoreChange<Value>? {
        var queued = false
        let change = try writeLock.withLock(throwingIfHeld: StoreError.writeInsideTransaction) {
            _ -> StoreChange<Value>? in
            let (change, stamp) = state.withLock { state -> (StoreChange<Value>?, UInt64?) in
                guard let old = state.values.updateValue(value, forKey: value.id) else {
                    let change = StoreChange(inserted: [value])
                    return (change, state.publish(change))
                }
                if isEqual?(old, value) == true {
                    state.values.updateValue(old, forKey: value.id)
                    return (nil, nil)
                }
                let change = StoreChange(updated: [.init(old: old, new: value)])
                return (change, state.publish(change))
            }
            if let change, let stamp {
                delivery.enqueue(change, stamp: stamp)
                queued = true
            }
            return change
        }
        if queued { deliverToMainActor() }
        return change
    }

    /// Inserts or replaces many values in one transaction, delivered as one change.
    ///
    /// Accepts any sequence, such as an array or an `IdentifiedArray`. When the sequence holds
    /// an identity more than once, its last value wins.
    ///
    /// - Throws: ``StoreError`` when persisting fails; then nothing changed.
    /// - Complexity: O(*m*) for *m* values, plus one storage write.
    @inlinable
    public func add(contentsOf values: some Sequence<Value>) throws {
        try commit { transaction in
            for value in values { transaction.add(value) }
        }
    }

    /// Removes the value of the identity `value` is a snapshot of, whatever its other fields.
    ///
    /// - Returns: The value that was stored, or `nil` when the identity was absent.
    @discardableResult
    public func remove(_ value: Value) throws -> Value? {
        try remove(id: value.id)
    }

    /// Removes the value of an identity.
    ///
    /// - Returns: The value that was stored, or `nil` when the identity was absent.
    /// - Complexity: O(*n*): later identities move up one position.
    @discardableResult
    public func remove(id: Value.ID) throws -> Value? {
        try commit { $0.remove(id: id) }.result
    }

    /// Removes every value, as one change. Undecodable records stay on disk.
    public func removeAll() throws {
        try commit { transaction in
            for id in transaction.base.keys { transaction.remove(id: id) }
        }
    }

    /// Replaces the value of an identity by a function of its current value, atomically:
    /// no other write comes between the read and the write.
    ///
    /// ```swift
    /// try store.update(id: jack.id) { $0.update(salary: $0.salary + 10_000) }
    /// ```
    ///
    /// The transform must keep the identity (`id`).
    ///
    /// - Returns: The new value, or `nil` when the identity is absent (then `transform` is not called).
    /// - Throws: What `transform` throws (then nothing changed), or ``StoreError`` when persisting fails.
    @discardableResult
    public func update(id: Value.ID, _ transform: (Value) throws -> Value) throws -> Value? {
        try commit { transaction -> Value? in
            guard let old = transaction[id: id] else { return nil }
            let new = try transform(old)
            precondition(new.id == id, "IdentityStore.update(id:_:) must return a value of the same identity")
            transaction.add(new)
            return new
        }.result
    }

    /// Runs several writes as one: all of them or none, delivered as one change.
    ///
    /// No reader or subscriber sees part of a transaction. If `body` throws, nothing changes and
    /// the error is rethrown unchanged. Write through the `transaction` parameter only; writing to
    /// the store itself from `body` is a programmer error.
    ///
    /// ```swift
    /// try store.transaction { transaction in
    ///     transaction.remove(id: draft.id)
    ///     transaction.add(published)
    /// }
    /// ```
    ///
    /// - Returns: What `body` returns.
    public func transaction<R>(_ body: (inout StoreTransaction<Value>) throws -> R) throws -> R {
        try commit(body).result
    }

    /// Runs a transaction body through ``commit(origin:storageWrite:resolve:)``.
    @inlinable @discardableResult
    func commit<R>(
        origin: StoreChange<Value>.Origin = .local,
        storageWrite: StorageWrite? = nil,
        _ body: (inout StoreTransaction<Value>) throws -> R
    ) throws -> (result: R, change: StoreChange<Value>?) {
        try commit(origin: origin, storageWrite: storageWrite) { values, writes in
            var transaction = StoreTransaction(base: values)
            let result = try body(&transaction)
            writes = transaction.resolved(isEqual: isEqual)
            return result
        }
    }

    /// The one write path: take in what other writers committed, resolve the writes against the
    /// current values, persist them, publish them, notify.
    ///
    /// For a persistent store, everything from taking in other writers' changes to persisting
    /// happens inside one storage write (one SQLite transaction, one file lock), so no other
    /// writer's commit can come between the values `resolve` reads and the write it makes.
    ///
    /// - Parameters:
    ///   - storageWrite: Runs the storage write in place of ``StorageKeyHandle/write(_:)``; `nil`
    ///     for that one.
    ///   - resolve: Given the current values, fills in the net writes and returns a result. It
    ///     must not keep the values: applying the writes then mutates them in place.
    ///
    /// Inlinable, like ``add(_:)``, so that both are specialized for the app's value type: run
    /// generically, the metadata look-ups of its generic types cost more than the work itself.
    @inlinable @discardableResult
    func commit<R>(
        origin: StoreChange<Value>.Origin = .local,
        storageWrite: StorageWrite? = nil,
        resolve: (OrderedDictionary<Value.ID, Value>, inout ResolvedWrites<Value>) throws -> R
    ) throws -> (result: R, change: StoreChange<Value>?) {
        var change: StoreChange<Value>?
        var queued = false
        // Outside the write lock, even when the write throws after taking in other writers'
        // changes: main-actor observers may write to the store. On the main actor, changes that
        // background threads queued are delivered too, so the caller sees everything before it.
        defer { deliverAfterWrite(queued: queued) }
        if persistence != nil { try refuseNestedWrite() }
        let result = try writeLock.withLock(throwingIfHeld: StoreError.writeInsideTransaction) { writer throws -> R in
            var writes = ResolvedWrites<Value>()
            let result: R
            var forgotten: Set<String> = []
            if let persistence {
                result = try persist(
                    persistence, writer: &writer, writes: &writes, forgotten: &forgotten, queued: &queued,
                    storageWrite: storageWrite
                ) {
                    try resolve($0, &$1)
                }
            } else {
                result = try resolve(state.withLock { $0.values }, &writes)
            }
            guard !writes.isEmpty else { return result }
            let committed = StoreChange(
                inserted: writes.inserted, updated: writes.updated, removed: writes.removed, origin: origin
            )
            if publish(
                committed,
                apply: { state in
                    writes.apply(to: &state.values)
                    if !forgotten.isEmpty { state.undecodable.removeAll { forgotten.contains($0.id) } }
                })
            {
                queued = true
            }
            change = committed.isEmpty ? nil : committed
            return result
        }
        return (result, change)
    }

    /// Throws when this thread is already inside a write to the same storage place, before any
    /// lock is taken: waiting for this store's write lock could wait on a thread that waits for
    /// the storage lock this thread holds.
    @usableFromInline
    func refuseNestedWrite() throws {
        guard let place = (persistence?.storage as? any StoragePlace)?.place, WriterThreads.isWriting(place) else {
            return
        }
        throw StoreError.writeFailed(path: place, key: persistence?.key ?? "", reason: WriterThreads.nestedWriteReason)
    }

    /// Resolves and persists a write inside one storage write, after taking in other writers' changes.
    ///
    /// - Parameters:
    ///   - forgotten: Set to the undecodable records the write replaced or deleted.
    ///   - storageWrite: Runs the storage write; `nil` for ``StorageKeyHandle/write(_:)``.
    @usableFromInline
    func persist<R>(
        _ persistence: Persistence<Value>,
        writer: inout WriterState<Value.ID>,
        writes: inout ResolvedWrites<Value>,
        forgotten: inout Set<String>,
        queued: inout Bool,
        storageWrite: StorageWrite?,
        resolve: (OrderedDictionary<Value.ID, Value>, inout ResolvedWrites<Value>) throws -> R
    ) throws -> R {
        var result: R?
        var batch = StorageBatch()
        func write(_ external: ExternalChange?) throws -> StorageBatch {
            if let external, applyExternalChange(external, writer: &writer) { queued = true }
            result = try resolve(state.withLock { $0.values }, &writes)
            guard !writes.isEmpty else { return StorageBatch() }
            let undecodable = state.withLock { state in
                state.undecodable.isEmpty ? [] : Set(state.undecodable.map(\.id))
            }
            batch = try persistence.batch(for: writes, recordIDs: writer.recordIDs, undecodable: undecodable)
            return batch
        }
        if let storageWrite { try storageWrite(write) } else { try persistence.storage.write(write) }
        for value in writes.removed { writer.recordIDs.remove(value.id) }
        forgotten = Set(batch.upserts.map(\.id)).union(batch.deletions)
        // `result` is set: `write` runs its body once or throws.
        return result!
    }

    /// Runs a store's write body inside one write of its storage key, as
    /// ``StorageKeyHandle/write(_:)`` does.
    @usableFromInline
    typealias StorageWrite = (_ body: (ExternalChange?) throws -> StorageBatch) throws -> Void

    /// Applies a committed change to the state and hands it to subscribers, under the state lock,
    /// and queues it for main-actor observers; called in commit order, under the write lock.
    ///
    /// - Parameter apply: Brings the state to the change's outcome.
    /// - Returns: Whether the change was queued for main-actor observers.
    @inlinable
    func publish(_ committed: StoreChange<Value>, apply: (inout StoreState<Value>) -> Void) -> Bool {
        let stamp = state.withLock { state -> UInt64? in
            apply(&state)
            return committed.reachesOrderObservers ? state.publish(committed) : nil
        }
        guard let stamp else { return false }
        delivery.enqueue(committed, stamp: stamp)
        return true
    }
}
