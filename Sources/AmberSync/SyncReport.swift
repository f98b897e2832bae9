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
    /// How far the sync under way has got: after each page pulled and each batch pushed.
    case progress(SyncProgress)
}

/// How far a sync has got, for a progress bar: records and bytes done, of a total when known.
///
/// A sync pushes, then pulls; each part counts from zero.
public struct SyncProgress: Sendable, Equatable {
    /// What a sync is doing.
    public enum Phase: Sendable, Equatable {
        /// Sending local changes.
        case pushing
        /// Bringing in the server's changes.
        case pulling
        /// Uploading the attachments a push names, before the push; counted in attachments.
        case uploadingAttachments
        /// Fetching the attachments pulled records name; counted in attachments.
        case downloadingAttachments
    }

    /// What the sync is doing.
    public var phase: Phase
    /// Records pushed (and answered) or pulled (received and checked) so far in this phase.
    /// Pulled records are applied to the stores in batches, the last when the pull ends.
    public var completed: Int
    /// Records this phase has in all, when known: the pending records for a push, the server's
    /// count for a pull from the beginning (a first sync, or one after a reset). `nil` for a pull
    /// of recent changes, which is short.
    public var total: Int?
    /// Bytes of record JSON pushed or pulled so far in this phase, or of attachments moved.
    public var bytes: Int

    /// Creates a progress report.
    public init(phase: Phase, completed: Int, total: Int?, bytes: Int) {
        self.phase = phase
        self.completed = completed
        self.total = total
        self.bytes = bytes
    }

    /// `completed` over `total`, from 0 to 1, when the total is known.
    public var fraction: Double? {
        guard let total, total > 0 else { return nil }
        return min(1, Double(completed) / Double(total))
    }
}
