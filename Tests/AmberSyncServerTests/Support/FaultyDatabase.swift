import AmberLock
import AmberSyncProtocol
import AmberSyncServer
import Foundation

/// A database that forwards to another one, except that the operations given a fault throw it.
struct FaultyDatabase: SyncDatabase {
    let base: any SyncDatabase
    var pushFault: (any Error)?
    var pullFault: (any Error)?

    var changeNotifier: ChangeNotifier { base.changeNotifier }

    func migrate() async throws { try await base.migrate() }

    func addUser(named name: String) async throws -> String { try await base.addUser(named: name) }

    func addToken(forUserNamed name: String) async throws -> String { try await base.addToken(forUserNamed: name) }

    func revokeToken(_ token: String) async throws -> Bool { try await base.revokeToken(token) }

    func user(forToken token: String) async throws -> SyncUser? { try await base.user(forToken: token) }
    func user(forSubject subject: String, issuer: String) async throws -> SyncUser {
        try await base.user(forSubject: subject, issuer: issuer)
    }

    func push(_ mutations: [Mutation], clientID: String, for user: SyncUser) async throws -> [MutationResult] {
        if let pushFault { throw pushFault }
        return try await base.push(mutations, clientID: clientID, for: user)
    }

    func pull(for user: SyncUser, after cursor: Int64, limit: Int, maximumBytes: Int) async throws -> PullResponse {
        if let pullFault { throw pullFault }
        return try await base.pull(for: user, after: cursor, limit: limit, maximumBytes: maximumBytes)
    }

    func prune(deletionsOlderThan date: Date) async throws -> Int { try await base.prune(deletionsOlderThan: date) }

    func databaseID() async throws -> String { try await base.databaseID() }

    func historyTag(for user: SyncUser, at version: Int64) async throws -> String? {
        try await base.historyTag(for: user, at: version)
    }

    func historyTags(for user: SyncUser, at versions: [Int64]) async throws -> [String?] {
        try await base.historyTags(for: user, at: versions)
    }
}

/// An error a database might throw that is not about the request: the disk is full.
struct DiskFull: Error {}

/// A database that forwards to another one, counting pulls (making each take `pullDelay`) and
/// token lookups.
struct CountingDatabase: SyncDatabase {
    let base: any SyncDatabase
    let pullDelay: Duration
    let pulls = PullCount()
    let tokenLookups = PullCount()
    /// Calls of `historyTag` and of `historyTags`, each one look-up.
    let historyLookups = PullCount()

    final class PullCount: Sendable {
        private let count = LockedValue(0)
        var value: Int { count.withLock { $0 } }
        func increment() { count.withLock { $0 += 1 } }
    }

    var changeNotifier: ChangeNotifier { base.changeNotifier }

    func migrate() async throws { try await base.migrate() }

    func addUser(named name: String) async throws -> String { try await base.addUser(named: name) }

    func addToken(forUserNamed name: String) async throws -> String { try await base.addToken(forUserNamed: name) }

    func revokeToken(_ token: String) async throws -> Bool { try await base.revokeToken(token) }

    func user(forToken token: String) async throws -> SyncUser? {
        tokenLookups.increment()
        return try await base.user(forToken: token)
    }
    func user(forSubject subject: String, issuer: String) async throws -> SyncUser {
        try await base.user(forSubject: subject, issuer: issuer)
    }

    func push(_ mutations: [Mutation], clientID: String, for user: SyncUser) async throws -> [MutationResult] {
        try await base.push(mutations, clientID: clientID, for: user)
    }

    func pull(for user: SyncUser, after cursor: Int64, limit: Int, maximumBytes: Int) async throws -> PullResponse {
        pulls.increment()
        try await Task.sleep(for: pullDelay)
        return try await base.pull(for: user, after: cursor, limit: limit, maximumBytes: maximumBytes)
    }

    func prune(deletionsOlderThan date: Date) async throws -> Int { try await base.prune(deletionsOlderThan: date) }

    func databaseID() async throws -> String { try await base.databaseID() }

    func historyTag(for user: SyncUser, at version: Int64) async throws -> String? {
        historyLookups.increment()
        return try await base.historyTag(for: user, at: version)
    }

    func historyTags(for user: SyncUser, at versions: [Int64]) async throws -> [String?] {
        historyLookups.increment()
        return try await base.historyTags(for: user, at: versions)
    }
}

/// Makes a harness's database a ``CountingDatabase`` (`withHarness(_:wrap:)`) and keeps it for
/// the test to read its counts.
final class CountingWrap: Sendable {
    private let made = LockedValue<CountingDatabase?>(nil)
    private let pullDelay: Duration

    init(pullDelay: Duration = .zero) {
        self.pullDelay = pullDelay
    }

    /// The harness's `wrap`.
    func wrap(_ base: any SyncDatabase) -> any SyncDatabase {
        let database = CountingDatabase(base: base, pullDelay: pullDelay)
        made.withLock { $0 = database }
        return database
    }

    /// The database `wrap` made, once the harness has started.
    var database: CountingDatabase? { made.withLock { $0 } }
}
