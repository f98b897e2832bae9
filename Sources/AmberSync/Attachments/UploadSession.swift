import Amber
import AmberLock
import AmberSyncProtocol
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends attachment requests, `PUT`s of a file or part of it, telling the bytes sent as each
/// chunk goes out: with AsyncHTTPClient on Linux (``AsyncHTTPExchange``), reading the file as the
/// connection takes it, and with `URLSession` elsewhere, handed the part in memory.
///
/// FoundationNetworking's own streaming of a body from a file is never used: on Linux it stops
/// the process when a connection is cut mid-body (`_BodyFileSource`).
final class UploadSession: Sendable {
    #if !os(Linux)
        private let handlers = UploadHandlers()
        private let session: URLSession

        init() {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = 90
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            session = URLSession(configuration: configuration, delegate: handlers, delegateQueue: queue)
        }

        deinit {
            session.finishTasksAndInvalidate()
        }
    #endif

    /// What a request ended with.
    struct Outcome: Sendable {
        /// The answer's status.
        let status: Int
        /// The server's database, named by `Amber-Database-ID`.
        let databaseID: String?
        /// The bytes of the server's unfinished upload, named by `Amber-Upload-Offset`.
        let uploadOffset: Int64?
        /// The server's sentence, for an error.
        let sentence: String
        /// The answer's body, its first MiB.
        let body: Data

        /// The outcome of an answer with status `status`, header fields read by `header`
        /// (whatever the case of the name) and body `body`.
        init(status: Int, header: (String) -> String?, body: Data) {
            self.status = status
            databaseID = header(SyncHeader.databaseID)
            uploadOffset = header(SyncHeader.uploadOffset).flatMap { Int64($0) }
            sentence =
                (try? ErrorResponse(jsonBytes: body))?.error ?? String(decoding: body.prefix(200), as: UTF8.self)
            self.body = body
        }
    }

    /// Most bytes of an answer's body kept.
    static let keptAnswer = 1 << 20

    /// Sends `request`, with `body` uploaded as its body when given (else the request's own).
    ///
    /// - Parameter progress: Told the bytes of the body sent so far, as each chunk goes out.
    func send(_ request: URLRequest, body: UploadBody?, progress: @escaping @Sendable (Int) -> Void = { _ in })
        async throws(SyncError) -> Outcome
    {
        #if os(Linux)
            guard let url = request.url else { throw SyncError(.misuse, "an attachment request without an address") }
            var answer: AsyncHTTPExchange.Head?
            var kept = Data()
            try await AsyncHTTPExchange.send(
                url, method: request.httpMethod ?? "GET", headers: request.allHTTPHeaderFields ?? [:],
                body: body.map { .file($0) } ?? request.httpBody.map { .data($0) },
                sent: progress,
                head: { head throws(SyncError) in
                    answer = head
                    return true
                },
                chunk: { part throws(SyncError) in
                    if kept.count < Self.keptAnswer { kept.append(contentsOf: part.readableBytesView) }
                })
            guard let answer else { throw SyncError(.offline, "the server sent no answer") }
            return Outcome(status: answer.status, header: answer.header, body: kept)
        #else
            let session = self.session
            let handlers = self.handlers
            let data = try body?.read()
            let taskBox = LockedValue<URLSessionTask?>(nil)
            let result: Result<Outcome, SyncError> = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let task: URLSessionTask =
                        if let data {
                            session.uploadTask(with: request, from: data)
                        } else {
                            session.dataTask(with: request)
                        }
                    handlers.register(
                        task.taskIdentifier, UploadHandlers.Transfer(progress: progress, finish: continuation))
                    taskBox.withLock { $0 = task }
                    task.resume()
                }
            } onCancel: {
                taskBox.withLock { $0 }?.cancel()
            }
            return try result.get()
        #endif
    }
}

#if !os(Linux)
    /// The delegate of an ``UploadSession``: reports each task's bytes sent and collects its answer.
    private final class UploadHandlers: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        // @unchecked: a transfer's own state is touched only on the session's delegate queue, which
        // runs one callback at a time.
        private let transfers = LockedValue<[Int: Transfer]>([:])

        final class Transfer {
            let progress: @Sendable (Int) -> Void
            let finish: CheckedContinuation<Result<UploadSession.Outcome, SyncError>, Never>
            var response: HTTPURLResponse?
            var body = Data()

            init(
                progress: @escaping @Sendable (Int) -> Void,
                finish: CheckedContinuation<Result<UploadSession.Outcome, SyncError>, Never>
            ) {
                self.progress = progress
                self.finish = finish
            }
        }

        func register(_ id: Int, _ transfer: Transfer) {
            transfers.withLock { $0[id] = transfer }
        }

        private func transfer(_ id: Int, remove: Bool = false) -> Transfer? {
            transfers.withLock { remove ? $0.removeValue(forKey: id) : $0[id] }
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
            totalBytesExpectedToSend: Int64
        ) {
            transfer(task.taskIdentifier)?.progress(Int(totalBytesSent))
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
        ) {
            transfer(dataTask.taskIdentifier)?.response = response as? HTTPURLResponse
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            guard let transfer = transfer(dataTask.taskIdentifier), transfer.body.count < UploadSession.keptAnswer
            else {
                return
            }
            transfer.body.append(data)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let transfer = transfer(task.taskIdentifier, remove: true) else { return }
            let response = transfer.response ?? task.response as? HTTPURLResponse
            if let error {
                let cancelled = (error as? URLError)?.code == .cancelled
                transfer.finish.resume(
                    returning: .failure(
                        SyncError(
                            .offline, cancelled ? "the upload was cancelled" : (error as NSError).localizedDescription,
                            underlyingError: error)))
                return
            }
            guard let response else {
                transfer.finish.resume(returning: .failure(SyncError(.offline, "the server sent no answer")))
                return
            }
            transfer.finish.resume(
                returning: .success(
                    UploadSession.Outcome(
                        status: response.statusCode, header: { response.value(forHTTPHeaderField: $0) },
                        body: transfer.body)))
        }
    }
#endif
