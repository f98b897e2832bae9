extension IdentityStore {
    /// Applies what another writer changed in the storage as a change of origin `.otherProcess`.
    func applyExternalChange(_ change: ExternalChange) {
        guard let persistence else { return }
        var decoded: [Value] = []
        var failures: [UndecodableRecord] = []
        let records: [StoredRecord]
        var deletions: Set<String> = []
        var isSnapshot = false
        switch change {
        case .records(let upserts, let deleted):
            records = upserts
            deletions = Set(deleted)
        case .snapshot(let all):
            records = all
            isSnapshot = true
        }
        for record in records {
            do {
                decoded.append(try persistence.decode(record.data))
            } catch {
                failures.append(UndecodableRecord(id: record.id, data: record.data, reason: "\(error)"))
            }
        }
        let touched = Set(records.map(\.id)).union(deletions)
        commitExternal(origin: .otherProcess) { transaction in
            if isSnapshot {
                let present = Set(records.map(\.id))
                for id in transaction.base.keys where !present.contains(persistence.recordID(id)) {
                    transaction.remove(id: id)
                }
            } else if !deletions.isEmpty {
                for id in transaction.base.keys where deletions.contains(persistence.recordID(id)) {
                    transaction.remove(id: id)
                }
            }
            for value in decoded { transaction.add(value) }
        }
        state.withLock { state in
            if isSnapshot {
                state.undecodable = failures
            } else {
                state.undecodable.removeAll { touched.contains($0.id) }
                state.undecodable += failures
            }
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
