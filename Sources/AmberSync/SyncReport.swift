/// What one ``SyncClient/sync()`` did.
public struct SyncReport: Sendable, Equatable {
    /// Local changes the server accepted.
    public let pushed: Int
    /// Changes from the server applied to the stores (other devices' writes, or the server's
    /// version of a record after a conflict).
    public let pulled: Int
    /// Records edited both here and elsewhere, merged field by field; each lists the fields
    /// changed on both sides, where the local edit was kept.
    public let merged: [SyncConflict]

    /// Creates a report.
    public init(pushed: Int, pulled: Int, merged: [SyncConflict]) {
        self.pushed = pushed
        self.pulled = pulled
        self.merged = merged
    }
}

/// A record changed both locally and on the server since they last agreed, which sync merged.
public struct SyncConflict: Sendable, Equatable, Hashable {
    /// The store's key.
    public let collection: String
    /// The record's id, as the store writes it.
    public let id: String
    /// The fields both sides changed, to different values; the local value was kept (or the
    /// custom `resolve` decided).
    public let fields: [String]

    /// Creates a conflict.
    public init(collection: String, id: String, fields: [String]) {
        self.collection = collection
        self.id = id
        self.fields = fields
    }
}

/// What a ``SyncClient`` is doing, for a UI's status line.
public enum SyncEvent: Sendable, Equatable {
    /// A sync started.
    case syncing
    /// A sync finished.
    case synced(SyncReport)
    /// The server could not be reached; local changes stay pending and live sync retries.
    case offline(reason: String)
    /// The server refused the sync (a revoked token, say) or answered with an error; live sync
    /// retries later.
    case failed(reason: String)
}
