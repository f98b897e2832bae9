import AmberLock
import OrderedCollections

extension IdentityStore {
    /// Reads what other writers changed in the storage and applies it as one change of origin
    /// `.otherProcess`; the answer to the storage's signal.
    ///
    /// Reading and applying happen under the write lock, so a local write can neither slip
    /// between them (and be overwritten by older data) nor be read back as someone else's.
    func applyExternalChanges() {
        guard let persistence else { return }
        let queued = try? writeLock.withLock(throwingIfHeld: StoreError.writeInsideTransaction) { writer -> Bool in
            guard let change = try persistence.storage.externalChanges() else { return false }
            return applyExternalChange(change, writer: &writer)
        }
        if queued == true { deliverToMainActor() }
    }

    /// Applies what other writers committed to memory and publishes it as its own change of
    /// origin `.otherProcess`; called under the write lock.
    ///
    /// Memory ends in the storage's order: an identity deleted and inserted again moves last.
    /// A value whose record no longer decodes (a newer model wrote it) leaves memory and is listed
    /// in ``undecodable``, so no later edit overwrites the newer record with the old shape.
    ///
    /// - Returns: Whether the change was queued for main-actor observers.
    @usableFromInline
    func applyExternalChange(_ external: ExternalChange, writer: inout WriterState<Value.ID>) -> Bool {
        guard let persistence else { return false }
        // Planned in a scope of its own, so the store's values are no longer shared when applied.
        let (change, apply) = plan(external, persistence: persistence, writer: &writer)
        return publish(change, apply: apply)
    }

    private func plan(
        _ external: ExternalChange, persistence: Persistence<Value>, writer: inout WriterState<Value.ID>
    ) -> (StoreChange<Value>, (inout StoreState<Value>) -> Void) {
        let current = state.withLock { $0.values }
        switch external {
        case .snapshot(let records):
            let loaded = persistence.reconcile(records)
            writer.recordIDs = loaded.recordIDs
            var inserted: [Value] = []
            var updated: [StoreChange<Value>.Update] = []
            for (id, value) in loaded.values {
                if let old = current[id] {
                    if isEqual?(old, value) != true { updated.append(.init(old: old, new: value)) }
                } else {
                    inserted.append(value)
                }
            }
            let removed = current.values.filter { loaded.values[$0.id] == nil }
            // Usually the identities kept stay in their order and the new ones follow them.
            let kept = current.keys.filter { loaded.values[$0] != nil }
            let keepsOrder = loaded.values.keys.prefix(kept.count).elementsEqual(kept)
            let change = StoreChange(
                inserted: inserted, updated: updated, removed: removed, origin: .otherProcess,
                reordering: keepsOrder ? nil : .replaced(loaded.values.values.elements)
            )
            return (
                change,
                { state in
                    state.values = loaded.values
                    state.undecodable = loaded.undecodable
                }
            )
        case .records(let upserts, let deletions):
            return planRecords(
                upserts: upserts, deletions: deletions, current: current, persistence: persistence, writer: &writer)
        }
    }

    private func planRecords(
        upserts: [StoredRecord], deletions: [String], current: OrderedDictionary<Value.ID, Value>,
        persistence: Persistence<Value>, writer: inout WriterState<Value.ID>
    ) -> (StoreChange<Value>, (inout StoreState<Value>) -> Void) {
        // Identities whose record was deleted; those upserted again below moved last.
        var deleted: OrderedDictionary<Value.ID, Value> = [:]
        for recordID in deletions {
            guard let id = persistence.identity(ofRecord: recordID, writer.recordIDs), let value = current[id],
                persistence.storedID(id, writer.recordIDs) == recordID
            else { continue }
            deleted[id] = value
            writer.recordIDs.remove(id)
        }
        // What this change places, by identity, in the order of `upserts`. The store's values are
        // only read: a copy to mutate would cost O(n) per change.
        var latest: OrderedDictionary<Value.ID, (value: Value, moved: Bool)> = [:]
        var failures: [UndecodableRecord] = []
        func isHeld(_ id: Value.ID) -> Bool {
            latest[id] != nil || (current[id] != nil && deleted[id] == nil)
        }
        for record in upserts {
            switch persistence.place(record, isHeld: isHeld, recordIDs: writer.recordIDs) {
            case .value(let value, let recordIDIsForeign):
                if recordIDIsForeign { writer.recordIDs.set(record.id, for: value.id) }
                let moved = deleted.removeValue(forKey: value.id) != nil
                latest[value.id] = (value, moved || latest[value.id]?.moved == true)
            case .undecodable(let entry):
                failures.append(entry)
                // The record of a value in memory now holds something this model cannot read.
                if let id = persistence.identity(ofRecord: record.id, writer.recordIDs), isHeld(id),
                    persistence.storedID(id, writer.recordIDs) == record.id
                {
                    writer.recordIDs.remove(id)
                    latest.removeValue(forKey: id)
                    if let value = current[id] { deleted[id] = value }
                }
            }
        }
        var inserted: [Value] = []
        var updated: [StoreChange<Value>.Update] = []
        for (id, entry) in latest {
            if let old = current[id] {
                if isEqual?(old, entry.value) != true { updated.append(.init(old: old, new: entry.value)) }
            } else {
                inserted.append(entry.value)
            }
        }
        let removed = Array(deleted.values)
        let touched = Set(deletions).union(upserts.map(\.id))
        // Identities removed and added again go last, among the new ones, in the order of `latest`.
        var reordering: StoreChange<Value>.Reordering?
        if latest.values.contains(where: \.moved) {
            reordering = .placedLast(
                latest.compactMap { id, entry in
                    entry.moved || current[id] == nil ? entry.value : nil
                })
        }
        let change = StoreChange(
            inserted: inserted, updated: updated, removed: removed, origin: .otherProcess, reordering: reordering
        )
        return (
            change,
            { state in
                for value in removed { state.values.removeValue(forKey: value.id) }
                for (id, entry) in latest {
                    if entry.moved { state.values.removeValue(forKey: id) }
                    state.values[id] = entry.value
                }
                if !touched.isEmpty { state.undecodable.removeAll { touched.contains($0.id) } }
                state.undecodable += failures
            }
        )
    }

    /// Turns undecodable records into values, in one transaction.
    ///
    /// ```swift
    /// try store.recover { record in
    ///     try? JSONDecoder().decode(OldNote.self, from: record.data).upgraded
    /// }
    /// ```
    ///
    /// Runs as one write: `transform` sees the undecodable records as they are once other
    /// writers' changes are taken in, and no other write comes between it and the write.
    /// Each recovered record is replaced by the value, stored under the value's identity; a value
    /// new to the store goes last, on disk as in memory.
    ///
    /// - Parameter transform: Returns the value for a record, or `nil` to leave the record as it is.
    /// - Throws: What `transform` throws, or ``StoreError`` when persisting fails; then nothing changed.
    public func recover(_ transform: (UndecodableRecord) throws -> Value?) throws {
        guard persistence != nil else { return }
        try commit { values, writes in
            var transaction = StoreTransaction(base: values)
            var recovered: [String] = []
            for record in state.withLock({ $0.undecodable }) {
                guard let value = try transform(record) else { continue }
                transaction.add(value)
                recovered.append(record.id)
            }
            writes = transaction.resolved(isEqual: isEqual)
            writes.recordDeletions = recovered
        }
    }
}
