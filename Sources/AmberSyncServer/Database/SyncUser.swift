/// A user of the sync server: the owner of one namespace of records.
///
/// Every record, version and pushed mutation belongs to exactly one user; no request made with
/// one user's token can read, change or learn about another user's records.
public struct SyncUser: Sendable, Hashable {
    /// The user's number in the database; stable for the user's lifetime.
    public let id: Int64
    /// The name given to `amber-sync user add`, unique on a server.
    public let name: String

    /// Creates a user value; backends make these, callers get them from ``SyncDatabase/user(forToken:)``.
    ///
    /// - Parameters:
    ///   - id: The user's number in the database.
    ///   - name: The user's unique name.
    public init(id: Int64, name: String) {
        self.id = id
        self.name = name
    }
}
