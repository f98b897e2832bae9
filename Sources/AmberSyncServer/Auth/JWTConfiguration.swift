import Foundation

/// How the sync server accepts the app's own sign-in: JWTs, verified with the keys of the app's
/// identity provider, beside the operator's tokens.
///
/// The keys come from a JWKS document at a URL (fetched at start, again every
/// ``jwksRefreshInterval`` and for a token with an unknown `kid`), from key files (PEM public
/// keys or JWKS documents), or from a shared HMAC secret. The claim ``userClaim`` names the user:
/// each subject gets a namespace of its own, created on first sight.
///
/// ```swift
/// var configuration = JWTConfiguration()
/// configuration.jwksURL = URL(string: "https://example.auth0.com/.well-known/jwks.json")
/// configuration.issuer = "https://example.auth0.com/"
/// configuration.audiences = ["https://notes.example.com"]
/// let verifier = try await JWTVerifier(configuration: configuration)
/// let server = SyncServer(database: database, jwtVerifier: verifier)
/// ```
public struct JWTConfiguration: Sendable {
    /// Where the JWKS document is published; `https`, or `http` on a loopback address.
    public var jwksURL: URL?
    /// How often the JWKS document is fetched again; keys it no longer lists stop being accepted.
    public var jwksRefreshInterval: Duration = .seconds(3600)
    /// Files holding a PEM public key (RSA, EC or Ed25519) or a JWKS document.
    public var keyFiles: [String] = []
    /// Files holding an HMAC secret (HS256, HS384, HS512), its bytes as written, less the
    /// whitespace at either end.
    public var secretFiles: [String] = []
    /// The `iss` every token must carry; any when `nil`.
    public var issuer: String?
    /// The audiences a token's `aud` must name one of; any when empty.
    public var audiences: [String] = []
    /// The claim naming the user.
    public var userClaim = "sub"
    /// How far `exp` and `nbf` may be off, for clocks that differ.
    public var leeway: Duration = .seconds(60)
    /// The least time between two fetches of the JWKS document for tokens with an unknown `kid`.
    public var unknownKIDRefetchInterval: Duration = .seconds(60)

    /// A configuration with no keys; set at least one of ``jwksURL``, ``keyFiles`` or ``secretFiles``.
    public init() {}

    /// Whether any keys are configured.
    public var hasKeys: Bool {
        jwksURL != nil || !keyFiles.isEmpty || !secretFiles.isEmpty
    }
}

/// What a verified JWT says: whose it is and until when it holds.
public struct VerifiedToken: Sendable, Equatable {
    /// The value of the user claim.
    public let subject: String
    /// The token's `iss`, or the empty string when it has none.
    public let issuer: String
    /// The token's `exp`, when it has one.
    public let expiry: Date?
}
