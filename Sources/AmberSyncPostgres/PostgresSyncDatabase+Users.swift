import AmberLock
import AmberSyncServer
import PostgresNIO

extension PostgresSyncDatabase {
    /// Creates a user and a first token for it.
    ///
    /// - Parameter name: A unique name, 1 to 256 bytes without control characters.
    /// - Returns: The new bearer token; only its hash is stored.
    /// - Throws: `SyncServerError.userExists(_:)` or `SyncServerError.invalidUserName(_:)`.
    public func addUser(named name: String) async throws -> String {
        try SyncUserName.validate(name)
        let token = AccessToken.generate()
        let hash = AccessToken.hash(token)
        let logger = self.logger
        try await transaction { connection in
            let rows = try await connection.query(
                "INSERT INTO amber_sync_users (name) VALUES (\(name)) ON CONFLICT (name) DO NOTHING RETURNING id",
                logger: logger
            ).collect()
            guard let userID = try rows.first?.decode(Int64.self) else { throw SyncServerError.userExists(name) }
            try await connection.query(
                "INSERT INTO amber_sync_tokens (hash, user_id) VALUES (\(hash), \(userID))", logger: logger
            )
        }
        return token
    }

    /// Creates another token for an existing user.
    ///
    /// - Parameter name: The user's name.
    /// - Returns: The new bearer token; only its hash is stored.
    /// - Throws: `SyncServerError.unknownUser(_:)` when there is no such user.
    public func addToken(forUserNamed name: String) async throws -> String {
        let token = AccessToken.generate()
        let hash = AccessToken.hash(token)
        let rows = try await collect(
            """
            INSERT INTO amber_sync_tokens (hash, user_id)
            SELECT \(hash), id FROM amber_sync_users WHERE name = \(name)
            RETURNING user_id
            """
        )
        guard !rows.isEmpty else { throw SyncServerError.unknownUser(name) }
        return token
    }

    /// Revokes a token.
    ///
    /// - Parameter token: The bearer token.
    /// - Returns: Whether the token existed.
    public func revokeToken(_ token: String) async throws -> Bool {
        let hash = AccessToken.hash(token)
        knownTokens.forget(hash)
        return try await !collect("DELETE FROM amber_sync_tokens WHERE hash = \(hash) RETURNING user_id").isEmpty
    }

    /// The user a bearer token belongs to, read from the database on each call.
    ///
    /// The answer is remembered for ``rememberedUser(forToken:)``.
    ///
    /// - Parameter token: The bearer token a request carries.
    /// - Returns: The token's user, or `nil` for an unknown or revoked token.
    public func user(forToken token: String) async throws -> SyncUser? {
        let hash = AccessToken.hash(token)
        let rows = try await collect(
            """
            SELECT amber_sync_users.id, amber_sync_users.name
            FROM amber_sync_tokens JOIN amber_sync_users ON amber_sync_users.id = amber_sync_tokens.user_id
            WHERE amber_sync_tokens.hash = \(hash)
            """
        )
        let user = try rows.first.map { row in
            let (id, name) = try row.decode((Int64, String).self)
            return SyncUser(id: id, name: name)
        }
        if let user { knownTokens.remember(hash, as: user) } else { knownTokens.forget(hash) }
        return user
    }

    /// The user a bearer token belonged to when this process last looked it up (with
    /// ``user(forToken:)``), without reading the database; `nil` when it does not know the token.
    ///
    /// A push of such a token checks it in the push's own transaction
    /// (``push(_:clientID:for:checkingToken:)``): the look-up costs no query of its own.
    ///
    /// - Parameter token: The bearer token a request carries.
    /// - Returns: The user, or `nil`.
    public func rememberedUser(forToken token: String) -> SyncUser? {
        knownTokens.user(for: AccessToken.hash(token))
    }

    /// Runs one statement outside a transaction and returns its rows.
    func collect(_ query: PostgresQuery) async throws -> [PostgresRow] {
        let logger = self.logger
        return try await withConnection { connection in
            try await connection.query(query, logger: logger).collect()
        }
    }
}

extension PostgresSyncDatabase {
    /// The user of a verified JWT's subject, created the first time the subject is seen.
    ///
    /// - Parameters:
    ///   - subject: The value of the token's user claim.
    ///   - issuer: The token's `iss`, or the empty string.
    /// - Returns: The subject's user, whose name holds the issuer and subject between tabs.
    public func user(forSubject subject: String, issuer: String) async throws -> SyncUser {
        let name = SyncUserName.subject(subject, issuer: issuer)
        // Read first: the common case writes nothing. Two servers creating the user at once both
        // end with the one row; each statement sees the rows committed before it began.
        for statement: PostgresQuery in [
            "SELECT id FROM amber_sync_users WHERE name = \(name)",
            "INSERT INTO amber_sync_users (name) VALUES (\(name)) ON CONFLICT (name) DO NOTHING RETURNING id",
            "SELECT id FROM amber_sync_users WHERE name = \(name)",
        ] {
            if let id = try await collect(statement).first?.decode(Int64.self) {
                return SyncUser(id: id, name: name)
            }
        }
        throw SyncServerError.databaseUnavailable(location: location, reason: "the user of a JWT subject vanished")
    }
}

/// The users of the token hashes this process looked up, so that a push need not look its token
/// up before it is applied; the push checks it in its own transaction.
final class KnownTokens: Sendable {
    /// The most hashes kept; all are forgotten when there would be more.
    static let capacity = 10_000

    private let users = LockedValue([String: SyncUser]())

    /// The user `hash` belonged to when last looked up.
    func user(for hash: String) -> SyncUser? {
        users.withLock { $0[hash] }
    }

    func remember(_ hash: String, as user: SyncUser) {
        users.withLock { users in
            if users.count >= Self.capacity, users[hash] == nil { users.removeAll(keepingCapacity: true) }
            users[hash] = user
        }
    }

    func forget(_ hash: String) {
        _ = users.withLock { $0.removeValue(forKey: hash) }
    }
}
