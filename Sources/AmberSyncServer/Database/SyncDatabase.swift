import AmberSyncProtocol
import Foundation

/// Where a sync server keeps users, tokens and records: the one protocol every backend implements.
///
/// The rules of the wire protocol live outside backends: ``MutationResolver`` decides what a
/// mutation does, ``PushValidation`` checks input, and the HTTP layer waits for changes with
/// ``changeNotifier``. A backend stores, counts versions and keeps each push in one transaction.
///
/// ```swift
/// let database = try SQLiteSyncDatabase(path: "amber-sync.sqlite")
/// let token = try await database.addUser(named: "ann")
/// let ann = try await database.user(forToken: token)!
/// let results = try await database.push(mutations, clientID: "phone", for: ann)
/// let page = try await database.pull(for: ann, after: 0, limit: 1_000)
/// ```
public protocol SyncDatabase: Sendable {
    /// Wakes pulls waiting for a user's changes; the server signals it after each push commits.
    var changeNotifier: ChangeNotifier { get }

    /// Brings the database's schema up to date; does nothing when it already is.
    ///
    /// - Throws: ``SyncServerError/schemaTooNew(path:found:supported:)`` when the database was
    ///   written by a newer server, leaving it untouched.
    func migrate() async throws

    /// Creates a user and a first token for it.
    ///
    /// - Parameter name: A unique name, 1 to 256 bytes without control characters.
    /// - Returns: The new bearer token. Only its hash is stored: this is the one chance to see it.
    /// - Throws: ``SyncServerError/userExists(_:)`` or ``SyncServerError/invalidUserName(_:)``.
    func addUser(named name: String) async throws -> String

    /// Creates another token for an existing user, for example for a second device.
    ///
    /// - Parameter name: The user's name.
    /// - Returns: The new bearer token.
    /// - Throws: ``SyncServerError/unknownUser(_:)`` when there is no such user.
    func addToken(forUserNamed name: String) async throws -> String

    /// Revokes a token: requests carrying it are refused from now on.
    ///
    /// - Parameter token: The bearer token.
    /// - Returns: Whether the token existed.
    func revokeToken(_ token: String) async throws -> Bool

    /// The user a bearer token belongs to, looked up on every request so revocations apply at once.
    ///
    /// - Parameter token: The bearer token a request carries.
    /// - Returns: The token's user, or `nil` for an unknown or revoked token.
    func user(forToken token: String) async throws -> SyncUser?

    /// The user of a verified JWT's subject, created the first time the subject is seen.
    ///
    /// Each (issuer, subject) pair is one user, the same for every token and device of the
    /// subject. Its name is `jwt`, the issuer and the subject, separated by tabs: no name given to `amber-sync user add` can be one, so an operator's user "ann" and a JWT
    /// subject "ann" are never the same user.
    ///
    /// - Parameters:
    ///   - subject: The value of the token's user claim.
    ///   - issuer: The token's `iss`, or the empty string.
    /// - Returns: The subject's user.
    func user(forSubject subject: String, issuer: String) async throws -> SyncUser

    /// Applies a client's mutations, in order, in one transaction.
    ///
    /// Each mutation is decided by ``MutationResolver``; each applied one gets the user's next
    /// version. A mutation whose `(clientID, mutationID)` was processed before is answered with
    /// the stored result and not applied again. Results of `clientID` with a `mutationID` below the
    /// smallest in `mutations` may be forgotten: the client sends a new batch only after its
    /// previous one was answered.
    ///
    /// - Parameters:
    ///   - mutations: Mutations with increasing ids, valid by ``PushValidation``.
    ///   - clientID: The client that sends them.
    ///   - user: The user whose records they change.
    /// - Returns: One result per mutation, in the same order.
    /// - Throws: ``SyncServerError/invalidRequest(_:)`` for invalid mutations, changing nothing.
    func push(_ mutations: [Mutation], clientID: String, for user: SyncUser) async throws -> [MutationResult]

    /// The user a bearer token belonged to when this process last looked it up, without reading
    /// the database; `nil` when this process does not know the token.
    ///
    /// A push whose token this answers is sent to ``push(_:clientID:for:checkingToken:)``, which
    /// checks the token again as part of the push, instead of looking it up on its own first.
    ///
    /// - Parameter token: The bearer token a request carries.
    /// - Returns: The user the token belonged to, or `nil`.
    func rememberedUser(forToken token: String) -> SyncUser?

    /// Applies a client's mutations as ``push(_:clientID:for:)`` does, once it has checked that
    /// `token` still belongs to `user`.
    ///
    /// A backend may check the token in the push's own transaction, saving a look-up of its own:
    /// a token revoked before the push began is refused all the same.
    ///
    /// - Parameters:
    ///   - mutations: Mutations with increasing ids, valid by ``PushValidation``.
    ///   - clientID: The client that sends them.
    ///   - user: The user ``rememberedUser(forToken:)`` gave for `token`.
    ///   - token: The bearer token the request carries.
    /// - Returns: One result per mutation, in the same order.
    /// - Throws: ``SyncServerError/unauthorized`` when `token` no longer belongs to `user`, changing
    ///   nothing; ``SyncServerError/invalidRequest(_:)`` for invalid mutations.
    func push(_ mutations: [Mutation], clientID: String, for user: SyncUser, checkingToken token: String) async throws
        -> [MutationResult]

    /// The user's changes after `cursor`, in version order, each record once in its latest state.
    ///
    /// - Parameters:
    ///   - user: The user whose records to read.
    ///   - cursor: The last version the client has seen; 0 for everything.
    ///   - limit: The most changes to return, 1 to `SyncLimits.maximumPullLimit`.
    ///   - maximumBytes: The most bytes of record values to return: the page ends before the
    ///     change that would pass it (with `hasMore`), but holds at least one change.
    /// - Returns: The changes, the cursor to pass next (the last change's version, or `cursor`
    ///   when there is none) and whether more changes follow.
    /// - Throws: ``SyncServerError/cursorExpired(cursor:prunedThrough:)`` when `cursor` is above
    ///   0 but older than deletions that ``prune(deletionsOlderThan:)`` forgot.
    func pull(for user: SyncUser, after cursor: Int64, limit: Int, maximumBytes: Int) async throws -> PullResponse

    /// The database's identity: a random name made when its tables were created, sent with every
    /// answer (header `Amber-Database-ID`) so that clients notice a replaced database.
    func databaseID() async throws -> String

    /// The tag of the user's history at `version`: that of the push that made the version (the
    /// first push whose last version is at or after it).
    ///
    /// Each push that changes records gets a random tag. A database restored from a backup hands
    /// out the same versions again under other tags, so a client's cursor and the tag it got
    /// with it tell whether the server still has the history the client followed.
    ///
    /// - Parameters:
    ///   - user: The user whose history to read.
    ///   - version: A version above 0.
    /// - Returns: The tag, or `nil` when the user's history does not reach `version`.
    func historyTag(for user: SyncUser, at version: Int64) async throws -> String?

    /// The tags of the user's history at several versions, as ``historyTag(for:at:)`` gives
    /// each, read together: a push answer checks the client's cursor and tags its new one with a
    /// single look-up.
    ///
    /// - Parameters:
    ///   - user: The user whose history to read.
    ///   - versions: Versions above 0.
    /// - Returns: One tag per version, in the same order; `nil` where the history does not reach it.
    func historyTags(for user: SyncUser, at versions: [Int64]) async throws -> [String?]

    /// Forgets deleted records whose deletion is older than `date`.
    ///
    /// Clients whose cursor is older than a forgotten deletion must pull again from 0.
    ///
    /// - Parameter date: Deletions before this moment are forgotten.
    /// - Returns: How many deleted records were forgotten.
    func prune(deletionsOlderThan date: Date) async throws -> Int
}

extension SyncDatabase {
    /// No user: a backend that does not check tokens as part of a push looks each one up.
    ///
    /// - Parameter token: The bearer token a request carries.
    /// - Returns: `nil`.
    public func rememberedUser(forToken token: String) -> SyncUser? {
        nil
    }

    /// Looks `token` up, then applies the push with ``push(_:clientID:for:)``.
    ///
    /// - Parameters:
    ///   - mutations: Mutations with increasing ids, valid by ``PushValidation``.
    ///   - clientID: The client that sends them.
    ///   - user: The user `token` belonged to.
    ///   - token: The bearer token the request carries.
    /// - Returns: One result per mutation, in the same order.
    /// - Throws: ``SyncServerError/unauthorized`` when `token` no longer belongs to `user`.
    public func push(_ mutations: [Mutation], clientID: String, for user: SyncUser, checkingToken token: String)
        async throws -> [MutationResult]
    {
        guard try await self.user(forToken: token)?.id == user.id else { throw SyncServerError.unauthorized }
        return try await push(mutations, clientID: clientID, for: user)
    }

    /// The user's changes after `cursor`, at most `limit` of them and at most the default
    /// request body size (`SyncLimits.defaultMaximumBody`) of record values.
    ///
    /// - Parameters:
    ///   - user: The user whose records to read.
    ///   - cursor: The last version the client has seen; 0 for everything.
    ///   - limit: The most changes to return, 1 to `SyncLimits.maximumPullLimit`.
    /// - Returns: The changes, the cursor to pass next and whether more changes follow.
    /// - Throws: ``SyncServerError/cursorExpired(cursor:prunedThrough:)`` as
    ///   ``pull(for:after:limit:maximumBytes:)`` does.
    public func pull(for user: SyncUser, after cursor: Int64, limit: Int) async throws -> PullResponse {
        try await pull(for: user, after: cursor, limit: limit, maximumBytes: SyncLimits.defaultMaximumBody)
    }

    /// Each version's tag from ``historyTag(for:at:)``, one look-up after another: a backend that
    /// can read them together implements this itself.
    ///
    /// - Parameters:
    ///   - user: The user whose history to read.
    ///   - versions: Versions above 0.
    /// - Returns: One tag per version, in the same order; `nil` where the history does not reach it.
    public func historyTags(for user: SyncUser, at versions: [Int64]) async throws -> [String?] {
        var tags: [String?] = []
        for version in versions { tags.append(try await historyTag(for: user, at: version)) }
        return tags
    }
}
