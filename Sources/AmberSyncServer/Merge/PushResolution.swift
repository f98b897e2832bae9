import AmberSyncProtocol

/// The push rules in the order a push follows them, shared by every backend: a backend reads
/// and stores, this decides.
///
/// For each mutation of a validated batch (``PushValidation``), in order: a mutation answered
/// before is a retry when its fingerprint matches (answer as before) and another device's
/// mutation under the same client id when not; a new one must be newer than every mutation the
/// client sent (``MutationFingerprint``); then ``MutationResolver`` decides, and an applied
/// mutation takes the user's next version.
///
/// ```swift
/// var resolution = PushResolution(clientID: clientID, version: userVersion, lastMutationID: last)
/// for (mutation, fingerprint) in zip(mutations, fingerprints) {
///     let step = try resolution.resolve(mutation, fingerprint: fingerprint, answered: stored[mutation.mutationID]) {
///         try read(mutation)   // the record as stored, read only for a new mutation
///     }
///     switch step {
///     case .answeredBefore(let result): results.append(result)
///     case .decided(let outcome): store(outcome); results.append(outcome.result)
///     }
/// }
/// // resolution.version: the user's version to store
/// ```
package struct PushResolution: Sendable {
    /// The client the batch comes from.
    package let clientID: String
    /// The user's last version: the one before the batch, then that of each mutation applied.
    package private(set) var version: Int64
    /// The highest mutation id answered to this client before the batch.
    package let lastMutationID: Int64?

    package init(clientID: String, version: Int64, lastMutationID: Int64?) {
        self.clientID = clientID
        self.version = version
        self.lastMutationID = lastMutationID
    }

    /// What to do with one mutation.
    package enum Step: Sendable, Equatable {
        /// A retry of a mutation answered before: answer the same, store nothing.
        case answeredBefore(MutationResult)
        /// A new mutation: store the record when applied, keep and send the result.
        case decided(MutationResolver.Outcome)
    }

    /// Decides what `mutation` does.
    ///
    /// - Parameters:
    ///   - mutation: The next mutation of the batch.
    ///   - fingerprint: Its ``MutationFingerprint/of(_:)``.
    ///   - answered: The answer kept for its id and the fingerprint kept with it, if any.
    ///   - current: Reads the record as stored (a tombstone when deleted; `nil` when never
    ///     stored); called only for a new mutation.
    /// - Throws: ``SyncServerError/clientIDReused(clientID:mutationID:)`` when the mutation is not
    ///   the one answered under its id, or not newer than those the client sent; what `current` throws.
    package mutating func resolve(
        _ mutation: Mutation, fingerprint: String, answered: (result: MutationResult, fingerprint: String?)?,
        current: () throws -> ServerRecord?
    ) throws -> Step {
        if let answered {
            try MutationFingerprint.check(answered.fingerprint, against: fingerprint, of: mutation, clientID: clientID)
            return .answeredBefore(answered.result)
        }
        try MutationFingerprint.checkNew(mutation, after: lastMutationID, clientID: clientID)
        let outcome = MutationResolver.resolve(mutation, against: try current(), newVersion: version + 1)
        if case .applied(let record, _) = outcome { version = record.version }
        return .decided(outcome)
    }
}
