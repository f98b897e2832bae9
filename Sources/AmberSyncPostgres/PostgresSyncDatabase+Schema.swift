import AmberSyncServer
import Foundation
import PostgresNIO

extension PostgresSyncDatabase {
    /// The schema version this build writes and reads.
    package static let schemaVersion = 9

    /// Each schema version's migration; index 0 brings an empty database to version 1.
    private static let migrations: [String] = [
        """
        CREATE TABLE amber_sync_schema (version integer NOT NULL);
        INSERT INTO amber_sync_schema (version) VALUES (0);

        -- `version` is the last version given to the user's records. A push locks the row
        -- (SELECT ... FOR UPDATE) until it commits, so a user's versions commit in order.
        -- `pruned_version` is the highest version of a deletion that prune forgot.
        CREATE TABLE amber_sync_users (
            id bigserial PRIMARY KEY,
            name text NOT NULL UNIQUE,
            version bigint NOT NULL DEFAULT 0,
            pruned_version bigint NOT NULL DEFAULT 0,
            created_at timestamptz NOT NULL DEFAULT now()
        );

        -- Tokens are kept only as SHA-256 hashes, in lowercase hex.
        CREATE TABLE amber_sync_tokens (
            hash text PRIMARY KEY,
            user_id bigint NOT NULL REFERENCES amber_sync_users(id) ON DELETE CASCADE,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX amber_sync_tokens_by_user ON amber_sync_tokens(user_id);

        -- One row per record; a deleted record keeps its row with a NULL value. Values are
        -- JSON text with sorted keys, kept as sent. `field_versions` maps each top-level key to
        -- the version of its last change.
        CREATE TABLE amber_sync_records (
            user_id bigint NOT NULL REFERENCES amber_sync_users(id) ON DELETE CASCADE,
            collection text NOT NULL,
            id text NOT NULL,
            version bigint NOT NULL,
            created_version bigint NOT NULL,
            value text,
            field_versions text NOT NULL,
            changed_at timestamptz NOT NULL,
            PRIMARY KEY (user_id, collection, id)
        );
        CREATE UNIQUE INDEX amber_sync_records_by_version ON amber_sync_records(user_id, version);
        CREATE INDEX amber_sync_records_deleted ON amber_sync_records(changed_at) WHERE value IS NULL;

        -- The answer given to each mutation, so a re-sent one is answered the same way.
        CREATE TABLE amber_sync_mutation_results (
            user_id bigint NOT NULL REFERENCES amber_sync_users(id) ON DELETE CASCADE,
            client_id text NOT NULL,
            mutation_id bigint NOT NULL,
            result text NOT NULL,
            PRIMARY KEY (user_id, client_id, mutation_id)
        );
        """,
        """
        -- The database's identity, sent with every answer: a client that sees it change knows
        -- the database was replaced.
        CREATE TABLE amber_sync_database (id text NOT NULL);
        INSERT INTO amber_sync_database (id) VALUES (replace(gen_random_uuid()::text, '-', ''));

        -- What each answered mutation was, so that a different mutation under the same
        -- (client id, mutation id) is refused instead of answered as a retry.
        ALTER TABLE amber_sync_mutation_results ADD COLUMN fingerprint text;

        -- One row per push that changed records: its last version and a random tag. A cursor's
        -- tag is that of the first row at or after it; a client sends it back with its cursor, so
        -- a history replaced by a restored backup is told apart.
        CREATE TABLE amber_sync_history (
            user_id bigint NOT NULL REFERENCES amber_sync_users(id) ON DELETE CASCADE,
            version bigint NOT NULL,
            tag text NOT NULL,
            PRIMARY KEY (user_id, version)
        );
        INSERT INTO amber_sync_history (user_id, version, tag)
            SELECT id, version, substr(md5(random()::text), 1, 16) FROM amber_sync_users WHERE version > 0;
        """,
        """
        -- Each user's attachments by SHA-256. A row is written only once all the bytes are in
        -- amber_sync_attachment_chunks under its upload id: an attachment is present or absent,
        -- never partial. `referenced_at` is when it was last uploaded, asked for, or found named by
        -- a live record in a prune.
        CREATE TABLE amber_sync_attachments (
            user_id bigint NOT NULL REFERENCES amber_sync_users(id) ON DELETE CASCADE,
            sha256 text NOT NULL,
            size bigint NOT NULL,
            upload_id text NOT NULL,
            referenced_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (user_id, sha256)
        );

        -- Uploads under way; one left behind by a cut connection or a killed server is removed by
        -- prune with its chunks.
        CREATE TABLE amber_sync_attachment_uploads (
            id text PRIMARY KEY,
            user_id bigint NOT NULL REFERENCES amber_sync_users(id) ON DELETE CASCADE,
            started_at timestamptz NOT NULL DEFAULT now()
        );

        -- The bytes, in chunks of 1 MiB numbered from 0.
        CREATE TABLE amber_sync_attachment_chunks (
            upload_id text NOT NULL,
            chunk integer NOT NULL,
            data bytea NOT NULL,
            PRIMARY KEY (upload_id, chunk)
        );
        """,
        """
        -- Uploads resume: each user has at most one upload of a hash, kept across requests until
        -- it is finished. `size` counts the bytes of its chunks (whole chunks only), where the next
        -- request resumes; `writer` names the request writing it, so a request that another one
        -- took over stops at its next chunk. Prune removes uploads not written since `written_at`.
        ALTER TABLE amber_sync_attachment_uploads ADD COLUMN sha256 text;
        ALTER TABLE amber_sync_attachment_uploads ADD COLUMN size bigint NOT NULL DEFAULT 0;
        ALTER TABLE amber_sync_attachment_uploads ADD COLUMN writer text;
        ALTER TABLE amber_sync_attachment_uploads ADD COLUMN written_at timestamptz NOT NULL DEFAULT now();
        CREATE UNIQUE INDEX amber_sync_attachment_uploads_by_hash ON amber_sync_attachment_uploads(user_id, sha256);
        """,
        """
        -- A user's records and answers go with the user through a trigger, not foreign keys: a
        -- foreign key checks the user's row for every row a push inserts (a third of the
        -- database's time in a first push of 100,000 records), and a push holds that row locked
        -- (FOR UPDATE) while it inserts, so no row can name a user that does not exist. A user
        -- deleted by hand waits for such a push to commit, then takes its rows along.
        ALTER TABLE amber_sync_records DROP CONSTRAINT IF EXISTS amber_sync_records_user_id_fkey;
        ALTER TABLE amber_sync_mutation_results DROP CONSTRAINT IF EXISTS amber_sync_mutation_results_user_id_fkey;
        -- (No line of the function's body ends with `;`: a migration is split there.)
        CREATE OR REPLACE FUNCTION amber_sync_forget_user() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
            DELETE FROM amber_sync_records WHERE user_id = OLD.id; DELETE FROM amber_sync_mutation_results
            WHERE user_id = OLD.id; RETURN OLD; END $$;
        CREATE OR REPLACE TRIGGER amber_sync_forget_user AFTER DELETE ON amber_sync_users
            FOR EACH ROW EXECUTE FUNCTION amber_sync_forget_user();
        """,
        """
        -- The answers of a push in one row (`PushAnswers`: its results and its mutations'
        -- fingerprints, as JSON arrays) instead of a row per mutation. Each answer kept before
        -- becomes a row of its own. They go with their user through the trigger.
        CREATE TABLE amber_sync_push_answers (
            user_id bigint NOT NULL,
            client_id text NOT NULL,
            last_mutation_id bigint NOT NULL,
            first_mutation_id bigint NOT NULL,
            results text NOT NULL,
            fingerprints text NOT NULL,
            PRIMARY KEY (user_id, client_id, last_mutation_id)
        );
        INSERT INTO amber_sync_push_answers
            SELECT user_id, client_id, mutation_id, mutation_id, '[' || result || ']',
                CASE WHEN fingerprint IS NULL THEN '[null]' ELSE '["' || fingerprint || '"]' END
            FROM amber_sync_mutation_results;
        DROP TABLE amber_sync_mutation_results;
        CREATE OR REPLACE FUNCTION amber_sync_forget_user() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
            DELETE FROM amber_sync_records WHERE user_id = OLD.id; DELETE FROM amber_sync_push_answers
            WHERE user_id = OLD.id; RETURN OLD; END $$;
        -- Attachment chunks are stored as they are, never tried for compression: most
        -- attachments are compressed already (photos, videos, PDFs), and the try cost about a
        -- tenth of the database's time writing 100 MiB of them. Rows written before keep their form.
        ALTER TABLE amber_sync_attachment_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
        """,
        // 6 → 7
        """
        -- A push's answers are stored as they are, never tried for compression: they live until
        -- the client's next push, and the try on a large push's row (a few hundred KB of results
        -- and fingerprints) was a tenth of the database's time in a first push of 100,000 records.
        ALTER TABLE amber_sync_push_answers ALTER COLUMN results SET STORAGE EXTERNAL,
            ALTER COLUMN fingerprints SET STORAGE EXTERNAL;
        """,
        // 7 → 8
        """
        -- A batch of pushes is read and written by two functions, so that each session plans
        -- their statements once and keeps the plans (parsing, analysing and planning them for
        -- every batch was half of the database's time when each push held one record). Their
        -- plans look up every row by its key, whatever the tables held when they were made.
        \(PushFunctions.lockAndRead)
        \(PushFunctions.write)
        """,
        // 8 → 9
        """
        -- A batch of pushes reads without locking and writes in a statement of its own, outside
        -- BEGIN: the write locks the users' counter rows and writes only for those whose counter
        -- is still the one read (the others are decided again). Two round trips a batch instead of
        -- four (BEGIN, lock and read, write, COMMIT). The schema 8 functions stay for processes of
        -- the version before while they run.
        \(PushFunctions.read)
        \(PushFunctions.checkedWrite)
        """,
    ]

    /// A number no other program is expected to use for `pg_advisory_xact_lock`: migrations of
    /// several server processes starting at once take turns on it.
    private static let migrationLock: Int64 = 0x616D_6265_7273_796E  // "ambersyn"

    /// Creates the tables or brings them up to date; does nothing when they already are.
    ///
    /// Several processes may call it at once: they take turns, and only the first changes anything.
    ///
    /// - Throws: `SyncServerError.schemaTooNew(path:found:supported:)` when a newer server wrote
    ///   the database, leaving it untouched.
    public func migrate() async throws {
        let location = self.location
        do {
            try await client.withConnection { connection in
                try await Self.migrate(on: connection, location: location, logger: logger)
            }
        } catch {
            throw Self.describe(error, location: location)
        }
    }

    /// Creates or upgrades the tables through `connection`, in one transaction.
    static func migrate(on connection: PostgresConnection, location: String, logger: Logger) async throws {
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
            let found = try await Self.foundSchemaVersion(connection, logger: logger)
            guard found <= Self.migrations.count else {
                throw SyncServerError.schemaTooNew(path: location, found: found, supported: Self.schemaVersion)
            }
            guard found < Self.migrations.count else { return }
            for migration in Self.migrations[found...] {
                // One statement per query: the extended protocol takes no more.
                for statement in Self.statements(of: migration) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
            try await connection.query(
                "UPDATE amber_sync_schema SET version = \(Self.migrations.count)", logger: logger
            )
        }
    }

    /// The statements of a migration: its text split after each `;` that ends a line, except
    /// within a dollar-quoted body (`$$ ... $$`, a function's).
    static func statements(of migration: String) -> [String] {
        var statements: [String] = []
        var statement = ""
        for piece in migration.components(separatedBy: ";\n") {
            statement += statement.isEmpty ? piece : ";\n" + piece
            // An odd number of `$$` so far: the piece ends inside a body.
            guard statement.components(separatedBy: "$$").count % 2 == 1 else { continue }
            statements.append(statement)
            statement = ""
        }
        statements.append(statement)
        return statements.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }

    /// The database's schema version, 0 when it has no Amber tables.
    private static func foundSchemaVersion(_ connection: PostgresConnection, logger: Logger) async throws -> Int {
        let exists =
            try await connection.query(
                "SELECT to_regclass('amber_sync_schema') IS NOT NULL", logger: logger
            ).collect().first?.decode(Bool.self) ?? false
        guard exists else { return 0 }
        let rows = try await connection.query("SELECT version FROM amber_sync_schema", logger: logger).collect()
        return try rows.first?.decode(Int.self) ?? 0
    }
}
