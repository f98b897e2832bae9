import Foundation
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

    /// The token of an `Authorization: Bearer TOKEN` header; the scheme is case-insensitive.
    static func bearerToken(in header: String?) -> String? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
