import Foundation

// What the sync client (module AmberSync, same package) needs from a store: its storage, its
// record ids, and a write of origin `.sync`. Not public: apps sync through `SyncClient`.
extension IdentityStore {
    /// The key and storage place of a persistent store, or `nil` for a store in memory or on a
    /// storage that cannot say where it writes.
    package var storageLocation: (key: String, place: String)? {
        guard let persistence, let place = (persistence.storage as? any StoragePlace)?.place else { return nil }
        return (persistence.key, place)
    }

    /// The record id under which the store writes `id`.
    package func recordID(of id: Value.ID) -> String? {
        guard let persistence else { return nil }
        return persistence.recordID(id)
    }

    /// The identity a record id stands for, when the store's own mapping can tell.
    package func identity(ofRecord recordID: String) -> Value.ID? {
        persistence?.identity(recordID)
    }

    /// Runs a transaction whose change is published with origin ``StoreChange/Origin/sync``,
    /// handing `body` the storage's own transaction too, so that what it writes there commits
    /// with the store's records or not at all.
    ///
    /// Like ``transaction(_:)``: the body runs inside the storage's write, after other writers'
    /// changes were taken in, so it sees the newest values.
    ///
    /// - Throws: ``StoreError/writeFailed(path:key:reason:)`` when the store's storage does not hand
    ///   out a `Transaction` (a store in memory, or on another storage); what `body` throws.
    package func syncTransaction<Transaction, R>(
        _ body: (inout StoreTransaction<Value>, Transaction) throws -> R
    ) throws -> R {
        guard let persistence, let handle = persistence.storage as? any TransactionalStorageKeyHandle<Transaction>
        else {
            throw StoreError.writeFailed(
                path: storageLocation?.place ?? "memory", key: persistence?.key ?? "",
                reason: "the store's storage does not hand its transaction to a write")
        }
        // The storage's transaction, from the storage write to the body the store runs inside it.
        var open: Transaction?
        let write: StorageWrite = { storeBody in
            try handle.writeInTransaction { external, transaction in
                open = transaction
                defer { open = nil }
                return try storeBody(external)
            }
        }
        return try commit(origin: .sync, storageWrite: write) { transaction in
            // Set: for a persistent store, `commit` runs the body inside the storage write.
            try body(&transaction, open!)
        }.result
    }
}
