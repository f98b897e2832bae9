import AmberSyncProtocol
import HTTPTypes
import Hummingbird

/// What every answer of the server goes through, in one middleware: errors become
/// `{"error": ...}` answers (``ErrorAnswer``), every answer names the server's database
/// (`Amber-Database-ID`, so that a client notices when the database behind the server was
/// replaced), large answers are compressed for clients that accept gzip (``GzipCompression``),
/// and the request is counted and timed (``RequestMetricsRecorder``) with the status it is
/// answered with.
///
/// These are the steps of one middleware rather than a middleware each because a waiting pull
/// keeps the frames of every middleware it passed through for as long as it waits: with
/// thousands of pulls waiting, each middleware's frames cost megabytes. While `next` runs, this
/// middleware's own frame holds only what it needs to finish the answer.
struct AnswerMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext
    let errors: ErrorAnswer
    let compression: GzipCompression
    let database: any SyncDatabase
    let metrics: RequestMetricsRecorder

    func handle(
        _ request: Request, context: SyncRequestContext, next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = try answer(to: error, request: request, context: context, start: start)
        }
        return try await finish(response, request: request, context: context, start: start)
    }

    /// The answer to an error `next` threw; an error it cannot answer is counted and thrown on.
    @inline(never)
    private func answer(
        to error: any Error, request: Request, context: SyncRequestContext, start: ContinuousClock.Instant
    )
        throws -> Response
    {
        do {
            return try errors.response(to: error, request: request)
        } catch {
            metrics.record(status: 500, context: context, elapsed: start.duration(to: .now))
            throw error
        }
    }

    /// `response` with the database's name, compressed when that is worth it, and counted.
    @inline(never)
    private func finish(
        _ response: Response, request: Request, context: SyncRequestContext, start: ContinuousClock.Instant
    ) async throws -> Response {
        var response = response
        if let id = try? await database.databaseID(), let name = HTTPField.Name(SyncHeader.databaseID) {
            response.headers[name] = id
        }
        do {
            response = try await compression.compressed(response, for: request)
        } catch {
            metrics.record(status: 500, context: context, elapsed: start.duration(to: .now))
            throw error
        }
        metrics.record(status: response.status.code, context: context, elapsed: start.duration(to: .now))
        return response
    }
}
