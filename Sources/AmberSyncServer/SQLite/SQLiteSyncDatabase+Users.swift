import Foundation
import GRDB

extension SQLiteSyncDatabase {
    /// Creates a user and a first token for it.
    ///
    /// - Parameter name: A unique name, 1 to 256 bytes without control characters.
    /// - Returns: The new bearer token; only its hash is stored.
    /// - Throws: ``SyncServerError/userExists(_:)`` or ``SyncServerError/invalidUserName(_:)``.
    public func addUser(named name: String) async throws -> String {
        try SyncUserName.validate(name)
        let token = AccessToken.generate()
        let now = Date().timeIntervalSince1970
        try await pool.write { db in
            guard
                try !Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM amber_sync_users WHERE name = ?)", arguments: [name])!
            else {
                throw SyncServerError.userExists(name)
            }
            try db.execute(
                sql: "INSERT INTO amber_sync_users (name, created_at) VALUES (?, ?)", arguments: [name, now])
            try db.execute(
                sql: "INSERT INTO amber_sync_tokens (hash, user_id, created_at) VALUES (?, ?, ?)",
                arguments: [AccessToken.hash(token), db.lastInsertedRowID, now]
            )
        }
        return token
    }

    /// Creates another token for an existing user.
    ///
    /// - Parameter name: The user's name.
    /// - Returns: The new bearer token; only its hash is stored.
    /// - Throws: ``SyncServerError/unknownUser(_:)`` when there is no such user.
    public func addToken(forUserNamed name: String) async throws -> String {
        let token = AccessToken.generate()
        let now = Date().timeIntervalSince1970
        try await pool.write { db in
            guard
                let userID = try Int64.fetchOne(
                    db, sql: "SELECT id FROM amber_sync_users WHERE name = ?", arguments: [name])
            else {
                throw SyncServerError.unknownUser(name)
            }
            try db.execute(
                sql: "INSERT INTO amber_sync_tokens (hash, user_id, created_at) VALUES (?, ?, ?)",
                arguments: [AccessToken.hash(token), userID, now]
            )
        }
        return token
    }

    /// Revokes a token.
    ///
    /// - Parameter token: The bearer token.
    /// - Returns: Whether the token existed.
    public func revokeToken(_ token: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM amber_sync_tokens WHERE hash = ?", arguments: [AccessToken.hash(token)])
            return db.changesCount > 0
        }
    }

    /// The user a bearer token belongs to, read from the file on each call.
    ///
    /// - Parameter token: The bearer token a request carries.
    /// - Returns: The token's user, or `nil` for an unknown or revoked token.
    public func user(forToken token: String) async throws -> SyncUser? {
        try await pool.read { db in
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT u.id, u.name FROM amber_sync_tokens t JOIN amber_sync_users u ON u.id = t.user_id
                        WHERE t.hash = ?
                        """),
                arguments: [AccessToken.hash(token)]
            )
            return row.map { SyncUser(id: $0[0], name: $0[1]) }
        }
    }
}

extension SQLiteSyncDatabase {
    /// The user of a verified JWT's subject, created the first time the subject is seen.
    ///
    /// - Parameters:
    ///   - subject: The value of the token's user claim.
    ///   - issuer: The token's `iss`, or the empty string.
    /// - Returns: The subject's user, whose name holds the issuer and subject between tabs.
    public func user(forSubject subject: String, issuer: String) async throws -> SyncUser {
        let name = SyncUserName.subject(subject, issuer: issuer)
        let found = try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT id FROM amber_sync_users WHERE name = ?", arguments: [name])
        }
        if let found { return SyncUser(id: found, name: name) }
        let now = Date().timeIntervalSince1970
        let id = try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO amber_sync_users (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                arguments: [name, now])
            return try Int64.fetchOne(db, sql: "SELECT id FROM amber_sync_users WHERE name = ?", arguments: [name])!
        }
        return SyncUser(id: id, name: name)
    }
}
