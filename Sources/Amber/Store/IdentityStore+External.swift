extension IdentityStore {
    /// Reads what other writers changed in the storage and applies it as one change of origin
    /// `.otherProcess`.
    ///
    /// Reading and applying happen under the write lock, so a local write can neither slip
    /// between them (and be overwritten by older data) nor be read back as someone else's.
    func applyExternalChanges() {
        guard let persistence else { return }
        _ = try? commit(origin: .otherProcess, persist: false) { transaction in
            guard let change = try persistence.storage.externalChanges() else { return }
            applyExternal(change, to: &transaction, persistence: persistence)
        }
    }

    private func applyExternal(
        _ change: ExternalChange, to transaction: inout StoreTransaction<Value>, persistence: Persistence<Value>
    ) {
        let records: [StoredRecord]
        let deletions: Set<String>
        let isSnapshot: Bool
        switch change {
        case .records(let upserts, let deleted):
            (records, deletions, isSnapshot) = (upserts, Set(deleted), false)
        case .snapshot(let all):
            (records, deletions, isSnapshot) = (all, [], true)
        }
        var decoded: [Value] = []
        var failures: [UndecodableRecord] = []
        for record in records {
            do {
                decoded.append(try persistence.decode(record.data))
            } catch {
                failures.append(UndecodableRecord(id: record.id, data: record.data, reason: "\(error)"))
            }
        }
        // A value whose record now fails to decode (a newer model wrote it) leaves memory, so no
        // later edit overwrites the newer record with the old shape.
        let gone = deletions.union(failures.map(\.id))
        let present = Set(records.map(\.id))
        if isSnapshot || !gone.isEmpty {
            for id in transaction.base.keys {
                let recordID = persistence.recordID(id)
                if gone.contains(recordID) || (isSnapshot && !present.contains(recordID)) {
                    transaction.remove(id: id)
                }
            }
        }
        for value in decoded { transaction.add(value) }
        let touched = present.union(deletions)
        state.withLock { state in
            if isSnapshot {
                state.undecodable = failures
            } else {
                state.undecodable.removeAll { touched.contains($0.id) }
                state.undecodable += failures
            }
        }
    }

    /// Forgets undecodable records that a local write has just replaced or deleted on disk.
    @usableFromInline
    func forgetUndecodable(touchedBy batch: StorageBatch) {
        state.withLock { state in
            guard !state.undecodable.isEmpty else { return }
            let touched = Set(batch.upserts.map(\.id)).union(batch.deletions)
            state.undecodable.removeAll { touched.contains($0.id) }
        }
    }

    /// Turns undecodable records into values, in one transaction.
    ///
    /// ```swift
    /// try store.recover { record in
    ///     try? JSONDecoder().decode(OldNote.self, from: record.data).upgraded
    /// }
    /// ```
    ///
    /// - Parameter transform: Returns the value for a record, or `nil` to leave the record as it is.
    ///   The value must have the record's identity.
    /// - Throws: What `transform` throws, or ``StoreError`` when persisting fails; then nothing changed.
    public func recover(_ transform: (UndecodableRecord) throws -> Value?) throws {
        guard let persistence else { return }
        var recovered: [(id: String, value: Value)] = []
        for record in undecodable {
            guard let value = try transform(record) else { continue }
            precondition(
                persistence.recordID(value.id) == record.id,
                "IdentityStore.recover(_:) must return a value with the record's identity \(record.id)"
            )
            recovered.append((record.id, value))
        }
        guard !recovered.isEmpty else { return }
        // A recovered value is new to the store, which puts it last: its record moves last too,
        // so a reopened store keeps the same order. Records left alone are not touched.
        try commit(movingLast: recovered.map(\.id)) { transaction in
            for (_, value) in recovered { transaction.add(value) }
        }
        let ids = Set(recovered.map(\.id))
        state.withLock { $0.undecodable.removeAll { ids.contains($0.id) } }
    }
}
