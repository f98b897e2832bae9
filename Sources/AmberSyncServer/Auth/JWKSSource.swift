import AmberLock
import Foundation
import Logging

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The keys of a JWKS document at a URL: fetched at start, again every refresh interval, and
/// for a token with an unknown `kid` at most once a minute. Until a first fetch succeeds there are
/// no keys, and it is retried every few seconds.
actor JWKSSource {
    let url: URL
    let refreshInterval: Duration
    let logger: Logger
    /// The keys of the last document fetched; `nil` until one was.
    private(set) var keys: [VerificationKey]?
    private var lastAttempt: ContinuousClock.Instant?
    private var fetching: Task<Void, Never>?
    private let session: URLSession

    /// The least time between two fetches for a token whose `kid` is unknown.
    let unknownKIDInterval: Duration
    /// The longest wait between two tries while no keys have arrived.
    static let longestRetryDelay: Duration = .seconds(30)

    init(url: URL, refreshInterval: Duration, unknownKIDInterval: Duration, logger: Logger) throws {
        guard let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
            scheme == "https" || (scheme == "http" && Self.isLoopback(host))
        else {
            throw KeyError("the JWKS URL \(url) is not an https URL (plain http is allowed on loopback only)")
        }
        self.url = url
        self.refreshInterval = refreshInterval
        self.unknownKIDInterval = unknownKIDInterval
        self.logger = logger
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    /// Whether `host` is the machine itself: plain http to it never crosses a network.
    static func isLoopback(_ host: String) -> Bool {
        let host = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// Fetches until cancelled: at once, then every refresh interval; while no keys have
    /// arrived, again after a growing delay (1 s doubling up to 30 s).
    func run() async {
        var retryDelay: Duration = .seconds(1)
        while !Task.isCancelled {
            await refresh()
            let delay: Duration
            if keys == nil {
                delay = min(retryDelay, refreshInterval)
                retryDelay = min(retryDelay * 2, Self.longestRetryDelay)
            } else {
                delay = refreshInterval
                retryDelay = .seconds(1)
            }
            do { try await Task.sleep(for: delay) } catch { return }
        }
    }

    /// The keys, fetching first when no fetch was tried yet (a server not started by `run`).
    func currentKeys() async -> [VerificationKey]? {
        if lastAttempt == nil { await refresh() }
        return keys
    }

    /// Fetches again for a token whose `kid` is unknown, unless the last fetch is more recent
    /// than the unknown-kid interval (a minute).
    func refreshForUnknownKID() async {
        if let lastAttempt, lastAttempt.duration(to: .now) < unknownKIDInterval { return }
        await refresh()
    }

    /// Fetches the document now (or joins a fetch under way) and replaces the keys when it succeeds.
    func refresh() async {
        if let fetching {
            await fetching.value
            return
        }
        lastAttempt = .now
        let task = Task { await self.fetch() }
        fetching = task
        await task.value
        fetching = nil
    }

    private func fetch() async {
        do {
            let data = try await download()
            let (keys, skipped) = try await VerificationKey.jwks(data)
            if self.keys == nil {
                logger.info("JWT keys fetched from \(url): \(keys.count) keys")
            }
            if !skipped.isEmpty {
                logger.debug("JWT keys of \(url) left out: \(skipped.joined(separator: ", "))")
            }
            self.keys = keys
        } catch {
            logger.error(
                "Could not fetch the JWT keys from \(url): \(error)\(keys == nil ? "; JWT requests are answered 503 until they arrive" : "; the keys fetched before stay in use")"
            )
        }
    }

    private func download() async throws -> Data {
        var request = URLRequest(url: url)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let session = self.session
        let dataTask = CancellableDataTask()
        let (data, response): (Data, URLResponse) = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request) { data, response, error in
                    if let data, let response {
                        continuation.resume(returning: (data, response))
                    } else {
                        continuation.resume(throwing: error ?? URLError(.badServerResponse))
                    }
                }
                dataTask.set(task)
                task.resume()
            }
        } onCancel: {
            dataTask.cancel()
        }
        guard let status = (response as? HTTPURLResponse)?.statusCode, status == 200 else {
            throw KeyError("it answered \((response as? HTTPURLResponse)?.statusCode ?? 0), not 200")
        }
        return data
    }
}

/// A data task that may be cancelled before it is created: cancelled as soon as it is set then.
private final class CancellableDataTask: Sendable {
    private let state = LockedValue<(task: URLSessionDataTask?, cancelled: Bool)>((nil, false))

    func set(_ task: URLSessionDataTask) {
        let cancelled = state.withLock { state in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    func cancel() {
        let task = state.withLock { state in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }
}
