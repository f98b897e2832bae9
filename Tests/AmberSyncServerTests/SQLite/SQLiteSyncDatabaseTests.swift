import AmberSyncProtocol
import AmberSyncServer
import AmberTestSupport
import Foundation
import GRDB
import Testing

@Suite(.boundedConcurrency) struct SQLiteSyncDatabaseTests {
    @Test func recordsUsersAndTokensSurviveReopening() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sync.sqlite").path
        let token: String
        do {
            let database = try SQLiteSyncDatabase(path: path)
            token = try await database.addUser(named: "ann")
            let ann = try #require(try await database.user(forToken: token))
            _ = try await database.push(
                [
                    Mutation(
                        mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: ["text": .string("hi")])
                ],
                clientID: "c", for: ann
            )
        }
        let reopened = try SQLiteSyncDatabase(path: path)
        try await reopened.migrate()
        let ann = try #require(try await reopened.user(forToken: token))
        #expect(
            try await reopened.pull(for: ann, after: 0, limit: 10).changes.map(\.value) == [["text": .string("hi")]])
        // The version counter carried over too.
        let next = try await reopened.push(
            [Mutation(mutationID: 2, collection: "notes", id: "m", baseVersion: nil, value: [:])], clientID: "c",
            for: ann
        )
        #expect(next.map(\.version) == [2])
    }

    /// A file of schema version 1 (before database identities, fingerprints and history tags)
    /// is upgraded in place: its records stay, a cursor into its old history gets a tag, and a
    /// mutation answered before the upgrade is still answered as a retry.
    @Test func aVersion1FileIsUpgradedKeepingItsRecordsAndCursors() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sync.sqlite").path
        let token: String
        let mutation = Mutation(mutationID: 1, collection: "notes", id: "a", baseVersion: nil, value: [:])
        do {
            let database = try SQLiteSyncDatabase(path: path)
            token = try await database.addUser(named: "ann")
            let ann = try #require(try await database.user(forToken: token))
            _ = try await database.push([mutation], clientID: "phone", for: ann)
        }
        try await Self.downgrade(path, toVersion: 1)

        let database = try SQLiteSyncDatabase(path: path)
        let ann = try #require(try await database.user(forToken: token))
        #expect(try await database.pull(for: ann, after: 0, limit: 10).changes.map(\.id) == ["a"])
        #expect(try await database.historyTag(for: ann, at: 1) != nil, "the old history has a tag")
        #expect(try await !database.databaseID().isEmpty)
        let retried = try await database.push([mutation], clientID: "phone", for: ann)
        #expect(retried.map(\.status) == [.applied], "answered as before the upgrade")
        #expect(try await database.pull(for: ann, after: 0, limit: 10).cursor == 1, "and not applied again")
    }

    /// A file of schema version 2, whose tables had no `amber_sync_` prefix, is upgraded in
    /// place to the names PostgreSQL uses: users, tokens, records, mutation results and history
    /// tags all carry over.
    @Test func aVersion2FileGetsTheTableNamesOfPostgreSQLKeepingItsData() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sync.sqlite").path
        let token: String
        let mutation = Mutation(
            mutationID: 1, collection: "notes", id: "a", baseVersion: nil, value: ["n": .integer(1)])
        let (databaseID, tag): (String, String?)
        do {
            let database = try SQLiteSyncDatabase(path: path)
            token = try await database.addUser(named: "ann")
            let ann = try #require(try await database.user(forToken: token))
            _ = try await database.push([mutation], clientID: "phone", for: ann)
            (databaseID, tag) = (try await database.databaseID(), try await database.historyTag(for: ann, at: 1))
        }
        try await Self.downgrade(path, toVersion: 2)
        let before = try Self.tableNames(path)
        #expect(before.contains("records") && !before.contains("amber_sync_records"), "the file is of version 2")

        let database = try SQLiteSyncDatabase(path: path)
        let ann = try #require(try await database.user(forToken: token), "the token still signs in")
        #expect(try await database.pull(for: ann, after: 0, limit: 10).changes.map(\.value) == [["n": .integer(1)]])
        #expect(try await database.historyTag(for: ann, at: 1) == tag, "a client's cursor keeps its tag")
        #expect(try await database.databaseID() == databaseID)
        #expect(try await database.push([mutation], clientID: "phone", for: ann).map(\.version) == [1], "a retry")
        let next = Mutation(mutationID: 2, collection: "notes", id: "b", baseVersion: nil, value: [:])
        #expect(try await database.push([next], clientID: "phone", for: ann).map(\.version) == [2])
        #expect(
            try Self.tableNames(path) == [
                "amber_sync_database", "amber_sync_history", "amber_sync_push_answers", "amber_sync_records",
                "amber_sync_schema", "amber_sync_tokens", "amber_sync_users",
            ])
        let indexes = try await DatabaseQueue(path: path).read { db in
            try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
        }
        #expect(indexes == ["amber_sync_records_by_version", "amber_sync_tokens_by_user"])
    }

    /// The file's tables, by name.
    static func tableNames(_ path: String) throws -> [String] {
        try DatabaseQueue(path: path).read { db in
            try String.fetchAll(
                db,
                sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        }
    }

    /// Takes a file of the current schema back to what `version` wrote, keeping its rows.
    static func downgrade(_ path: String, toVersion version: Int) async throws {
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            // Version 3 and before: an answer per row.
            try db.execute(
                sql: """
                    CREATE TABLE amber_sync_mutation_results (
                        user_id INTEGER NOT NULL REFERENCES amber_sync_users(id) ON DELETE CASCADE,
                        client_id TEXT NOT NULL, mutation_id INTEGER NOT NULL, result TEXT NOT NULL, fingerprint TEXT,
                        PRIMARY KEY (user_id, client_id, mutation_id)) WITHOUT ROWID;
                    INSERT INTO amber_sync_mutation_results
                        SELECT a.user_id, a.client_id, r.value ->> '$.mutationID', r.value, f.value
                        FROM amber_sync_push_answers a, json_each(a.results) r, json_each(a.fingerprints) f
                        WHERE r.key = f.key;
                    DROP TABLE amber_sync_push_answers;
                    """)
            // Version 2 and before: the tables had no prefix.
            try db.execute(
                sql: """
                    ALTER TABLE amber_sync_users RENAME TO users;
                    ALTER TABLE amber_sync_tokens RENAME TO tokens;
                    ALTER TABLE amber_sync_records RENAME TO records;
                    ALTER TABLE amber_sync_mutation_results RENAME TO mutation_results;
                    ALTER TABLE amber_sync_history RENAME TO history;
                    DROP INDEX amber_sync_tokens_by_user;
                    CREATE INDEX tokens_by_user ON tokens(user_id);
                    DROP INDEX amber_sync_records_by_version;
                    CREATE UNIQUE INDEX records_by_version ON records(user_id, version);
                    """)
            if version < 2 {
                // Version 1: no database identity, fingerprints or history tags.
                try db.execute(
                    sql: """
                        DROP TABLE history; DROP TABLE amber_sync_database;
                        ALTER TABLE mutation_results DROP COLUMN fingerprint;
                        """)
            }
            try db.execute(sql: "UPDATE amber_sync_schema SET version = ?", arguments: [version])
        }
        try queue.close()
    }

    @Test func theFileIsInWALModeWithFullSynchronousWrites() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sync.sqlite").path
        _ = try SQLiteSyncDatabase(path: path)
        let queue = try DatabaseQueue(path: path)
        #expect(try queue.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
        #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT version FROM amber_sync_schema") } == 4)
    }

    @Test func tokensAreStoredOnlyAsHashes() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sync.sqlite").path
        let database = try SQLiteSyncDatabase(path: path)
        let token = try await database.addUser(named: "ann")
        let queue = try DatabaseQueue(path: path)
        let stored = try await queue.read { try String.fetchAll($0, sql: "SELECT hash FROM amber_sync_tokens") }
        #expect(stored == [AccessToken.hash(token)])
        let contents = try await queue.read { db in
            try String.fetchAll(db, sql: "SELECT hash || ' ' || user_id FROM amber_sync_tokens")
                + String.fetchAll(db, sql: "SELECT name FROM amber_sync_users")
        }
        #expect(!contents.contains { $0.contains(token) })
    }

    @Test func aSchemaNewerThanThisBuildIsRefusedAndTheFileLeftUntouched() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sync.sqlite").path
        do {
            _ = try SQLiteSyncDatabase(path: path)
            let queue = try DatabaseQueue(path: path)
            try queue.write { try $0.execute(sql: "UPDATE amber_sync_schema SET version = 99") }
            try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            try queue.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: SyncServerError.schemaTooNew(path: path, found: 99, supported: 4)) {
            try SQLiteSyncDatabase(path: path)
        }
        #expect(bytesDiffer(try Data(contentsOf: URL(fileURLWithPath: path)), before) == nil)
        #expect(SyncServerError.schemaTooNew(path: path, found: 99, supported: 1).description.contains("newer"))
    }

    @Test func aFileThatIsNotASyncDatabaseIsRefusedAndLeftUntouched() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }

        let textPath = directory.appendingPathComponent("notes.txt").path
        let text = Data(String(repeating: "not a database\n", count: 100).utf8)
        try text.write(to: URL(fileURLWithPath: textPath))
        #expect {
            try SQLiteSyncDatabase(path: textPath)
        } throws: { error in
            guard case SyncServerError.notASyncDatabase(let path, _) = error else { return false }
            return path == textPath
        }
        #expect(bytesDiffer(try Data(contentsOf: URL(fileURLWithPath: textPath)), text) == nil)

        let otherPath = directory.appendingPathComponent("other.sqlite").path
        do {
            let queue = try DatabaseQueue(path: otherPath)
            try queue.write { try $0.execute(sql: "CREATE TABLE notes (id TEXT)") }
            try queue.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: otherPath))
        #expect {
            try SQLiteSyncDatabase(path: otherPath)
        } throws: { error in
            guard case SyncServerError.notASyncDatabase = error else { return false }
            return true
        }
        #expect(bytesDiffer(try Data(contentsOf: URL(fileURLWithPath: otherPath)), before) == nil)
    }
}
