import AmberSyncProtocol
import Hummingbird
import Logging

/// Answers every error as `{"error": "<one readable sentence>"}` with `Content-Type: application/json`:
/// the server's own errors, Hummingbird's (not found, body too large) and unexpected ones (`500`).
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as SyncServerError {
            var response = try Response.json(
                ErrorResponse(error: error.description, reset: error.isReset ? true : nil, code: error.code),
                status: HTTPResponse.Status(code: error.httpStatusCode)
            )
            if error.httpStatusCode == 401 {
                response.headers[.wwwAuthenticate] = "Bearer"
            }
            if error.httpStatusCode >= 500 {
                logger.error("\(request.method) \(request.uri.path) failed: \(error)")
            }
            return response
        } catch let error as any HTTPResponseError {
            return try Response.json(
                ErrorResponse(error: Self.sentence(for: error, request: request)), status: error.status)
        } catch {
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
                "There is no endpoint \(request.method) \(request.uri.path); the sync protocol has GET /v1/health, POST /v1/push and GET /v1/pull, and the server GET /metrics."
        case .contentTooLarge:
            return "The request body is larger than the server accepts."
        default:
            return "The request failed: \(error.status.code) \(error.status.reasonPhrase)."
        }
    }
}
