import AmberSyncServer
import ArgumentParser
import Foundation
import Logging

/// The options of `amber-sync serve` that accept the app's own JWTs beside operator tokens.
struct JWTOptions: ParsableArguments {
    @Option(
        name: .customLong("jwks-url"),
        help: "Verify JWTs with the keys of this JWKS document (https, or http on loopback).")
    var jwksURL: String?

    @Option(
        name: .customLong("jwks-refresh"),
        help:
            "Fetch the JWKS document again every this many seconds; an unknown kid also fetches it (once a minute at most)."
    )
    var jwksRefresh = 3600

    @Option(
        name: .customLong("jwt-key"),
        help: "A PEM public key (RSA, EC, Ed25519) or a JWKS file to verify JWTs with; may be given several times.")
    var keyFiles: [String] = []

    @Option(
        name: .customLong("jwt-secret-file"),
        help: "A file holding an HMAC secret (HS256/384/512) of at least 32 bytes, to verify JWTs with.")
    var secretFiles: [String] = []

    @Option(name: .customLong("jwt-issuer"), help: "The `iss` every JWT must carry.")
    var issuer: String?

    @Option(
        name: .customLong("jwt-audience"),
        help: "An audience a JWT's `aud` must contain; may be given several times (any one suffices).")
    var audiences: [String] = []

    @Option(name: .customLong("jwt-user-claim"), help: "The JWT claim naming the user.")
    var userClaim = "sub"

    func validate() throws {
        guard jwksRefresh > 0 else { throw ValidationError("--jwks-refresh must be a positive number of seconds.") }
        if let jwksURL, URL(string: jwksURL)?.host == nil {
            throw ValidationError("--jwks-url must be a URL such as https://example.com/.well-known/jwks.json.")
        }
        guard !userClaim.isEmpty else { throw ValidationError("--jwt-user-claim must name a claim.") }
        if jwksURL == nil && keyFiles.isEmpty && secretFiles.isEmpty
            && (issuer != nil || !audiences.isEmpty || userClaim != "sub")
        {
            throw ValidationError(
                "--jwt-issuer, --jwt-audience and --jwt-user-claim need --jwks-url, --jwt-key or --jwt-secret-file.")
        }
    }

    /// The verifier these options ask for; `nil` when they name no keys.
    func makeVerifier(logger: Logger) async throws -> JWTVerifier? {
        var configuration = JWTConfiguration()
        configuration.jwksURL = jwksURL.flatMap(URL.init(string:))
        configuration.jwksRefreshInterval = .seconds(jwksRefresh)
        configuration.keyFiles = keyFiles
        configuration.secretFiles = secretFiles
        configuration.issuer = issuer
        configuration.audiences = audiences
        configuration.userClaim = userClaim
        guard configuration.hasKeys else { return nil }
        return try await JWTVerifier(configuration: configuration, logger: logger)
    }
}
