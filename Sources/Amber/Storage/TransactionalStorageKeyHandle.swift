/// A storage key whose writes can hand their body the storage's own write transaction.
///
/// Not public: for code of this package that keeps tables of its own in step with a store's
/// records, in the transaction that writes them (sync's bookkeeping beside `SQLiteStorage`'s
/// records). A store runs such a write with `IdentityStore.syncTransaction(_:)`.
package protocol TransactionalStorageKeyHandle<Transaction>: StorageKeyHandle {
    /// What the storage hands a write's body: its open transaction, valid while the body runs.
    associatedtype Transaction

    /// ``StorageKeyHandle/write(_:)``, whose body also receives the transaction the write runs in.
    /// What the body writes through it commits or rolls back with the batch.
    func writeInTransaction(_ body: (ExternalChange?, Transaction) throws -> StorageBatch) throws
}
