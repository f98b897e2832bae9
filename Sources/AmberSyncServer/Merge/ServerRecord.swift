import AmberSyncProtocol

/// A record as the server keeps it: its value, its version, and when each top-level key last changed.
///
/// A deleted record stays as a tombstone (``value`` `nil`) with the version of its deletion, so a
/// pull can report the deletion.
public struct ServerRecord: Sendable, Equatable {
    /// The record's JSON object, or `nil` when it was deleted.
    ///
    /// A record made from its text (``init(record:version:createdVersion:fieldVersions:)``) reads
    /// the object from ``record`` on each access; ``isLive`` reads nothing.
    public var value: JSONObject? {
        get { record?.object }
        set { record = newValue.map(JSONRecord.init) }
    }
    /// The record's JSON object as its text, or `nil` when it was deleted: what a backend stores.
    public var record: JSONRecord?
    /// The version of the record's last change (its creation, update or deletion).
    public var version: Int64
    /// The version at which the record's current life began: its creation, or its re-creation
    /// after a deletion. Keys missing from ``fieldVersions`` last changed then.
    public var createdVersion: Int64
    /// For each top-level key, the version of its last change, removed keys included.
    public var fieldVersions: [String: Int64]

    /// Creates a record as a backend read it.
    ///
    /// - Parameters:
    ///   - value: The JSON object, or `nil` for a deleted record.
    ///   - version: The version of the last change.
    ///   - createdVersion: The version at which the record was (re-)created.
    ///   - fieldVersions: The version of each top-level key's last change.
    public init(value: JSONObject?, version: Int64, createdVersion: Int64, fieldVersions: [String: Int64]) {
        self.init(
            record: value.map(JSONRecord.init), version: version, createdVersion: createdVersion,
            fieldVersions: fieldVersions)
    }

    /// Creates a record from its object's text, read only when a merge needs its fields: a
    /// record created by a push is stored as it was sent.
    ///
    /// - Parameters:
    ///   - record: The JSON object as its text, or `nil` for a deleted record.
    ///   - version: The version of the last change.
    ///   - createdVersion: The version at which the record was (re-)created.
    ///   - fieldVersions: The version of each top-level key's last change; keys left out last
    ///     changed at `createdVersion`.
    public init(record: JSONRecord?, version: Int64, createdVersion: Int64, fieldVersions: [String: Int64]) {
        self.record = record
        self.version = version
        self.createdVersion = createdVersion
        self.fieldVersions = fieldVersions
    }

    /// Whether the record exists (was not deleted).
    public var isLive: Bool { record != nil }

    /// The version at which `key` last changed: set, changed or removed.
    ///
    /// - Parameter key: A top-level key of the record.
    /// - Returns: The key's own version, or ``createdVersion`` when it never changed since.
    public func version(ofField key: String) -> Int64 {
        fieldVersions[key] ?? createdVersion
    }
}
