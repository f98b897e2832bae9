import Hummingbird

/// Counts every answered request by route and status in ``SyncServerMetrics``, and times pushes
/// and pulls (a pull less the time it was held waiting).
///
/// Errors are counted with the status they are answered with.
struct RequestMetricsRecorder: Sendable {
    let metrics: SyncServerMetrics

    func record(status: Int, context: SyncRequestContext, elapsed: Duration) {
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
