import Foundation

/// Why sync could not finish: the server refused the token, answered with an error, could not be
/// reached, or said something this client does not understand.
///
/// Nothing local is lost when sync fails: local changes stay pending and are pushed by a later
/// sync.
public struct SyncError: Error, CustomStringConvertible, Sendable {
    /// The kind of failure.
    public enum Kind: Sendable, Equatable {
        /// The server refused the token (HTTP 401): unknown, revoked, missing or expired, also
        /// after the token provider gave a fresh one; or the token provider failed.
        case unauthorized
        /// The server answered with this HTTP status and an error message.
        case server(status: Int)
        /// The server could not be reached (no network, connection refused, timed out).
        case offline
        /// The server's answer was not what the protocol says.
        case protocolViolation
        /// The local database could not be read or written.
        case storage
        /// The client was used in a way it does not support (a store of another storage, say).
        case misuse
    }

    /// The kind of failure.
    public let kind: Kind
    /// One readable sentence.
    public let message: String
    /// The error that caused this one, if any (a `URLError`, a `StoreError`, GRDB's `DatabaseError`).
    public let underlyingError: (any Error)?

    /// The server's `code` for an error the client recovers from by itself (`SyncErrorCode`).
    let code: String?
    /// For a changed server database: its new identity.
    let databaseID: String?

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, underlyingError: (any Error)? = nil) {
        self.init(kind, message, code: nil, underlyingError: underlyingError)
    }

    init(
        _ kind: Kind, _ message: String, code: String?, databaseID: String? = nil, underlyingError: (any Error)? = nil
    ) {
        self.kind = kind
        self.message = message
        self.code = code
        self.databaseID = databaseID
        self.underlyingError = underlyingError
    }

    /// The message, prefixed by the kind of failure.
    public var description: String {
        switch kind {
        case .unauthorized: "sync: the server refused the token: \(message)"
        case .server(let status): "sync: the server answered \(status): \(message)"
        case .offline: "sync: the server is unreachable: \(message)"
        case .protocolViolation: "sync: unexpected answer from the server: \(message)"
        case .storage: "sync: local database: \(message)"
        case .misuse: "sync: \(message)"
        }
    }
}
