import AmberSyncProtocol

/// The three-way decision sync makes for one record when the server's state of it arrives.
///
/// A pure function of JSON objects as the local model writes them, so that every case (edit
/// against deletion, deletion on both sides, a record new on both sides, a server gone back to
/// an older state) is one line of a table in the tests. Records the model cannot decode never
/// get here: they are left alone.
enum RecordMerge {
    /// What becomes of the local record.
    enum Decision: Equatable {
        /// The server's state (a value or a deletion) replaces the local one; nothing is left to push.
        case takeTheirs
        /// The local value (or absence) stays, to be pushed: edited here and deleted there, or
        /// the server went back to a state older than the one this client agreed on.
        case keepMine
        /// Deleted here and unchanged there: the deletion stands, to be pushed.
        case keepDeletion
        /// Changed on both sides: the model's merge decides, and its result is pushed when it
        /// differs from the server's.
        case merge
    }

    /// Decides for one record.
    ///
    /// - Parameters:
    ///   - agreed: The record both sides last agreed on (the base, or what this client sent);
    ///     `nil` when there is none or it was deleted.
    ///   - mine: The local record; `nil` when deleted or never here.
    ///   - theirs: The server's record as this model writes it (fields it does not know
    ///     dropped); `nil` when deleted. Evaluated only when the decision needs it.
    ///   - serverWentBack: Whether the server's version is older than the one this client
    ///     agreed on (its database was restored from a backup).
    static func decide(
        agreed: JSONObject?, mine: JSONObject?, theirs: () -> JSONObject?, serverWentBack: Bool
    ) -> Decision {
        if serverWentBack { return .keepMine }
        // Unchanged here: whatever the server has.
        guard mine != agreed else { return .takeTheirs }
        // Deleted here: it stands unless the server changed the record since, in which case
        // that edit wins (and a deletion on both sides is no conflict).
        guard mine != nil else { return theirs() == agreed ? .keepDeletion : .takeTheirs }
        // Edited here: the edit wins over a deletion there.
        return theirs() == nil ? .keepMine : .merge
    }
}
