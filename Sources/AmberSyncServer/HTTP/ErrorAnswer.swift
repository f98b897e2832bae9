import AmberLock
import AmberSyncProtocol
import Hummingbird
import Logging

/// Answers every error as `{"error": "<one readable sentence>"}` with `Content-Type: application/json`:
/// the server's own errors, Hummingbird's (not found, body too large) and unexpected ones (`500`).
///
/// A known path asked with another method is answered `405` with `Allow`, not `404`. A database
/// that cannot be reached is answered `503` with `Retry-After` and a sentence that leaves out its
/// address and the driver's words: those go to the log only.
struct ErrorAnswer: Sendable {
    let logger: Logger
    let allowedMethods: AllowedMethods
    /// The seconds a client is told to wait before it tries again (`Retry-After`).
    var retryAfterSeconds = 5

    /// The answer to `error`, thrown while handling `request`.
    func response(to error: any Error, request: Request) throws -> Response {
        switch error {
        case let error as SyncServerError:
            var response = try Response.json(
                ErrorResponse(error: error.clientSentence, reset: error.isReset ? true : nil, code: error.code),
                status: HTTPResponse.Status(code: error.httpStatusCode)
            )
            if error.httpStatusCode == 401 {
                response.headers[.wwwAuthenticate] = "Bearer"
            }
            if error.isTemporary {
                response.headers[.retryAfter] = String(retryAfterSeconds)
            }
            if case .uploadOffsetMismatch(_, let held, _) = error {
                response.headers[.amberUploadOffset] = String(held)
            }
            if error.httpStatusCode >= 500 {
                logger.error("\(request.method) \(request.uri.path) failed: \(error)")
            }
            return response
        case let error as any HTTPResponseError:
            // A route's own 404 (an attachment the user lacks) is not a wrong method.
            if error.status == .notFound, let allowed = allowedMethods.methods(for: request.uri.path),
                !allowed.contains(request.method.rawValue)
            {
                var response = try Response.json(
                    ErrorResponse(
                        error:
                            "\(request.uri.path) does not answer \(request.method); it answers \(allowed.joined(separator: ", "))."
                    ),
                    status: .methodNotAllowed
                )
                response.headers[.allow] = allowed.joined(separator: ", ")
                return response
            }
            return try Response.json(
                ErrorResponse(error: Self.sentence(for: error, request: request)), status: error.status)
        default:
            logger.error("\(request.method) \(request.uri.path) failed: \(error)")
            return try Response.json(
                ErrorResponse(error: "The server failed to handle the request; its log says why."),
                status: .internalServerError
            )
        }
    }

    private static func sentence(for error: any HTTPResponseError, request: Request) -> String {
        if let error = error as? HTTPError, let message = error.body {
            return message
        }
        switch error.status {
        case .notFound:
            return
                "There is no endpoint \(request.method) \(request.uri.path); the sync protocol has GET /v1/health, POST /v1/push, GET /v1/pull, PUT, HEAD and GET /v1/attachments/{sha256} and POST /v1/attachments/missing, described at GET /v1/openapi.json, and the server GET /metrics."
        case .contentTooLarge:
            return "The request body is larger than the server accepts."
        default:
            return "The request failed: \(error.status.code) \(error.status.reasonPhrase)."
        }
    }
}

/// The methods each path of the router answers, filled in once its routes are added: what a `405`
/// lists in `Allow`.
final class AllowedMethods: Sendable {
    private let byPath = LockedValue<[String: [String]]>([:])

    /// Records the routes; each path's methods in the order given.
    func set(_ routes: [(path: String, method: HTTPRequest.Method)]) {
        byPath.withLock { byPath in
            byPath = [:]
            for route in routes {
                byPath[route.path, default: []].append(route.method.rawValue)
            }
        }
    }

    /// The methods `path` answers, or `nil` for a path no route has.
    ///
    /// A route's parameter (`:sha256` or `{sha256}`) stands for any one non-empty segment.
    func methods(for path: String) -> [String]? {
        let path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        return byPath.withLock { byPath in
            if let methods = byPath[path] { return methods }
            let segments = path.split(separator: "/", omittingEmptySubsequences: false)
            for (route, methods) in byPath where route.contains(":") || route.contains("{") {
                let parts = route.split(separator: "/", omittingEmptySubsequences: false)
                guard parts.count == segments.count else { continue }
                let matches = zip(parts, segments).allSatisfy { part, segment in
                    part == segment || ((part.hasPrefix(":") || part.hasPrefix("{")) && !segment.isEmpty)
                }
                if matches { return methods }
            }
            return nil
        }
    }
}
