import AmberLock
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The wire protocol over HTTP: with AsyncHTTPClient on Linux (``AsyncHTTPExchange``), with
/// `URLSession` elsewhere.
package struct HTTPSyncTransport: SyncTransport {
    package let server: URL
    #if !os(Linux)
        let session: URLSession
    #endif

    package init(server: URL) {
        self.server = server
        #if !os(Linux)
            let configuration = URLSessionConfiguration.ephemeral
            // Long enough for a long-poll pull (at most 60 s of waiting) on a slow network.
            configuration.timeoutIntervalForRequest = 90
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            session = URLSession(configuration: configuration)
        #endif
    }

    package func send(_ request: SyncTransportRequest) async throws(SyncError) -> SyncTransportResponse {
        var components = URLComponents(
            url: server.appendingPathComponent(request.path), resolvingAgainstBaseURL: false)
        if !request.query.isEmpty { components?.queryItems = request.query }
        guard let url = components?.url else {
            throw SyncError(.misuse, "\(server) is not a server address this client can use")
        }
        #if os(Linux)
            let answer = try await AsyncHTTPExchange.exchange(
                url, method: request.method, headers: request.headers, body: request.body, timeout: request.timeout)
            return SyncTransportResponse(status: answer.head.status, headers: answer.head.fields, body: answer.body)
        #else
            return try await sendWithURLSession(request, to: url)
        #endif
    }
}

#if !os(Linux)
    extension HTTPSyncTransport {
        private func sendWithURLSession(_ request: SyncTransportRequest, to url: URL) async throws(SyncError)
            -> SyncTransportResponse
        {
            var urlRequest = URLRequest(url: url)
            urlRequest.httpMethod = request.method
            urlRequest.httpBody = request.body
            for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
            if let timeout = request.timeout { urlRequest.timeoutInterval = timeout }
            let (data, response) = try await data(for: urlRequest)
            guard let http = response as? HTTPURLResponse else {
                throw SyncError(.protocolViolation, "not an HTTP answer")
            }
            var headers: [String: String] = [:]
            for case (let name as String, let value as String) in http.allHeaderFields { headers[name] = value }
            return SyncTransportResponse(status: http.statusCode, headers: headers, body: data)
        }

        /// `URLSession`'s data task, cancelled with the calling task.
        ///
        /// Written on the completion-handler API, which every platform's `URLSession` has, so that
        /// cancelling the task (stopping live sync) cancels a waiting long-poll at once.
        private func data(for request: URLRequest) async throws(SyncError) -> (Data, URLResponse) {
            let dataTask = CancellableDataTask()
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
                    dataTask.set(task)
                    task.resume()
                }
            } onCancel: {
                dataTask.cancel()
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
#endif
