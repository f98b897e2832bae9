import AmberSyncProtocol

/// An error of the sync server library: bad input, an unknown user, or a database it cannot use.
///
/// The HTTP layer answers each with its status (``httpStatusCode``) and ``description`` as the
/// `{"error": ...}` sentence.
public enum SyncServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A request that breaks a rule of the wire protocol; the sentence says which.
    case invalidRequest(String)
    /// A request body larger than the server accepts.
    case bodyTooLarge(limit: Int)
    /// A request without a known, unrevoked bearer token.
    case unauthorized
    /// A JWT that does not verify: its signature, algorithm, key, expiry or claims; the sentence
    /// says which, never quoting the token or a key.
    case invalidToken(String)
    /// A JWT that cannot be checked yet: the keys of the JWKS URL have not arrived.
    case authenticationUnavailable(String)
    /// JWT settings that cannot be used, such as a key file holding no key.
    case invalidJWTConfiguration(String)
    /// A pull whose cursor is older than the deletions the server still remembers.
    case cursorExpired(cursor: Int64, prunedThrough: Int64)
    /// A pull whose cursor is not in the server's history: the database was restored from a
    /// backup or replaced since the client got it.
    case historyChanged(cursor: Int64)
    /// A push that reuses a mutation id of its client id for a different mutation: two devices
    /// share one client id (one was copied from the other). Nothing was applied.
    case clientIDReused(clientID: String, mutationID: Int64)
    /// `user add` of a name that is taken.
    case userExists(String)
    /// A user name that is empty, too long, or holds control characters.
    case invalidUserName(String)
    /// A token asked for a user that does not exist.
    case unknownUser(String)
    /// A database file written by a newer `amber-sync`, left untouched.
    case schemaTooNew(path: String, found: Int, supported: Int)
    /// A file that is not an `amber-sync` database, left untouched.
    case notASyncDatabase(path: String, reason: String)
    /// A database address that cannot be used, such as a `postgres://` URL without a host.
    case invalidDatabaseURL(String, reason: String)
    /// A database server that could not be reached or refused the connection.
    case databaseUnavailable(location: String, reason: String)
    /// A pull that would wait while `limit` pulls already wait: of its user (`perUser`) or of all users.
    case tooManyWaitingPulls(limit: Int, perUser: Bool)
    /// A `PUT` of an attachment that resumes at `sent` bytes when the server holds `held` bytes
    /// of the user's upload of it. Nothing was written.
    case uploadOffsetMismatch(hash: String, held: Int64, sent: Int64)
    /// A `PUT` of an attachment while another request writes the same user's upload of it.
    case uploadInProgress(hash: String)

    /// The HTTP status a request failing with this error is answered with.
    public var httpStatusCode: Int {
        switch self {
        case .invalidRequest, .invalidUserName: 400
        case .bodyTooLarge: 413
        case .unauthorized, .invalidToken: 401
        case .authenticationUnavailable: 503
        case .invalidJWTConfiguration: 500
        case .cursorExpired, .historyChanged: 410
        case .clientIDReused: 409
        case .userExists: 409
        case .unknownUser: 404
        case .schemaTooNew, .notASyncDatabase, .invalidDatabaseURL: 500
        case .databaseUnavailable: 503
        case .tooManyWaitingPulls: 429
        case .uploadOffsetMismatch, .uploadInProgress: 409
        }
    }

    /// One readable sentence naming what is wrong.
    public var description: String {
        switch self {
        case .invalidRequest(let sentence):
            sentence
        case .bodyTooLarge(let limit):
            "The request body is larger than the server's limit of \(limit) bytes."
        case .unauthorized:
            "A valid bearer token is required: send `Authorization: Bearer TOKEN` with a token from `amber-sync user add` or `amber-sync token add`."
        case .invalidToken(let sentence), .authenticationUnavailable(let sentence):
            sentence
        case .invalidJWTConfiguration(let reason):
            "The JWT settings cannot be used: \(reason)."
        case .cursorExpired(let cursor, let prunedThrough):
            "The cursor \(cursor) is older than the deletions this server still remembers (pruned through version \(prunedThrough)); pull again from cursor 0."
        case .historyChanged(let cursor):
            "The cursor \(cursor) is not in this server's history (its database was restored from a backup or replaced); pull again from cursor 0 and push back what the server lacks."
        case .clientIDReused(let clientID, let mutationID):
            "The client id \(clientID) already sent a different mutation \(mutationID): another device uses the same client id. Nothing was applied; take a new client id and push again."
        case .userExists(let name):
            "A user named \"\(name)\" already exists."
        case .invalidUserName(let name):
            "The user name \"\(name)\" is not valid: use 1 to \(SyncUserName.maximumLength) bytes without control characters."
        case .unknownUser(let name):
            "There is no user named \"\(name)\"."
        case .schemaTooNew(let path, let found, let supported):
            "The database \(path) has schema version \(found), newer than the \(supported) this amber-sync knows; it was left untouched. Use a newer amber-sync."
        case .notASyncDatabase(let path, let reason):
            "The file \(path) is not an amber-sync database (\(reason)); it was left untouched."
        case .invalidDatabaseURL(let url, let reason):
            "The database address \(url) cannot be used: \(reason)."
        case .databaseUnavailable(let location, let reason):
            "The database \(location) is unavailable: \(reason)."
        case .tooManyWaitingPulls(let limit, let perUser):
            perUser
                ? "This user already has \(limit) pulls waiting for changes, the most the server holds; pull without `wait`, or try again later."
                : "The server already holds \(limit) pulls waiting for changes, the most it holds; try again later."
        case .uploadOffsetMismatch(let hash, let held, let sent):
            "The server holds \(held) bytes of this user's upload of attachment \(hash), so it cannot continue at byte \(sent); send the rest with Content-Range: bytes \(held)-LAST/SIZE, or the whole file without Content-Range. Nothing was written."
        case .uploadInProgress(let hash):
            "Another request is uploading attachment \(hash) for this user; try again once it ends."
        }
    }
}

extension SyncServerError {
    /// The `code` of the answer, for errors a client recovers from by itself (`SyncErrorCode`).
    var code: String? {
        switch self {
        case .cursorExpired: SyncErrorCode.cursorExpired
        case .historyChanged: SyncErrorCode.historyChanged
        case .clientIDReused: SyncErrorCode.clientIDReused
        default: nil
        }
    }

    /// Whether the answer tells the client to pull again from 0 (`"reset": true`).
    var isReset: Bool {
        httpStatusCode == 410
    }

    /// Whether a client should try again later: the answer carries `Retry-After`.
    var isTemporary: Bool {
        switch self {
        case .databaseUnavailable, .tooManyWaitingPulls, .uploadInProgress: true
        default: false
        }
    }

    /// The sentence a client is answered with: ``description``, but without the database's
    /// address or driver text, which only the server's log gets.
    var clientSentence: String {
        if case .databaseUnavailable = self {
            return "The server's database is unavailable; try again in a few seconds."
        }
        return description
    }

    /// Whether the error is about the request or the command (a `4xx`), not a failure of the database.
    var isInputError: Bool {
        httpStatusCode < 500
    }
}
