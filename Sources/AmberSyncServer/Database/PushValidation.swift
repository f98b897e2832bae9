import AmberSyncProtocol

/// The rules a push must follow before any of it is applied, shared by the HTTP layer and backends.
public enum PushValidation {
    /// Longest client id, in bytes of UTF-8.
    public static let clientIDLength = 256

    /// Checks a push: a client id of 1 to 256 bytes without U+0000, valid collection names and
    /// ids (`SyncLimits`), no negative base version, and mutation ids that increase.
    ///
    /// - Parameters:
    ///   - mutations: The pushed mutations, in order.
    ///   - clientID: The id of the client that pushes them.
    /// - Throws: ``SyncServerError/invalidRequest(_:)`` naming the first broken rule.
    public static func validate(_ mutations: [Mutation], clientID: String) throws {
        guard !clientID.isEmpty, clientID.utf8.count <= clientIDLength, !clientID.utf8.contains(0) else {
            throw SyncServerError.invalidRequest(
                "The field `clientID` must be 1 to \(clientIDLength) bytes long, without U+0000."
            )
        }
        var previousID: Int64?
        for (index, mutation) in mutations.enumerated() {
            guard SyncLimits.isValidCollection(mutation.collection) else {
                throw SyncServerError.invalidRequest(
                    "The field `mutations[\(index)].collection` must match [A-Za-z0-9_.-]{1,\(SyncLimits.collectionNameLength)}."
                )
            }
            guard SyncLimits.isValidID(mutation.id) else {
                throw SyncServerError.invalidRequest(
                    "The field `mutations[\(index)].id` must be 1 to \(SyncLimits.idLength) bytes of UTF-8, without U+0000."
                )
            }
            if let baseVersion = mutation.baseVersion, baseVersion < 0 {
                throw SyncServerError.invalidRequest(
                    "The field `mutations[\(index)].baseVersion` must not be negative.")
            }
            if let previousID, mutation.mutationID <= previousID {
                throw SyncServerError.invalidRequest(
                    "The field `mutations[\(index)].mutationID` must be greater than the one before it (\(previousID))."
                )
            }
            previousID = mutation.mutationID
        }
    }

    /// Whether each mutation names a record after the one before it, by collection then id, in
    /// the order of their UTF-8 bytes (SQLite's and PostgreSQL's `"C"` order): then no record is
    /// named twice. A client plans its batches in that order.
    package static func namesIncrease(_ mutations: [Mutation]) -> Bool {
        for index in mutations.indices.dropFirst() {
            let (previous, mutation) = (mutations[index - 1], mutations[index])
            if mutation.collection.hasSameUTF8(as: previous.collection) {
                guard previous.id.precedesInUTF8(mutation.id) else { return false }
            } else if !previous.collection.precedesInUTF8(mutation.collection) {
                return false
            }
        }
        return true
    }

    /// Whether `mutation` creates a record (no base version, a whole value): a backend may decide
    /// it as for a record never stored without reading one, and write it as new unless a record
    /// is stored under its name (a live one or a deletion's), which it is then decided against.
    package static func creates(_ mutation: Mutation) -> Bool {
        mutation.baseVersion == nil && mutation.record != nil && mutation.fields == nil
    }
}
