import Hummingbird

/// Counts every answered request by route and status in ``SyncServerMetrics``, and times pushes
/// and pulls (a pull less the time it was held waiting).
///
/// It runs outside ``ErrorMiddleware``, so errors are counted with the status they are answered with.
struct RequestMetricsMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext
    let metrics: SyncServerMetrics

    func handle(
        _ request: Request, context: SyncRequestContext, next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        let clock = ContinuousClock()
        let start = clock.now
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            // Only errors the error middleware lets through (none it can answer) reach here.
            record(
                status: (error as? any HTTPResponseError)?.status.code ?? 500, context: context,
                elapsed: start.duration(to: clock.now))
            throw error
        }
        record(status: response.status.code, context: context, elapsed: start.duration(to: clock.now))
        return response
    }

    private func record(status: Int, context: SyncRequestContext, elapsed: Duration) {
        // The router names the matched route's path; unknown paths share one label.
        let route = context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 } ?? "unmatched"
        metrics.countRequest(route: route, status: status)
        switch route {
        case Self.pushRoute: metrics.recordPush(elapsed)
        case Self.pullRoute: metrics.recordPull(elapsed - context.heldTime.duration)
        default: break
        }
    }

    static let pushRoute = "/v1/push"
    static let pullRoute = "/v1/pull"
}
