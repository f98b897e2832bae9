import Hummingbird

/// Refuses requests without a known bearer token (`401`) and records the token's user in the context.
///
/// The token is looked up in the database on every request, so a token revoked by another
/// process is refused from its next request on. With a ``JWTVerifier``, a JWT is verified instead
/// and its subject's user found (or created) in the database.
///
/// In front of pushes (``checksTokenWithPush``), a token whose user the database remembers is
/// not looked up here: the push checks it in its own transaction
/// (``SyncDatabase/push(_:clientID:for:checkingToken:)``), and the route checks it before
/// answering anything else.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext
    let database: any SyncDatabase
    let metrics: SyncServerMetrics
    var jwtVerifier: JWTVerifier?
    /// Whether a token the database remembers is left for the push to check.
    var checksTokenWithPush = false

    func handle(
        _ request: Request, context: SyncRequestContext, next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let token = Self.bearerToken(in: request.headers[.authorization]) else {
            throw SyncServerError.unauthorized
        }
        var context = context
        if let jwtVerifier, JWTVerifier.looksLikeJWT(token) {
            let verified = try await jwtVerifier.verify(token)
            context.user = try await metrics.database(.authenticate) {
                try await database.user(forSubject: verified.subject, issuer: verified.issuer)
            }
            context.tokenExpiry = verified.expiry
            return try await next(request, context)
        }
        if checksTokenWithPush, let user = database.rememberedUser(forToken: token) {
            context.user = user
            context.uncheckedToken = token
            return try await next(request, context)
        }
        guard let user = try await metrics.database(.authenticate, { try await database.user(forToken: token) })
        else { throw SyncServerError.unauthorized }
        context.user = user
        return try await next(request, context)
    }

    /// The token of an `Authorization: Bearer TOKEN` header; the scheme is case-insensitive, and
    /// spaces and tabs around the token are not part of it.
    ///
    /// Read byte by byte: every request reads it, and Foundation's trimming, through `NSString`,
    /// was 3 % of the server's time in single-record pushes.
    static func bearerToken(in header: String?) -> String? {
        func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard var rest = header?.utf8.drop(while: { $0 == UInt8(ascii: " ") }) else { return nil }
        let scheme = "bearer".utf8
        // `| 0x20` lowers an ASCII capital and turns no other byte into a lowercase letter.
        guard rest.starts(with: scheme, by: { $0 | 0x20 == $1 }) else { return nil }
        rest = rest.dropFirst(scheme.count)
        guard rest.first == UInt8(ascii: " ") else { return nil }
        rest = rest.drop(while: isSpace)
        while let last = rest.last, isSpace(last) { rest = rest.dropLast() }
        return rest.isEmpty ? nil : String(Substring(rest))
    }
}
