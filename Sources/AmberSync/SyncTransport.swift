import AmberSyncProtocol
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The wire protocol over HTTP, with `URLSession`.
struct SyncTransport: Sendable {
    let server: URL
    let tokens: SyncTokenSource
    let session: URLSession

    init(server: URL, tokens: SyncTokenSource) {
        self.server = server
        self.tokens = tokens
        let configuration = URLSessionConfiguration.ephemeral
        // Long enough for a long-poll pull (at most 60 s of waiting) on a slow network.
        configuration.timeoutIntervalForRequest = 90
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    /// A `200` answer, with the database the server named in it.
    struct Answer<Body: Sendable>: Sendable {
        let body: Body
        /// The `Amber-Database-ID` header, when the server sent one.
        let databaseID: String?
    }

    func push(_ request: PushRequest) async throws(SyncError) -> Answer<PushResponse> {
        let body = Data(JSONWriter.bytes(of: request))
        var urlRequest = URLRequest(url: server.appendingPathComponent("v1/push"))
        urlRequest.httpMethod = "POST"
        urlRequest.httpBody = body
        urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let response: Answer<PushResponse> = try await send(urlRequest)
        guard response.body.results.map(\.mutationID) == request.mutations.map(\.mutationID) else {
            throw SyncError(.protocolViolation, "the push answer does not list one result per mutation, in order")
        }
        return response
    }

    func pull(cursor: Int64, tag: String?, limit: Int = SyncLimits.defaultPullLimit, wait: Int = 0)
        async throws(SyncError) -> Answer<PullResponse>
    {
        var components = URLComponents(url: server.appendingPathComponent("v1/pull"), resolvingAgainstBaseURL: false)
        components?.queryItems =
            [
                URLQueryItem(name: "cursor", value: String(cursor)),
                URLQueryItem(name: "limit", value: String(limit)),
            ] + (wait > 0 ? [URLQueryItem(name: "wait", value: String(wait))] : [])
            + (tag.map { [URLQueryItem(name: "cursorTag", value: $0)] } ?? [])
        guard let url = components?.url else {
            throw SyncError(.misuse, "\(server) is not a server address this client can use")
        }
        var request = URLRequest(url: url)
        if wait > 0 { request.timeoutInterval = TimeInterval(wait + 30) }
        return try await send(request)
    }

    /// Sends a request and decodes a `200` answer; any other answer becomes a ``SyncError``.
    ///
    /// A `401` asks the token provider for a fresh token and sends the request once more with it.
    private func send<Response: JSONWireDecodable & Sendable>(_ request: URLRequest) async throws(SyncError)
        -> Answer<Response>
    {
        var request = request
        var token = try await tokens.token()
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        var (data, response) = try await data(for: request)
        if (response as? HTTPURLResponse)?.statusCode == 401, let fresh = try await tokens.token(replacing: token) {
            token = fresh
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            (data, response) = try await self.data(for: request)
        }
        guard let http = response as? HTTPURLResponse else {
            throw SyncError(.protocolViolation, "not an HTTP answer")
        }
        let status = http.statusCode
        guard status == 200 else {
            let error = try? ErrorResponse(jsonBytes: data)
            let message = error?.error ?? String(decoding: data.prefix(200), as: UTF8.self)
            if status == 401 { throw SyncError(.unauthorized, message) }
            throw SyncError(.server(status: status), message, code: error?.code)
        }
        // Read exactly: numbers keep their digits, strings and keys their bytes.
        do {
            return Answer(
                body: try Response(jsonBytes: data), databaseID: http.value(forHTTPHeaderField: SyncHeader.databaseID))
        } catch {
            throw SyncError(
                .protocolViolation,
                "cannot read the answer to \(request.url?.path ?? ""): \(error.sentence(subject: "The answer"))",
                underlyingError: error)
        }
    }

    /// `URLSession`'s data task, cancelled with the calling task.
    ///
    /// Written on the completion-handler API, which every platform's `URLSession` has, so that
    /// cancelling the task (stopping live sync) cancels a waiting long-poll at once.
    private func data(for request: URLRequest) async throws(SyncError) -> (Data, URLResponse) {
        let box = TaskBox()
        let result: Result<(Data, URLResponse), SyncError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let task = session.dataTask(with: request) { data, response, error in
                    if let data, let response {
                        continuation.resume(returning: .success((data, response)))
                    } else {
                        let error = error ?? URLError(.badServerResponse)
                        continuation.resume(returning: .failure(Self.networkError(error)))
                    }
                }
                box.set(task)
                task.resume()
            }
        } onCancel: {
            box.cancel()
        }
        return try result.get()
    }

    private static func networkError(_ error: any Error) -> SyncError {
        if let error = error as? URLError, error.code == .cancelled {
            return SyncError(.offline, "the request was cancelled", underlyingError: error)
        }
        return SyncError(.offline, (error as NSError).localizedDescription, underlyingError: error)
    }
}

/// A data task that may be cancelled before it is created.
private final class TaskBox: @unchecked Sendable {
    // @unchecked: `task` and `cancelled` are only touched while `lock` is held.
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    func set(_ task: URLSessionDataTask) {
        lock.lock()
        self.task = task
        let cancelled = self.cancelled
        lock.unlock()
        if cancelled { task.cancel() }
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}
