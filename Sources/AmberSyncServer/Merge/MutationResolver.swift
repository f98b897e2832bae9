import AmberSyncProtocol

/// The rule that decides what a pushed mutation does to a record: a pure function, shared by
/// every database backend so they all merge alike.
///
/// A mutation applies when its `baseVersion` is the record's current version (`nil` matching a
/// record the server does not have or has deleted). A mutation with `fields` also applies on an
/// older `baseVersion` when none of those fields changed on the server since then; it writes only
/// those keys (taken from its value, or removed when the value lacks them) and keeps the server's
/// other keys. Anything else is a conflict and changes nothing.
///
/// ```swift
/// let outcome = MutationResolver.resolve(mutation, against: storedRecord, newVersion: counter + 1)
/// switch outcome {
/// case .applied(let record, let result): // store `record`, answer `result`
/// case .conflict(let result):            // answer `result`
/// }
/// ```
public enum MutationResolver {
    /// What a mutation does to a record.
    public enum Outcome: Sendable, Equatable {
        /// The mutation applies: store `record` (with the new version), answer `result`.
        case applied(ServerRecord, MutationResult)
        /// The mutation conflicts: change nothing, answer `result`.
        case conflict(MutationResult)

        /// The answer to send back for the mutation.
        public var result: MutationResult {
            switch self {
            case .applied(_, let result), .conflict(let result): result
            }
        }
    }

    /// Decides what `mutation` does to `current`.
    ///
    /// - Parameters:
    ///   - mutation: A validated mutation.
    ///   - current: The record as stored (a tombstone when deleted), or `nil` when the server never had it.
    ///   - newVersion: The version the record gets if the mutation applies: one more than the
    ///     user's last version.
    /// - Returns: The record to store and the result to answer, or the conflict to answer.
    /// - Complexity: O(*k*), where *k* is the number of top-level keys of the record and the mutation.
    public static func resolve(_ mutation: Mutation, against current: ServerRecord?, newVersion: Int64) -> Outcome {
        let live = current.flatMap { $0.isLive ? $0 : nil }
        let matchesBase: Bool
        if let baseVersion = mutation.baseVersion {
            matchesBase = current?.version == baseVersion
        } else {
            matchesBase = live == nil
        }
        if matchesBase {
            return apply(mutation, to: live, newVersion: newVersion)
        }
        // A field-wise edit of a record that lived on since the base version merges when none of its fields moved.
        if let fields = mutation.fields, mutation.record != nil, let live, let baseVersion = mutation.baseVersion,
            baseVersion < live.version, baseVersion >= live.createdVersion
        {
            let changed = unique(fields.filter { live.version(ofField: $0) > baseVersion })
            if changed.isEmpty {
                return apply(mutation, to: live, newVersion: newVersion)
            }
            return conflict(mutation, current: current, changedFields: changed)
        }
        return conflict(mutation, current: current, changedFields: mutation.fields.map(unique))
    }

    private static func apply(_ mutation: Mutation, to live: ServerRecord?, newVersion: Int64) -> Outcome {
        let applied = MutationResult(mutationID: mutation.mutationID, status: .applied, version: newVersion)
        guard let sentRecord = mutation.record else {
            // A deletion removes the record whole, `fields` or not.
            let tombstone = ServerRecord(
                record: nil, version: newVersion, createdVersion: newVersion, fieldVersions: [:])
            return .applied(tombstone, applied)
        }
        guard let live else {
            // With nothing on the server to keep, the record is stored as sent, `fields` or not,
            // its text not read; its keys changed at its creation (`fieldVersions` leaves them out).
            let created = ServerRecord(
                record: sentRecord, version: newVersion, createdVersion: newVersion, fieldVersions: [:])
            return .applied(created, applied)
        }
        let sent = sentRecord.object
        var record = live
        let oldValue = live.value ?? [:]
        var stored = oldValue
        if let fields = mutation.fields {
            for key in fields {
                // The key as sent: removed first, in case the stored one is written in another
                // Unicode normalization (a Swift dictionary would keep the stored bytes).
                stored.removeValue(forKey: key)
                if let index = sent.index(forKey: key) {
                    stored[sent[index].key] = sent[index].value
                }
            }
        } else {
            stored = sent
        }
        for key in Set(oldValue.keys).union(stored.keys) where oldValue[key] != stored[key] {
            record.fieldVersions[key] = newVersion
        }
        record.version = newVersion
        if JSONValue.exactlyEqual(stored, sent) {
            // Stored as sent: the sent text, and no value in the answer.
            record.record = sentRecord
            return .applied(record, applied)
        }
        record.value = stored
        return .applied(
            record,
            MutationResult(mutationID: mutation.mutationID, status: .applied, version: newVersion, value: stored))
    }

    private static func conflict(_ mutation: Mutation, current: ServerRecord?, changedFields: [String]?) -> Outcome {
        .conflict(
            MutationResult(
                mutationID: mutation.mutationID,
                status: .conflict,
                version: current?.version ?? 0,
                value: current?.value,
                fields: changedFields
            )
        )
    }

    private static func unique(_ fields: [String]) -> [String] {
        var seen = Set<String>()
        return fields.filter { seen.insert($0).inserted }
    }
}
