import AmberLock
import Foundation
import Prometheus

/// What a ``SyncServer`` counts and times, served at `GET /metrics` in the Prometheus text format.
///
/// Every server has its own registry, so one process can run many servers (tests do) without
/// their figures mixing, and nothing needs a process-wide metrics bootstrap:
///
/// | metric | type | what |
/// |---|---|---|
/// | `amber_sync_requests_total{route, status}` | counter | answered requests, by route (`/v1/push`, `/v1/pull`, `/v1/health`, `/metrics`, or `unmatched` for unknown paths) and HTTP status |
/// | `amber_sync_push_duration_seconds` | histogram | `POST /v1/push`, from the request's arrival to its answer, authentication included |
/// | `amber_sync_pull_duration_seconds` | histogram | `GET /v1/pull`, the same, less the time the pull was held waiting for a change (`wait`) |
/// | `amber_sync_waiting_pulls` | gauge | pulls held now, waiting for a change |
/// | `amber_sync_database_errors_total{operation}` | counter | errors the database threw while authenticating, pushing or pulling, other than bad input (a `400`, `401`, `410`...) |
/// | `amber_sync_attachment_bytes_received_total` | counter | bytes of attachment uploads received and written, resumed uploads counting only the bytes sent again |
///
/// Requests are counted once answered, errors included; a request whose connection ends first is not.
///
/// `/metrics` needs no bearer token, like `/v1/health`: it shows counts and timings only, never a
/// user, a token or a record. A server reachable from untrusted networks can keep it private
/// at its reverse proxy.
///
/// ```swift
/// let server = SyncServer(database: database, port: 0)
/// let running = try await server.start()
/// // ... later, the same text as GET /metrics:
/// print(server.metrics.exposition())
/// ```
///
/// To serve figures of one's own beside the server's, create them in ``registry``.
public final class SyncServerMetrics: Sendable {
    /// The registry that holds the server's metrics; metrics added to it are served at `/metrics` too.
    public let registry: PrometheusCollectorRegistry

    private let pushDuration: DurationHistogram
    private let pullDuration: DurationHistogram
    private let waitingPulls: Gauge
    private let attachmentBytesReceived: Counter
    private let databaseErrors: [DatabaseOperation: Counter]
    /// Request counters by route and status, made once each: the registry validates names on every call.
    private let requestCounters = LockedValue([RequestKey: Counter]())

    /// The upper bounds of the latency histograms' buckets: 1 ms to 10 s.
    static let latencyBuckets: [Duration] = [
        .milliseconds(1), .microseconds(2_500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2_500), .seconds(5), .seconds(10),
    ]

    private static var requestsDescriptor: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "amber_sync", metricName: "requests", unitName: "total",
            helpText: "Answered HTTP requests, by route and status."
        )
    }

    /// Creates the server's metrics in `registry`.
    ///
    /// - Parameter registry: Where to create them; a new, empty registry unless given one.
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        pushDuration = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(
                namespace: "amber_sync", metricName: "push_duration", unitName: "seconds",
                helpText: "Time to answer POST /v1/push, authentication included."
            ),
            buckets: Self.latencyBuckets
        )
        pullDuration = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(
                namespace: "amber_sync", metricName: "pull_duration", unitName: "seconds",
                helpText:
                    "Time to answer GET /v1/pull, authentication included, less the time held waiting for a change."
            ),
            buckets: Self.latencyBuckets
        )
        waitingPulls = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "amber_sync", metricName: "waiting_pulls", unitName: "",
                helpText: "Pulls held now, waiting for a change."
            )
        )
        attachmentBytesReceived = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "amber_sync", metricName: "attachment_bytes_received", unitName: "total",
                helpText: "Bytes of attachment uploads received and written."
            )
        )
        let errorsDescriptor = MetricNameDescriptor(
            namespace: "amber_sync", metricName: "database_errors", unitName: "total",
            helpText: "Errors the database threw, other than bad input, by operation."
        )
        // Made up front, so every operation shows 0 before its first error.
        var databaseErrors: [DatabaseOperation: Counter] = [:]
        for operation in DatabaseOperation.allCases {
            databaseErrors[operation] = registry.makeCounter(
                descriptor: errorsDescriptor, labels: [("operation", operation.rawValue)]
            )
        }
        self.databaseErrors = databaseErrors
    }

    /// Every metric of ``registry`` in the Prometheus text exposition format (version 0.0.4),
    /// as `GET /metrics` answers.
    ///
    /// - Returns: One `# TYPE` line per metric, and its samples.
    public func exposition() -> String {
        registry.emitToString()
    }
}

/// What the database was doing when it threw: the `operation` label of `amber_sync_database_errors_total`.
enum DatabaseOperation: String, CaseIterable, Sendable {
    case authenticate, push, pull
}

extension SyncServerMetrics {
    private struct RequestKey: Hashable {
        let route: String
        let status: Int
    }

    /// Counts an answered request.
    func countRequest(route: String, status: Int) {
        let key = RequestKey(route: route, status: status)
        let counter = requestCounters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = registry.makeCounter(
                descriptor: Self.requestsDescriptor, labels: [("route", route), ("status", String(status))]
            )
            counters[key] = counter
            return counter
        }
        counter.increment()
    }

    /// Counts bytes of an attachment upload received and written.
    func countAttachmentBytes(_ count: Int) {
        attachmentBytesReceived.increment(by: Int64(count))
    }

    /// Records how long a push took to answer.
    func recordPush(_ duration: Duration) {
        pushDuration.record(duration)
    }

    /// Records how long a pull took to answer, its held time excluded.
    func recordPull(_ duration: Duration) {
        pullDuration.record(max(duration, .zero))
    }

    /// Runs `body`, a pull's wait for a change, counted in `amber_sync_waiting_pulls` meanwhile.
    func waiting<Result>(_ body: () async -> Result) async -> Result {
        waitingPulls.increment()
        defer { waitingPulls.decrement() }
        return await body()
    }

    /// Runs `body`, a call into the database, counting what it throws unless it is bad input or cancellation.
    func database<Result>(_ operation: DatabaseOperation, _ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as SyncServerError where error.isInputError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            databaseErrors[operation]?.increment()
            throw error
        }
    }
}
