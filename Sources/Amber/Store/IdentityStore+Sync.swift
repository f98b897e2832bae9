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

    /// Runs a transaction whose change is published with origin ``StoreChange/Origin/sync``.
    ///
    /// Like ``transaction(_:)``: for a persistent store the body runs inside the storage's write,
    /// after other writers' changes were taken in, so it sees the newest values.
    package func syncTransaction<R>(_ body: (inout StoreTransaction<Value>) throws -> R) throws -> R {
        try commit(origin: .sync, body).result
    }
}
