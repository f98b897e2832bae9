import AmberLock
import AmberSyncPostgres
import AmberSyncProtocol
import AmberSyncServer
import AmberTestSupport
import Crypto
import Foundation
import Logging
import PostgresNIO
import Testing

/// What only the PostgreSQL backend has: addresses, its schema table, and notifications between processes.
@Suite(.boundedConcurrency, .enabled(if: PostgresTestServer.isWanted, "PostgreSQL is not installed"))
struct PostgresSyncDatabaseTests {
    private var logger: Logger { .quietTests }

    @Test(arguments: [
        "mysql://amber@127.0.0.1/db",
        "postgres://127.0.0.1:5432/db",
        "postgres://amber@/db",
        "postgres://amber@127.0.0.1:5432",
        "postgres://amber@127.0.0.1:5432/",
        "postgres://amber@127.0.0.1:5432/db?sslmode=sometimes",
        "postgres://amber@127.0.0.1:5432/db?pool=3",
    ])
    func anAddressItCannotUseIsRefusedNamingWhy(url: String) async throws {
        await #expect {
            _ = try await PostgresSyncDatabase(url: url, logger: logger)
        } throws: { error in
            guard case SyncServerError.invalidDatabaseURL(let address, let reason) = error else { return false }
            return !address.isEmpty && !reason.isEmpty
        }
    }

    @Test func aPasswordNeverAppearsInAnError() async throws {
        await #expect {
            _ = try await PostgresSyncDatabase(url: "postgres://amber:hunter2@127.0.0.1:1/db?pool=1", logger: logger)
        } throws: { error in
            !"\(error)".contains("hunter2")
        }
        await #expect {
            _ = try await PostgresSyncDatabase(url: "postgres://amber:hunter2@127.0.0.1:1/db", logger: logger)
        } throws: { error in
            !"\(error)".contains("hunter2")
        }
    }

    @Test func aServerThatIsNotThereIsUnavailable() async throws {
        // Port 1 on loopback: nothing listens there.
        await #expect {
            _ = try await PostgresSyncDatabase(url: "postgres://amber@127.0.0.1:1/db", logger: logger)
        } throws: { error in
            guard case SyncServerError.databaseUnavailable(let location, _) = error else { return false }
            return location == "postgres://amber@127.0.0.1:1/db"
        }
    }

    @Test func aDatabaseThatDoesNotExistIsUnavailable() async throws {
        let admin = try PostgresTestServer.url()
        var components = try #require(URLComponents(string: admin))
        components.path = "/amber_no_such_database"
        await #expect {
            _ = try await PostgresSyncDatabase(url: components.string!, logger: logger)
        } throws: { error in
            guard case SyncServerError.databaseUnavailable(_, let reason) = error else { return false }
            return reason.contains("amber_no_such_database")
        }
    }

    /// A user's records and stored answers go with the user, as a foreign key's cascade would
    /// take them, without a foreign key checked for every row a push writes.
    @Test func aUserDeletedByHandTakesItsRecordsAndAnswersAlong() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let database = try await PostgresSyncDatabase(url: url, logger: logger)
        for name in ["ann", "bob"] {
            let token = try await database.addUser(named: name)
            let user = try #require(try await database.user(forToken: token))
            let mutations = (1...3).map {
                Mutation(
                    mutationID: Int64($0), collection: "notes", id: "\($0)", baseVersion: nil, value: ["n": .integer(1)]
                )
            }
            let results = try await database.push(mutations, clientID: "phone", for: user)
            #expect(results.allSatisfy { $0.status == .applied })
        }
        await database.close()
        try PostgresTestServer.psql(url, "DELETE FROM amber_sync_users WHERE name = 'ann'")
        func count(_ table: String) throws -> String {
            try PostgresTestServer.psql(url, "SELECT count(*) FROM \(table)").trimmingCharacters(
                in: .whitespacesAndNewlines)
        }
        #expect(
            try count(
                "pg_constraint WHERE contype = 'f' AND conrelid IN "
                    + "('amber_sync_records'::regclass, 'amber_sync_push_answers'::regclass)") == "0",
            "no foreign key checked for each row a push writes")
        #expect(try count("amber_sync_records") == "3", "bob's records stay, ann's went")
        #expect(try count("amber_sync_push_answers") == "1", "bob's push's answers stay, in one row")
        #expect(try count("amber_sync_history") == "1")
        #expect(
            try count(
                "amber_sync_records r WHERE NOT EXISTS (SELECT 1 FROM amber_sync_users u WHERE u.id = r.user_id)")
                == "0")
    }

    /// A push that changes no record (a retry answered before, a conflict) leaves its user's
    /// counter row as it was: no row version, no dead tuple, for nothing.
    @Test func aPushThatChangesNothingLeavesItsUsersRowAlone() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let database = try await PostgresSyncDatabase(url: url, logger: logger)
        let user = try #require(try await database.user(forToken: database.addUser(named: "ann")))
        let create = Mutation(mutationID: 1, collection: "notes", id: "a", baseVersion: nil, value: ["n": .integer(1)])
        #expect(try await database.push([create], clientID: "phone", for: user).map(\.version) == [1])
        func row() throws -> String {
            try PostgresTestServer.psql(
                url, "SELECT xmin::text || ' ' || version FROM amber_sync_users WHERE id = \(user.id)")
        }
        let written = try row()
        #expect(written.hasSuffix(" 1"))

        #expect(try await database.push([create], clientID: "phone", for: user).map(\.version) == [1], "a retry")
        let stale = Mutation(mutationID: 1, collection: "notes", id: "a", baseVersion: nil, value: ["n": .integer(2)])
        #expect(try await database.push([stale], clientID: "tablet", for: user).map(\.status) == [.conflict])
        #expect(try row() == written, "the row is the one the first push wrote")

        let edit = Mutation(mutationID: 2, collection: "notes", id: "a", baseVersion: 1, value: ["n": .integer(3)])
        #expect(try await database.push([edit], clientID: "phone", for: user).map(\.version) == [2])
        #expect(try row().hasSuffix(" 2"), "a change still moves the counter")
        await database.close()
    }

    /// A batch does not read the records its creations name: it writes them as new. Where one is
    /// stored after all (another device created it, or deleted it), the write fails and changes
    /// nothing, and the batch is decided again reading them: answered as if read the first time.
    @Test func creationsAreWrittenUnreadAndDecidedAgainWhereARecordIsStored() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let database = try await PostgresSyncDatabase(url: url, logger: logger)
        let ann = try #require(try await database.user(forToken: database.addUser(named: "ann")))
        func create(_ mutationID: Int64, _ id: String, _ text: String) -> Mutation {
            Mutation(
                mutationID: mutationID, collection: "notes", id: id, baseVersion: nil, value: ["text": .string(text)])
        }
        let first = try await database.push([create(1, "a", "a"), create(2, "b", "b")], clientID: "phone", for: ann)
        #expect(first.map(\.version) == [1, 2])
        #expect(database.creationsReadAgain == 0, "nothing was stored under their names")

        // The laptop creates "b" too, and "c" and "d": "b" is stored, the others are new.
        let laptop = [create(1, "b", "laptop b"), create(2, "c", "c"), create(3, "d", "d")]
        let results = try await database.push(laptop, clientID: "laptop", for: ann)
        #expect(database.creationsReadAgain == 1)
        #expect(results.map(\.status) == [.conflict, .applied, .applied])
        #expect(results.map(\.version) == [2, 3, 4])
        #expect(results[0].value == ["text": .string("b")])
        let page = try await database.pull(for: ann, after: 0, limit: 100)
        #expect(page.changes.map(\.id) == ["a", "b", "c", "d"], "nothing written twice, nothing lost")
        #expect(page.changes.first { $0.id == "b" }?.record?.object["text"] == .string("b"))

        // Sent again: answered as before, from the answers kept, with nothing to decide again.
        #expect(try await database.push(laptop, clientID: "laptop", for: ann) == results)
        #expect(database.creationsReadAgain == 1)
        await database.close()
    }

    /// Two server processes: while one decides a creation it did not read, the other commits a
    /// creation of the same record. The first's write finds its user's counter moved and leaves
    /// the push; decided again alone, its plain insert fails on the stored record, and the push
    /// is decided once more against it: a conflict carrying the other's value, nothing overwritten.
    @Test func aRecordCreatedByAnotherProcessMeanwhileMakesTheCreationAConflict() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let first = try await PostgresSyncDatabase(url: url, maximumConnections: 2, logger: logger)
        let second = try await PostgresSyncDatabase(url: url, maximumConnections: 2, logger: logger)
        let ann = try #require(try await first.user(forToken: first.addUser(named: "ann")))
        let interrupted = LockedValue(false)
        first.betweenReadAndWrite.withLock {
            $0 = {
                // Once only: the decisions after it find the record stored.
                let once = interrupted.withLock { done in
                    defer { done = true }
                    return !done
                }
                guard once else { return }
                let theirs = Mutation(
                    mutationID: 1, collection: "notes", id: "shared", baseVersion: nil,
                    value: ["text": .string("laptop")])
                let applied = try await second.push([theirs], clientID: "laptop", for: ann)
                #expect(applied.map(\.version) == [1])
            }
        }
        let mine = Mutation(
            mutationID: 1, collection: "notes", id: "shared", baseVersion: nil, value: ["text": .string("phone")])
        let results = try await first.push([mine], clientID: "phone", for: ann)
        #expect(results.map(\.status) == [.conflict])
        #expect(results.map(\.version) == [1])
        #expect(results.first?.value == ["text": .string("laptop")])
        #expect(first.creationsReadAgain == 1)
        let changes = try await first.pull(for: ann, after: 0, limit: 10).changes
        #expect(changes.map(\.version) == [1])
        #expect(changes.first?.record?.object["text"] == .string("laptop"), "the other's record is kept")
        await second.close()
        await first.close()
    }

    /// A push sent again while the first is still waiting (a client that timed out) can land in
    /// one batch with it: the second is answered as the first was, mutation by mutation, and its
    /// new mutation applied after them; nothing is stored twice. The order they arrive in
    /// changes nothing.
    @Test func aPushAndItsRetryInOneBatchAreAnsweredAlikeAndStoredOnce() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let database = try await PostgresSyncDatabase(url: url, logger: logger)
        let ann = try #require(try await database.user(forToken: database.addUser(named: "ann")))
        // The first batch (the laptop's) waits between its read and write until both of the
        // phone's pushes wait behind it: they are then taken together.
        let held = LockedValue(true)
        database.betweenReadAndWrite.withLock {
            $0 = {
                while held.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
            }
        }
        func note(_ mutationID: Int64, _ id: String, base: Int64? = nil) -> Mutation {
            Mutation(
                mutationID: mutationID, collection: "notes", id: id, baseVersion: base, value: ["id": .string(id)])
        }
        async let laptop = database.push([note(1, "zero")], clientID: "laptop", for: ann)
        while database.pushTransactions.transactions == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let sent = [note(1, "a"), note(2, "b"), note(3, "zero", base: 1)]
        async let first = database.push(sent, clientID: "phone", for: ann)
        async let again = database.push(sent + [note(4, "c")], clientID: "phone", for: ann)
        while database.waitingPushCount < 2 { try await Task.sleep(for: .milliseconds(5)) }
        held.withLock { $0 = false }

        #expect(try await laptop.map(\.version) == [1])
        let (once, twice) = (try await first, try await again)
        #expect(database.pushTransactions == (transactions: 2, pushes: 3), "the phone's pushes in one batch")
        #expect(once.map(\.status) == [.applied, .applied, .applied])
        #expect(Array(twice.prefix(3)) == once, "answered as before")
        #expect(twice[3].status == .applied)
        #expect(Set(once.map(\.version) + [twice[3].version]) == [2, 3, 4, 5])
        let changes = try await database.pull(for: ann, after: 0, limit: 100).changes
        #expect(changes.map(\.version) == [2, 3, 4, 5])
        #expect(changes.map(\.id).sorted() == ["a", "b", "c", "zero"], "each stored once")
        await database.close()
    }

    /// Pushes of other users that arrive while a batch of few mutations is applied wait for it
    /// and go together into the next batch, rather than each into a batch of its own beside it.
    @Test func otherUsersPushesWaitForASmallBatchAndGoTogetherIntoTheNext() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let database = try await PostgresSyncDatabase(url: url, logger: logger)
        var users: [SyncUser] = []
        for name in ["ann", "bob", "cara", "dan"] {
            users.append(try #require(try await database.user(forToken: database.addUser(named: name))))
        }
        let (held, batches) = (LockedValue(true), LockedValue(0))
        database.betweenReadAndWrite.withLock {
            $0 = {
                batches.withLock { $0 += 1 }
                while held.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
            }
        }
        func push(_ user: SyncUser) -> Task<[MutationResult], any Error> {
            Task { try await database.push([Self.note(1, "from-\(user.id)")], clientID: "phone", for: user) }
        }
        // Ann's batch is between its read and its write when the others arrive.
        var pushes = [push(users[0])]
        for _ in 0..<2_000 where batches.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        pushes += users.dropFirst().map(push)
        for _ in 0..<2_000 where batches.withLock({ $0 }) == 1 && database.waitingPushCount < 3 {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(database.waitingPushCount == 3, "the others wait")
        #expect(batches.withLock { $0 } == 1, "no batch beside the first")
        held.withLock { $0 = false }
        for push in pushes {
            #expect(try await push.value.map(\.status) == [.applied])
        }
        #expect(database.pushTransactions == (transactions: 2, pushes: 4), "the three in one batch")
        await database.close()
    }

    /// Next to a large batch (a phone's first push), another user's push is applied in a batch
    /// of its own at once, not held up until the large one commits.
    @Test func nextToALargeBatchAnotherUsersPushIsAppliedBesideIt() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let database = try await PostgresSyncDatabase(url: url, logger: logger)
        let ann = try #require(try await database.user(forToken: database.addUser(named: "ann")))
        let bob = try #require(try await database.user(forToken: database.addUser(named: "bob")))
        let (held, batches, gaveUp) = (LockedValue(true), LockedValue(0), LockedValue(false))
        database.betweenReadAndWrite.withLock {
            $0 = {
                let batch = batches.withLock {
                    $0 += 1
                    return $0
                }
                guard batch == 1 else { return }
                // The large batch waits until the other has been written, or gives up after ten
                // seconds (the other waited for it).
                for _ in 0..<2_000 where held.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
                gaveUp.withLock { $0 = held.withLock { $0 } }
            }
        }
        let large = (1...PostgresSyncDatabase.largePushBatch).map { Self.note(Int64($0), "note-\($0)") }
        let first = Task { try await database.push(large, clientID: "phone", for: ann) }
        for _ in 0..<2_000 where batches.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let other = try await database.push([Self.note(1, "bobs")], clientID: "laptop", for: bob)
        held.withLock { $0 = false }
        #expect(other.map(\.status) == [.applied])
        #expect(batches.withLock { $0 } == 2)
        #expect(try await first.value.allSatisfy { $0.status == .applied })
        #expect(!gaveUp.withLock { $0 }, "applied while the large batch waited")
        #expect(database.pushTransactions == (transactions: 2, pushes: 2))
        await database.close()
    }

    /// Two devices of one user create the same record, their pushes landing in one batch: the
    /// first is applied, the second is a conflict carrying the first's value, decided against
    /// what the batch decided before it (the record was never read: both are creations), and one
    /// row is stored.
    @Test func twoDevicesCreatingOneRecordInOneBatchMakeTheSecondAConflict() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let database = try await PostgresSyncDatabase(url: url, logger: logger)
        let ann = try #require(try await database.user(forToken: database.addUser(named: "ann")))
        let (held, batches) = (LockedValue(true), LockedValue(0))
        database.betweenReadAndWrite.withLock {
            $0 = {
                batches.withLock { $0 += 1 }
                while held.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
            }
        }
        func create(_ text: String, from client: String) -> Task<[MutationResult], any Error> {
            let mutation = Mutation(
                mutationID: 1, collection: "notes", id: "shared", baseVersion: nil, value: ["text": .string(text)])
            return Task { try await database.push([mutation], clientID: client, for: ann) }
        }
        let first = Task { try await database.push([Self.note(1, "zero")], clientID: "tablet", for: ann) }
        for _ in 0..<2_000 where batches.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let phone = create("from the phone", from: "phone")
        for _ in 0..<2_000 where database.waitingPushCount < 1 { try await Task.sleep(for: .milliseconds(5)) }
        let laptop = create("from the laptop", from: "laptop")
        for _ in 0..<2_000 where database.waitingPushCount < 2 { try await Task.sleep(for: .milliseconds(5)) }
        held.withLock { $0 = false }

        #expect(try await first.value.map(\.status) == [.applied])
        let (mine, theirs) = (try await phone.value, try await laptop.value)
        #expect(database.pushTransactions == (transactions: 2, pushes: 3), "the two in one batch")
        #expect(mine.map(\.status) == [.applied])
        #expect(theirs.map(\.status) == [.conflict])
        #expect(theirs.first?.value == ["text": .string("from the phone")])
        #expect(theirs.first?.version == mine.first?.version)
        let changes = try await database.pull(for: ann, after: 0, limit: 10).changes
        #expect(changes.filter { $0.id == "shared" }.count == 1)
        #expect(changes.first { $0.id == "shared" }?.record?.object["text"] == .string("from the phone"))
        await database.close()
    }

    /// A new record `id` of collection "notes".
    private static func note(_ mutationID: Int64, _ id: String) -> Mutation {
        Mutation(mutationID: mutationID, collection: "notes", id: id, baseVersion: nil, value: ["id": .string(id)])
    }

    /// The two functions a batch of pushes goes through keep their plans for the session, made
    /// once: those plans must look every row up by its key even when made on tables small enough
    /// for a scan to be cheaper, or they would scan the tables whole once they had grown.
    @Test func aBatchsFunctionsLookRowsUpByTheirKeysEvenOnSmallTables() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let (id, hash) = try await userWithThreeNotes(at: url)

        // One transaction: reads of each kind, then a write doing each of its parts (forgetting
        // answers, a new record, a stored one rewritten, answers, history, the counter); then
        // the scans that transaction made of Amber's tables.
        let scans = try PostgresTestServer.psql(
            url,
            """
            SELECT count(*) FROM amber_sync_read_batch(
                ARRAY[\(id)]::int8[], ARRAY['\(hash)'], ARRAY[\(id)]::int8[], ARRAY['phone'], ARRAY[4]::int8[],
                ARRAY[5]::int8[], ARRAY[\(id), \(id)]::int8[], ARRAY['notes', 'notes'], ARRAY['1', 'new']);
            SELECT \(checkedWrite(user: id, counter: 3));
            SELECT sum(seq_scan) || ' ' || sum(idx_scan) FROM pg_stat_xact_user_tables
            WHERE relname LIKE 'amber_sync_%'
            """)
        // psql prints each statement's result: the scans are the last line.
        let counts = (scans.split(separator: "\n").last ?? "").split(separator: " ").compactMap { Int($0) }
        #expect(counts.count == 2 && counts[0] == 0, "sequential scans, then index scans: \(scans)")
        #expect(counts.count == 2 && counts[1] > 0, "the rows were looked up through their keys: \(scans)")
        #expect(
            try PostgresTestServer.psql(url, "SELECT value FROM amber_sync_records WHERE id = '1'") == #"{"n":3}"#)
        #expect(try PostgresTestServer.psql(url, "SELECT count(*) FROM amber_sync_push_answers") == "1")
    }

    /// The write of a batch writes only for users whose counter is still the one the batch read:
    /// for a user another transaction has written since, it writes nothing and names the user,
    /// whose pushes are then decided again.
    @Test func aBatchsWriteLeavesAUserWhoseCounterMovedSinceTheRead() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let (id, _) = try await userWithThreeNotes(at: url)
        func state() throws -> String {
            try PostgresTestServer.psql(
                url,
                """
                SELECT (SELECT version FROM amber_sync_users WHERE id = \(id)) || ' '
                    || (SELECT count(*) FROM amber_sync_records) || ' '
                    || (SELECT value FROM amber_sync_records WHERE id = '1') || ' '
                    || (SELECT count(*) FROM amber_sync_history)
                """)
        }
        let before = try state()
        #expect(before == #"3 3 {"n":1} 1"#)

        // Read at counter 2, but the counter is 3: the write names the user and changes nothing.
        #expect(try PostgresTestServer.psql(url, "SELECT \(checkedWrite(user: id, counter: 2))") == "{\(id)}")
        #expect(try state() == before)
        // At the counter it read, it writes.
        #expect(try PostgresTestServer.psql(url, "SELECT \(checkedWrite(user: id, counter: 3))") == "{}")
        #expect(try state() == #"5 4 {"n":3} 2"#)
    }

    /// A user deleted between a batch's read and its write has no counter row to lock: the write
    /// names the user and leaves no row naming it (records, answers, history), as the lock
    /// the read used to take guaranteed; the push, decided again, finds the user gone.
    @Test func aBatchsWriteForAUserDeletedSinceTheReadLeavesNoRowNamingIt() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let (id, _) = try await userWithThreeNotes(at: url)
        try PostgresTestServer.psql(url, "DELETE FROM amber_sync_users WHERE id = \(id)")

        #expect(try PostgresTestServer.psql(url, "SELECT \(checkedWrite(user: id, counter: 3))") == "{\(id)}")
        for table in ["amber_sync_records", "amber_sync_push_answers", "amber_sync_history"] {
            #expect(
                try PostgresTestServer.psql(url, "SELECT count(*) FROM \(table) WHERE user_id = \(id)") == "0",
                "\(table)")
        }
    }

    /// A user "ann" with notes 1, 2 and 3 pushed by client "phone" (counter 3): the user's id and
    /// the hash of the user's token.
    private func userWithThreeNotes(at url: String) async throws -> (id: Int64, tokenHash: String) {
        let database = try await PostgresSyncDatabase(url: url, logger: logger)
        let token = try await database.addUser(named: "ann")
        let user = try #require(try await database.user(forToken: token))
        let mutations = (1...3).map {
            Mutation(
                mutationID: Int64($0), collection: "notes", id: "\($0)", baseVersion: nil, value: ["n": .integer(1)])
        }
        _ = try await database.push(mutations, clientID: "phone", for: user)
        await database.close()
        return (user.id, AccessToken.hash(token))
    }

    /// A call of `amber_sync_write_checked` for `user`, read at `counter`: it forgets phone's
    /// answers below 4, creates note "new" (version 4), rewrites note 1 (version 5), keeps an
    /// answer, a history row and the counter 5.
    private func checkedWrite(user id: Int64, counter: Int64) -> String {
        """
        amber_sync_write_checked(
            ARRAY[\(id)]::int8[], ARRAY[\(counter)]::int8[], true,
            ARRAY[\(id)]::int8[], ARRAY['phone'], ARRAY[4]::int8[],
            ARRAY[\(id)]::int8[], ARRAY['notes'], ARRAY['new'], ARRAY[4]::int8[], ARRAY[4]::int8[],
            ARRAY['{"n":2}'], ARRAY[false], ARRAY['{"n":4}'],
            ARRAY[\(id)]::int8[], ARRAY['notes'], ARRAY['1'], ARRAY[5]::int8[], ARRAY[1]::int8[],
            ARRAY['{"n":3}'], ARRAY[false], ARRAY['{"n":5}'],
            ARRAY[\(id)]::int8[], ARRAY['phone'], ARRAY[5]::int8[], ARRAY[4]::int8[], ARRAY['[]'], ARRAY['[]'],
            ARRAY[\(id)]::int8[], ARRAY[5]::int8[], ARRAY['tag'],
            ARRAY[\(id)]::int8[], ARRAY[5]::int8[])
        """
    }

    @Test func anUploadTakenOverCannotBeFinishedByTheRequestItWasTakenFrom() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let database = try await PostgresSyncDatabase(url: url, logger: logger)
        defer { Task { await database.close() } }
        let token = try await database.addUser(named: "ann")
        let user = try #require(try await database.user(forToken: token))
        let whole = 2 * 1_048_576
        let bytes = (0..<(whole + 99)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 10) }
        let hash = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        let cut = try await database.beginAttachment(hash, for: user, at: 0)
        try await cut.write(ByteBuffer(bytes: bytes[..<whole]))
        #expect(await cut.suspend() == Int64(whole))

        let first = try await database.beginAttachment(hash, for: user, at: Int64(whole))
        try await first.write(ByteBuffer(bytes: bytes[whole...]))
        let second = try await database.beginAttachment(hash, for: user, at: Int64(whole))
        await #expect(throws: SyncServerError.uploadInProgress(hash: hash)) { try await first.finish() }
        #expect(try await database.heldUploadBytes(hash, for: user) == Int64(whole), "the held chunks stay")

        try await second.write(ByteBuffer(bytes: bytes[whole...]))
        #expect(try await second.finish())
        let read = try await database.readAll(hash, for: user, range: 0..<Int64(bytes.count))
        #expect(bytesDiffer(read, bytes) == nil)
        let chunks = try PostgresTestServer.psql(url, "SELECT count(*) FROM amber_sync_attachment_chunks")
        #expect(chunks.trimmingCharacters(in: .whitespacesAndNewlines) == "3")
    }

    @Test func aNewerSchemaIsRefusedAndLeftUntouched() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let database = try await PostgresSyncDatabase(url: url, logger: logger)
        _ = try await database.addUser(named: "ann")
        await database.close()
        try PostgresTestServer.psql(url, "UPDATE amber_sync_schema SET version = 99")
        let before = try PostgresTestServer.psql(url, "SELECT count(*) FROM amber_sync_users")

        await #expect {
            _ = try await PostgresSyncDatabase(url: url, logger: logger)
        } throws: { error in
            guard case SyncServerError.schemaTooNew(_, let found, let supported) = error else { return false }
            return found == 99 && supported == PostgresSyncDatabase.schemaVersion && "\(error)".contains("newer")
        }
        #expect(try PostgresTestServer.psql(url, "SELECT version FROM amber_sync_schema") == "99")
        #expect(try PostgresTestServer.psql(url, "SELECT count(*) FROM amber_sync_users") == before)
    }

    /// A database of schema version 2 (before attachments) is upgraded in place, keeping its
    /// users, tokens, records and history tags; its table names are those the SQLite backend uses.
    @Test func aVersion2DatabaseIsUpgradedKeepingItsData() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let mutation = Mutation(
            mutationID: 1, collection: "notes", id: "a", baseVersion: nil, value: ["n": .integer(1)])
        let database = try await PostgresSyncDatabase(url: url, logger: logger)
        let token = try await database.addUser(named: "ann")
        let ann = try #require(try await database.user(forToken: token))
        _ = try await database.push([mutation], clientID: "phone", for: ann)
        let tag = try await database.historyTag(for: ann, at: 1)
        await database.close()
        try PostgresTestServer.psql(
            url,
            """
            DROP TABLE amber_sync_attachment_chunks; DROP TABLE amber_sync_attachment_uploads;
            DROP TABLE amber_sync_attachments;
            CREATE TABLE amber_sync_mutation_results (
                user_id bigint NOT NULL REFERENCES amber_sync_users(id) ON DELETE CASCADE,
                client_id text NOT NULL, mutation_id bigint NOT NULL, result text NOT NULL, fingerprint text,
                PRIMARY KEY (user_id, client_id, mutation_id));
            INSERT INTO amber_sync_mutation_results
                SELECT a.user_id, a.client_id, (r.value ->> 'mutationID')::bigint, r.value::text, f.value #>> '{}'
                FROM amber_sync_push_answers a,
                    jsonb_array_elements(a.results::jsonb) WITH ORDINALITY AS r(value, n),
                    jsonb_array_elements(a.fingerprints::jsonb) WITH ORDINALITY AS f(value, n)
                WHERE r.n = f.n;
            DROP TABLE amber_sync_push_answers;
            UPDATE amber_sync_schema SET version = 2;
            """)
        #expect(
            try PostgresTestServer.psql(
                url, "SELECT count(*) FROM amber_sync_mutation_results WHERE fingerprint IS NOT NULL") == "1",
            "the answer is kept as version 2 kept it")

        let upgraded = try await PostgresSyncDatabase(url: url, logger: logger)
        defer { Task { await upgraded.close() } }
        let signedIn = try #require(try await upgraded.user(forToken: token), "the token still signs in")
        #expect(
            try await upgraded.pull(for: signedIn, after: 0, limit: 10).changes.map(\.value) == [["n": .integer(1)]])
        #expect(try await upgraded.historyTag(for: signedIn, at: 1) == tag)
        #expect(try await upgraded.push([mutation], clientID: "phone", for: signedIn).map(\.version) == [1], "a retry")
        #expect(
            try PostgresTestServer.psql(url, "SELECT version FROM amber_sync_schema")
                == "\(PostgresSyncDatabase.schemaVersion)")
        let tables = try PostgresTestServer.psql(
            url,
            """
            SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables
            WHERE schemaname = 'public' AND tablename NOT LIKE 'amber_sync_attachment%'
            """)
        #expect(
            tables
                == "amber_sync_database,amber_sync_history,amber_sync_push_answers,amber_sync_records,"
                + "amber_sync_schema,amber_sync_tokens,amber_sync_users",
            "the tables of the SQLite backend, by the same names")
        #expect(
            try PostgresTestServer.psql(
                url,
                """
                SELECT attstorage FROM pg_attribute
                WHERE attrelid = 'amber_sync_attachment_chunks'::regclass AND attname = 'data'
                """) == "e", "attachment chunks are stored uncompressed")
        #expect(
            try PostgresTestServer.psql(
                url,
                """
                SELECT string_agg(attname || '=' || attstorage::text, ',' ORDER BY attname) FROM pg_attribute
                WHERE attrelid = 'amber_sync_push_answers'::regclass AND attname IN ('results', 'fingerprints')
                """) == "fingerprints=e,results=e", "push answers are stored uncompressed")
    }

    @Test func serversStartingTogetherOnAnEmptyDatabaseCreateTheTablesOnce() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let logger = self.logger
        let databases = try await withThrowingTaskGroup(of: PostgresSyncDatabase.self) { group in
            for _ in 0..<4 {
                group.addTask { try await PostgresSyncDatabase(url: url, maximumConnections: 2, logger: logger) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(databases.count == 4)
        #expect(
            try PostgresTestServer.psql(url, "SELECT version FROM amber_sync_schema")
                == "\(PostgresSyncDatabase.schemaVersion)")
        #expect(try PostgresTestServer.psql(url, "SELECT count(*) FROM amber_sync_schema") == "1")
        // Tables that were there are kept: another start migrates nothing and loses nothing.
        _ = try await databases[0].addUser(named: "ann")
        let again = try await PostgresSyncDatabase(url: url, logger: logger)
        #expect(try PostgresTestServer.psql(url, "SELECT name FROM amber_sync_users") == "ann")
        await again.close()
        for database in databases { await database.close() }
    }

    /// The listening connection is cut: the slow poll, then the reconnected listener, still wake pulls.
    @Test func aPullIsWokenEvenWhenTheListeningConnectionWasCut() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let serving = try await PostgresSyncDatabase(url: url, maximumConnections: 2, logger: logger)
        let other = try await PostgresSyncDatabase(url: url, maximumConnections: 2, logger: logger)
        let token = try await serving.addUser(named: "ann")
        let ann = try #require(try await serving.user(forToken: token))
        let database = url.split(separator: "/").last.map(String.init) ?? ""

        for round in 1...2 {
            let cut = try PostgresTestServer.psql(
                url,
                """
                SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                WHERE datname = '\(database)' AND query LIKE 'LISTEN%'
                """
            )
            #expect(Int(cut) ?? 0 >= 1, "round \(round): no listening connection was found to cut")
            let generation = serving.changeNotifier.generation(for: ann.id)
            _ = try await other.push(
                [
                    Mutation(
                        mutationID: Int64(round), collection: "notes", id: "n\(round)", baseVersion: nil, value: [:])
                ],
                clientID: "c", for: ann
            )
            let woken = await serving.changeNotifier.wait(for: ann.id, after: generation, timeout: .seconds(10))
            #expect(woken, "round \(round)")
            // Let the listener reconnect before the next cut.
            _ = await eventually(within: 5) {
                let listening = try? PostgresTestServer.psql(
                    url,
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database)' AND query LIKE 'LISTEN%'"
                )
                return listening == "2"
            }
        }
        await other.close()
        await serving.close()
    }

    /// A connection of its own, in a transaction holding `user`'s counter row (`FOR UPDATE`), as
    /// another process's push would; `COMMIT` on it lets the user's pushes go on.
    func lockingUserRow(of user: SyncUser, at url: String) async throws -> PostgresConnection {
        let components = try #require(URLComponents(string: url))
        let holder = try await PostgresConnection.connect(
            configuration: .init(
                host: "127.0.0.1", port: components.port ?? 5432, username: components.user ?? "amber",
                password: nil, database: String(components.path.dropFirst()), tls: .disable
            ),
            id: 1, logger: logger
        )
        try await holder.query("BEGIN", logger: logger)
        try await holder.query("SELECT version FROM amber_sync_users WHERE id = \(user.id) FOR UPDATE", logger: logger)
        return holder
    }

    /// Two server processes push for one user at once, each deciding on what it read before the
    /// other's commits: every push is applied once, and the user's versions are 1, 2, 3, … with
    /// none given twice and none skipped (a write for a user whose counter moved since its read
    /// writes nothing, and its pushes are decided again).
    @Test func twoProcessesPushingForOneUserGiveEachVersionOnce() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let first = try await PostgresSyncDatabase(url: url, maximumConnections: 6, logger: logger)
        let second = try await PostgresSyncDatabase(url: url, maximumConnections: 6, logger: logger)
        let ann = try #require(try await first.user(forToken: first.addUser(named: "ann")))
        let (clients, pushes) = (6, 25)
        let statuses = try await withThrowingTaskGroup(of: [MutationResult.Status].self) { group in
            for client in 0..<clients {
                group.addTask {
                    var statuses: [MutationResult.Status] = []
                    for index in 1...pushes {
                        let mutation = Mutation(
                            mutationID: Int64(index), collection: "notes", id: "\(client)-\(index)", baseVersion: nil,
                            value: ["n": .integer(Int64(index))])
                        // Each client's pushes go through both processes, one after the other.
                        let database = (client + index) % 2 == 0 ? first : second
                        statuses += try await database.push([mutation], clientID: "c\(client)", for: ann).map(\.status)
                    }
                    return statuses
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(statuses.count == clients * pushes)
        #expect(statuses.allSatisfy { $0 == .applied })
        let changes = try await first.pull(for: ann, after: 0, limit: 1_000).changes
        #expect(changes.map(\.version) == Array(1...Int64(clients * pushes)))
        #expect(Set(changes.map(\.id)).count == clients * pushes)
        await second.close()
        await first.close()
    }

    /// A push whose user's counter another process moves between its read and its write is
    /// decided again, after that commit: it takes the next version. One that finds the counter
    /// moved at every try gives up after `maximumRetries` with `databaseUnavailable` (a 503) and
    /// applies nothing; sent again, it is applied.
    @Test func aPushDecidedAgainAfterOtherCommitsIsAppliedOnceOrGivesUpApplyingNothing() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let first = try await PostgresSyncDatabase(url: url, maximumConnections: 2, logger: logger)
        let second = try await PostgresSyncDatabase(url: url, maximumConnections: 2, logger: logger)
        let ann = try #require(try await first.user(forToken: first.addUser(named: "ann")))
        // Between each read and write of `first`, while any are left, `second` commits a push of ann's.
        let (interruptions, made) = (LockedValue(0), LockedValue(0))
        first.betweenReadAndWrite.withLock {
            $0 = {
                let interrupting = interruptions.withLock { left in
                    guard left > 0 else { return false }
                    left -= 1
                    return true
                }
                guard interrupting else { return }
                let index = made.withLock { made in
                    made += 1
                    return made
                }
                let other = Mutation(
                    mutationID: Int64(index), collection: "notes", id: "other-\(index)", baseVersion: nil, value: [:])
                let results = try await second.push([other], clientID: "laptop", for: ann)
                #expect(results.map(\.status) == [.applied])
            }
        }
        func note(_ mutationID: Int64, _ id: String) -> Mutation {
            Mutation(mutationID: mutationID, collection: "notes", id: id, baseVersion: nil, value: ["n": .integer(1)])
        }

        // The batch's write and the first try alone find the counter moved; the second try writes.
        interruptions.withLock { $0 = 2 }
        let applied = try await first.push([note(1, "mine")], clientID: "phone", for: ann)
        #expect(applied.map(\.status) == [.applied] && applied.map(\.version) == [3])

        // At every try: given up, nothing of it written.
        interruptions.withLock { $0 = .max }
        let before = made.withLock { $0 }
        await #expect {
            try await first.push([note(2, "given up")], clientID: "phone", for: ann)
        } throws: { error in
            guard case .databaseUnavailable? = error as? SyncServerError else { return false }
            return true
        }
        let interrupted = made.withLock { $0 } - before
        #expect(interrupted == 1 + PostgresSyncDatabase.maximumRetries, "the batch, then each try alone")
        let changes = try await first.pull(for: ann, after: 0, limit: 1_000).changes
        #expect(changes.map(\.version) == Array(1...Int64(3 + interrupted)))
        #expect(!changes.contains { $0.id == "given up" })

        // Sent again once the other process is quiet: applied, after everything it committed.
        interruptions.withLock { $0 = 0 }
        let again = try await first.push([note(2, "given up")], clientID: "phone", for: ann)
        #expect(again.map(\.status) == [.applied] && again.map(\.version) == [Int64(4 + interrupted)])
        await second.close()
        await first.close()
    }

    /// A push holds only its own user's counter row: while another transaction holds ann's, bob's
    /// pushes go through and ann's waits, then completes with the next version.
    @Test func aUsersPushWaitsOnlyForPushesOfTheSameUser() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let database = try await PostgresSyncDatabase(url: url, maximumConnections: 4, logger: logger)
        let ann = try #require(try await database.user(forToken: database.addUser(named: "ann")))
        let bob = try #require(try await database.user(forToken: database.addUser(named: "bob")))
        let holder = try await lockingUserRow(of: ann, at: url)

        let annPush = Task {
            try await database.push(
                [Mutation(mutationID: 1, collection: "notes", id: "a", baseVersion: nil, value: [:])], clientID: "c",
                for: ann
            )
        }
        for mutationID in 1...3 {
            let results = try await database.push(
                [
                    Mutation(
                        mutationID: Int64(mutationID), collection: "notes", id: "b\(mutationID)", baseVersion: nil,
                        value: [:])
                ],
                clientID: "c", for: bob
            )
            #expect(results.map(\.status) == [.applied])
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await database.pull(for: ann, after: 0, limit: 10).changes.isEmpty, "ann's push waits for the lock")

        try await holder.query("COMMIT", logger: logger)
        #expect(try await annPush.value.map(\.status) == [.applied])
        #expect(try await database.pull(for: ann, after: 0, limit: 10).changes.map(\.version) == [1])
        #expect(try await database.pull(for: bob, after: 0, limit: 10).changes.map(\.version) == [1, 2, 3])
        try await holder.close()
        await database.close()
    }

    /// The statement that locks a user's row also reads the user's records, as they were when it
    /// began: a push that waited for another transaction's lock must read again what that
    /// transaction committed, or it would create over a record it did not see.
    @Test func aPushThatWaitedForAnotherTransactionSeesWhatItCommitted() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let database = try await PostgresSyncDatabase(url: url, maximumConnections: 4, logger: logger)
        let ann = try #require(try await database.user(forToken: database.addUser(named: "ann")))
        let holder = try await lockingUserRow(of: ann, at: url)

        let annPush = Task {
            try await database.push(
                [
                    Mutation(
                        mutationID: 1, collection: "notes", id: "a", baseVersion: nil, value: ["by": .string("push")])
                ],
                clientID: "c", for: ann)
        }
        try await Task.sleep(for: .milliseconds(300))
        // What another server process's push of the same record commits meanwhile.
        try await holder.query(
            """
            INSERT INTO amber_sync_records
                (user_id, collection, id, version, created_version, value, field_versions, changed_at)
            VALUES (\(ann.id), 'notes', 'a', 1, 1, '{"by":"other"}', '{"by":1}', now())
            """, logger: logger)
        try await holder.query(
            "INSERT INTO amber_sync_history (user_id, version, tag) VALUES (\(ann.id), 1, 'other')", logger: logger)
        try await holder.query("UPDATE amber_sync_users SET version = 1 WHERE id = \(ann.id)", logger: logger)
        try await holder.query("COMMIT", logger: logger)

        let results = try await annPush.value
        #expect(results.map(\.status) == [.conflict])
        #expect(results.map(\.version) == [1])
        let changes = try await database.pull(for: ann, after: 0, limit: 10).changes
        #expect(changes.map(\.version) == [1])
        #expect(changes.first?.value == ["by": .string("other")])
        try await holder.close()
        await database.close()
    }

    /// A token this process looked up is remembered, so its pushes check it in their own
    /// transaction; one revoked through another process is refused there, and forgotten.
    @Test func aRememberedTokenIsCheckedByThePushAndForgottenOnceRevoked() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let database = try await PostgresSyncDatabase(url: url, maximumConnections: 4, logger: logger)
        let other = try await PostgresSyncDatabase(url: url, maximumConnections: 2, logger: logger)
        let token = try await database.addUser(named: "ann")
        #expect(database.rememberedUser(forToken: token) == nil)
        let ann = try #require(try await database.user(forToken: token))
        #expect(database.rememberedUser(forToken: token) == ann)
        #expect(database.rememberedUser(forToken: token + "x") == nil)

        let note = { (id: Int64) in
            Mutation(mutationID: id, collection: "notes", id: "n\(id)", baseVersion: nil, value: [:])
        }
        #expect(
            try await database.push([note(1)], clientID: "c", for: ann, checkingToken: token).map(\.status) == [
                .applied
            ])
        #expect(try await other.revokeToken(token))
        #expect(database.rememberedUser(forToken: token) == ann, "revoked elsewhere: this process cannot know")
        await #expect(throws: SyncServerError.unauthorized) {
            try await database.push([note(2)], clientID: "c", for: ann, checkingToken: token)
        }
        #expect(database.rememberedUser(forToken: token) == nil)
        #expect(try await database.pull(for: ann, after: 0, limit: 10).changes.map(\.id) == ["n1"])

        // Revoked here: forgotten at once.
        let second = try await database.addToken(forUserNamed: "ann")
        #expect(try await database.user(forToken: second) == ann)
        #expect(try await database.revokeToken(second))
        #expect(database.rememberedUser(forToken: second) == nil)
        await other.close()
        await database.close()
    }

    @Test func theRecordsTableIsAnalyzedAfterAsManyAsItHeldOrTheMinimumIsWritten() {
        let statistics = RecordStatistics()
        statistics.minimumWrites = 100
        #expect(!statistics.wrote(99))
        #expect(statistics.wrote(1), "100 written")
        #expect(!statistics.wrote(200), "one analysis at a time")
        statistics.analyzed(rows: 5_000)
        #expect(!statistics.wrote(4_799), "the 200 written during the analysis count: 4,999 of 5,000")
        #expect(statistics.wrote(1))
        statistics.analyzed(rows: nil)
        #expect(!statistics.wrote(4_999), "a failed analysis keeps the table's last size")
        #expect(statistics.wrote(1))
        statistics.analyzed(rows: 20)
        #expect(!statistics.wrote(99), "never below the minimum")
        #expect(statistics.wrote(1))
    }

    /// A process that pushed many records analyzes the records table itself, so that the next
    /// pulls read their pages through the index rather than after autovacuum's next round.
    @Test func aProcessThatPushedManyRecordsAnalyzesTheirTable() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let database = try await PostgresSyncDatabase(url: url, logger: logger)
        database.recordStatistics.minimumWrites = 500
        let ann = try #require(try await database.user(forToken: database.addUser(named: "ann")))
        func push(_ ids: ClosedRange<Int>) async throws {
            let mutations = ids.map {
                Mutation(
                    mutationID: Int64($0), collection: "notes", id: "n\($0)", baseVersion: nil,
                    value: ["n": .integer(Int64($0))])
            }
            #expect(
                try await database.push(mutations, clientID: "phone", for: ann).allSatisfy { $0.status == .applied })
        }
        // Analyses this process ran (autovacuum's are counted apart), and the rows they found.
        func analyses() throws -> (count: Int, rows: Double) {
            let line = try PostgresTestServer.psql(
                url,
                """
                SELECT s.analyze_count || ' ' || c.reltuples FROM pg_stat_user_tables s
                JOIN pg_class c ON c.oid = s.relid WHERE s.relname = 'amber_sync_records'
                """
            ).trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
            return (Int(line.first ?? "") ?? -1, Double(line.last ?? "") ?? -1)
        }
        try await push(1...300)
        try await Task.sleep(for: .milliseconds(300))
        #expect(try analyses().count == 0, "300 records are below the minimum")
        try await push(301...600)
        let deadline = ContinuousClock.now + .seconds(15)
        while try analyses().count == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        let (count, rows) = try analyses()
        #expect(count == 1 && rows == 600, "\(count) analyses, \(rows) rows")
        // The columns of the index a pull reads, and, unless autovacuum analyzed the table
        // meanwhile, no other: sorting the sample of the text columns was most of the cost.
        let columns = try PostgresTestServer.psql(
            url,
            """
            SELECT coalesce(string_agg(attname, ',' ORDER BY attname), '') || ' ' || (
                SELECT autoanalyze_count FROM pg_stat_user_tables WHERE relname = 'amber_sync_records')
            FROM pg_stats WHERE tablename = 'amber_sync_records'
            """
        ).trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
        let analyzed = Set((columns.first ?? "").split(separator: ",").map(String.init))
        if columns.last == "0" {
            #expect(analyzed == ["user_id", "version"])
        } else {
            #expect(analyzed.isSuperset(of: ["user_id", "version"]), "\(analyzed)")
        }
        await database.close()
    }

    @Test func pushesThatWaitTogetherCommitTogetherAndEachGetsItsOwnAnswer() async throws {
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }
        let database = try await PostgresSyncDatabase(url: url, maximumConnections: 4, logger: logger)
        var users: [SyncUser] = []
        for name in ["ann", "bob", "cat", "dan"] {
            users.append(try #require(try await database.user(forToken: database.addUser(named: name))))
        }
        // Four users, three clients each, ten pushes a client, all at once.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for user in users {
                for client in ["phone", "tablet", "laptop"] {
                    group.addTask {
                        for mutationID in 1...10 {
                            let results = try await database.push(
                                [
                                    Mutation(
                                        mutationID: Int64(mutationID), collection: "notes",
                                        id: "\(client)-\(mutationID)",
                                        baseVersion: nil, value: ["n": .integer(Int64(mutationID))])
                                ], clientID: client, for: user)
                            #expect(results.map(\.status) == [.applied])
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        // Each user's versions are 1...30, one per push, whatever batch each push was in, and each
        // client's pushes got increasing versions, in the order it sent them.
        for user in users {
            let changes = try await database.pull(for: user, after: 0, limit: 100).changes
            #expect(changes.map(\.version) == Array(1...30))
            #expect(Set(changes.map(\.id)).count == 30)
            for client in ["phone", "tablet", "laptop"] {
                let ids = changes.map(\.id).filter { $0.hasPrefix("\(client)-") }
                #expect(ids == (1...10).map { "\(client)-\($0)" }, "\(user.name) \(client)")
            }
        }
        let applied = database.pushTransactions
        #expect(applied.pushes == 120)
        #expect(applied.transactions < 120, "\(applied.transactions) transactions for 120 pushes")

        // A copied phone's different mutation under an answered id is refused alone; the pushes
        // of the same batch are applied.
        let ann = users[0]
        async let copied: (any Error)? = {
            do {
                _ = try await database.push(
                    [Mutation(mutationID: 10, collection: "notes", id: "other", baseVersion: nil, value: [:])],
                    clientID: "phone", for: ann)
                return nil
            } catch {
                return error
            }
        }()
        async let others = withThrowingTaskGroup(of: [MutationResult].self) { group in
            for user in users {
                group.addTask {
                    try await database.push(
                        [Mutation(mutationID: 11, collection: "notes", id: "late", baseVersion: nil, value: [:])],
                        clientID: "tablet", for: user)
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let refused = await copied
        guard case SyncServerError.clientIDReused = try #require(refused) else {
            Issue.record("refused with \(String(describing: refused))")
            return
        }
        #expect(try await others.map(\.status) == Array(repeating: .applied, count: 4))
        #expect(try await database.pull(for: ann, after: 30, limit: 10).changes.map(\.id) == ["late"])
        await database.close()
    }
}
