import GRDB

extension SQLiteSyncDatabase {
    /// The schema version this build writes and reads.
    static let schemaVersion = 4

    /// Each schema version's migration; index 0 brings an empty file to version 1.
    private static let migrations: [@Sendable (Database) throws -> Void] = [
        { db in
            try db.execute(
                sql: """
                    CREATE TABLE amber_sync_schema (version INTEGER NOT NULL);
                    INSERT INTO amber_sync_schema (version) VALUES (0);

                    -- `version` is the last version given to the user's records: updated in each push's
                    -- transaction, so versions commit in order. `pruned_version` is the highest version
                    -- of a deletion that prune forgot.
                    CREATE TABLE users (
                        id INTEGER PRIMARY KEY,
                        name TEXT NOT NULL UNIQUE,
                        version INTEGER NOT NULL DEFAULT 0,
                        pruned_version INTEGER NOT NULL DEFAULT 0,
                        created_at REAL NOT NULL
                    );

                    -- Tokens are kept only as SHA-256 hashes, in lowercase hex.
                    CREATE TABLE tokens (
                        hash TEXT PRIMARY KEY,
                        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        created_at REAL NOT NULL
                    ) WITHOUT ROWID;
                    CREATE INDEX tokens_by_user ON tokens(user_id);

                    -- One row per record; a deleted record keeps its row with a NULL value.
                    -- `field_versions` maps each top-level key to the version of its last change.
                    CREATE TABLE records (
                        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        collection TEXT NOT NULL,
                        id TEXT NOT NULL,
                        version INTEGER NOT NULL,
                        created_version INTEGER NOT NULL,
                        value TEXT,
                        field_versions TEXT NOT NULL,
                        changed_at REAL NOT NULL,
                        PRIMARY KEY (user_id, collection, id)
                    ) WITHOUT ROWID;
                    CREATE UNIQUE INDEX records_by_version ON records(user_id, version);

                    -- The answer given to each mutation, so a re-sent one is answered the same way.
                    CREATE TABLE mutation_results (
                        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        client_id TEXT NOT NULL,
                        mutation_id INTEGER NOT NULL,
                        result TEXT NOT NULL,
                        PRIMARY KEY (user_id, client_id, mutation_id)
                    ) WITHOUT ROWID;
                    """
            )
        },
        { db in
            try db.execute(
                sql: """
                    -- The database's identity, sent with every answer: a client that sees it change
                    -- knows the database was replaced.
                    CREATE TABLE amber_sync_database (id TEXT NOT NULL);
                    INSERT INTO amber_sync_database (id) VALUES (lower(hex(randomblob(16))));

                    -- What each answered mutation was, so that a different mutation under the same
                    -- (client id, mutation id) is refused instead of answered as a retry.
                    ALTER TABLE mutation_results ADD COLUMN fingerprint TEXT;

                    -- One row per push that changed records: its last version and a random tag. A
                    -- cursor's tag is that of the first row at or after it; a client sends it back
                    -- with its cursor, so a history replaced by a restored backup is told apart.
                    CREATE TABLE history (
                        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        version INTEGER NOT NULL,
                        tag TEXT NOT NULL,
                        PRIMARY KEY (user_id, version)
                    ) WITHOUT ROWID;
                    INSERT INTO history (user_id, version, tag)
                        SELECT id, version, lower(hex(randomblob(8))) FROM users WHERE version > 0;
                    """
            )
        },
        { db in
            // The names the PostgreSQL backend gives the same tables. Renaming a table updates the
            // foreign keys that name it; an index cannot be renamed, only made again.
            try db.execute(
                sql: """
                    ALTER TABLE users RENAME TO amber_sync_users;
                    ALTER TABLE tokens RENAME TO amber_sync_tokens;
                    ALTER TABLE records RENAME TO amber_sync_records;
                    ALTER TABLE mutation_results RENAME TO amber_sync_mutation_results;
                    ALTER TABLE history RENAME TO amber_sync_history;
                    DROP INDEX tokens_by_user;
                    CREATE INDEX amber_sync_tokens_by_user ON amber_sync_tokens(user_id);
                    DROP INDEX records_by_version;
                    CREATE UNIQUE INDEX amber_sync_records_by_version ON amber_sync_records(user_id, version);
                    """
            )
        },
        { db in
            // The answers of a push in one row (`PushAnswers`) instead of a row per mutation.
            // Each answer kept before becomes a row of its own.
            try db.execute(
                sql: """
                    CREATE TABLE amber_sync_push_answers (
                        user_id INTEGER NOT NULL REFERENCES amber_sync_users(id) ON DELETE CASCADE,
                        client_id TEXT NOT NULL,
                        last_mutation_id INTEGER NOT NULL,
                        first_mutation_id INTEGER NOT NULL,
                        results TEXT NOT NULL,
                        fingerprints TEXT NOT NULL,
                        PRIMARY KEY (user_id, client_id, last_mutation_id)
                    ) WITHOUT ROWID;
                    INSERT INTO amber_sync_push_answers
                        SELECT user_id, client_id, mutation_id, mutation_id, '[' || result || ']',
                            CASE WHEN fingerprint IS NULL THEN '[null]' ELSE '["' || fingerprint || '"]' END
                        FROM amber_sync_mutation_results;
                    DROP TABLE amber_sync_mutation_results;
                    """
            )
        },
    ]

    /// Runs the migrations the file lacks, inside the caller's transaction.
    static func migrate(_ db: Database, path: String) throws {
        let found = try schemaVersion(db, path: path) ?? 0
        guard found < migrations.count else { return }
        for migration in migrations[found...] {
            try migration(db)
        }
        try db.execute(sql: "UPDATE amber_sync_schema SET version = ?", arguments: [migrations.count])
    }

    /// The file's schema version, or `nil` for an empty file.
    ///
    /// - Throws: ``SyncServerError/schemaTooNew(path:found:supported:)`` for a version above
    ///   ``schemaVersion``; ``SyncServerError/notASyncDatabase(path:reason:)`` for a file with
    ///   other tables and no schema table.
    static func schemaVersion(_ db: Database, path: String) throws -> Int? {
        if try db.tableExists("amber_sync_schema") {
            let found = try Int.fetchOne(db, sql: "SELECT version FROM amber_sync_schema") ?? 0
            guard found <= schemaVersion else {
                throw SyncServerError.schemaTooNew(path: path, found: found, supported: schemaVersion)
            }
            return found
        }
        let tableCount =
            try Int.fetchOne(
                db,
                sql: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            ) ?? 0
        guard tableCount == 0 else {
            throw SyncServerError.notASyncDatabase(path: path, reason: "it has tables but no amber_sync_schema table")
        }
        return nil
    }
}
