import Amber
import AmberLock
import AmberSyncProtocol
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Downloads straight into files, as the bytes arrive, resuming a file that already has some.
///
/// A download asks for the bytes after those its partial file holds (`Range: bytes=N-`) and
/// appends them; a server that answers with the whole file (`200`) has the file rewritten from
/// the start. Bytes written stay when the connection is cut or the process killed, so the next
/// try resumes there.
final class DownloadSession: Sendable {
    private let handlers = DownloadHandlers()
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

    /// What a download ended with: the status, and the server's sentence for an error.
    struct Outcome: Sendable {
        let status: Int
        let sentence: String
    }

    /// Fetches `url` into `partial`, after the bytes it holds.
    ///
    /// - Parameter progress: Told the bytes received so far by this call.
    func fetch(_ url: URL, token: String, into partial: URL, progress: @escaping @Sendable (Int) -> Void)
        async throws(SyncError) -> Outcome
    {
        let existing = ((try? FileManager.default.attributesOfItem(atPath: partial.path))?[.size] as? Int) ?? 0
        var request = URLRequest(url: url)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if existing > 0 { request.setValue("bytes=\(existing)-", forHTTPHeaderField: "Range") }
        let session = self.session
        let handlers = self.handlers
        let taskBox = LockedValue<URLSessionDataTask?>(nil)
        let result: Result<Outcome, SyncError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let task = session.dataTask(with: request)
                handlers.register(
                    task.taskIdentifier,
                    DownloadHandlers.Transfer(
                        partial: partial, existing: existing, progress: progress, finish: continuation))
                taskBox.withLock { $0 = task }
                task.resume()
            }
        } onCancel: {
            taskBox.withLock { $0 }?.cancel()
        }
        return try result.get()
    }
}

/// The delegate of a ``DownloadSession``: writes each task's bytes to its file.
private final class DownloadHandlers: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: `transfers` is touched only with `lock` held; a transfer's own state only on
    // the session's delegate queue, which runs one callback at a time.
    private let lock = NSLock()
    private var transfers: [Int: Transfer] = [:]

    final class Transfer {
        let partial: URL
        let existing: Int
        let progress: @Sendable (Int) -> Void
        let finish: CheckedContinuation<Result<DownloadSession.Outcome, SyncError>, Never>
        var status = 0
        var file: FileHandle?
        var errorBody = Data()
        var received = 0
        var failure: SyncError?

        init(
            partial: URL, existing: Int, progress: @escaping @Sendable (Int) -> Void,
            finish: CheckedContinuation<Result<DownloadSession.Outcome, SyncError>, Never>
        ) {
            self.partial = partial
            self.existing = existing
            self.progress = progress
            self.finish = finish
        }
    }

    func register(_ id: Int, _ transfer: Transfer) {
        lock.lock()
        transfers[id] = transfer
        lock.unlock()
    }

    private func transfer(_ id: Int, remove: Bool = false) -> Transfer? {
        lock.lock()
        defer { lock.unlock() }
        return remove ? transfers.removeValue(forKey: id) : transfers[id]
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let transfer = transfer(dataTask.taskIdentifier) else { return completionHandler(.cancel) }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        transfer.status = status
        do {
            if status == 200 || status == 206 {
                let range = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Range") ?? ""
                // Appending is right only for the range asked for; anything else starts over.
                let append = status == 206 && range.hasPrefix("bytes \(transfer.existing)-")
                if !append || !FileManager.default.fileExists(atPath: transfer.partial.path) {
                    guard FileManager.default.createFile(atPath: transfer.partial.path, contents: nil) else {
                        throw CocoaError(.fileWriteUnknown)
                    }
                }
                if status == 206 && !append {
                    transfer.status = 0
                    transfer.failure = SyncError(
                        .protocolViolation, "the server answered the range \(range), not the one asked for")
                    return completionHandler(.cancel)
                }
                let file = try FileHandle(forWritingTo: transfer.partial)
                try file.seekToEnd()
                transfer.file = file
            }
            completionHandler(.allow)
        } catch {
            transfer.failure = SyncError(
                .storage, "cannot write \(transfer.partial.path): \(error)", underlyingError: error)
            completionHandler(.cancel)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let transfer = transfer(dataTask.taskIdentifier) else { return }
        guard let file = transfer.file else {
            if transfer.errorBody.count < 4_096 { transfer.errorBody.append(data) }
            return
        }
        do {
            try file.write(contentsOf: data)
            transfer.received += data.count
            transfer.progress(transfer.received)
        } catch {
            transfer.failure = SyncError(
                .storage, "cannot write \(transfer.partial.path): \(error)", underlyingError: error)
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfer(task.taskIdentifier, remove: true) else { return }
        // Bytes kept for a later try to resume after are flushed now; a whole file is flushed
        // once, when it is checked and kept, off this queue that all transfers share.
        if error != nil || transfer.failure != nil { try? transfer.file?.synchronize() }
        try? transfer.file?.close()
        if let failure = transfer.failure {
            transfer.finish.resume(returning: .failure(failure))
        } else if let error {
            let cancelled = (error as? URLError)?.code == .cancelled
            transfer.finish.resume(
                returning: .failure(
                    SyncError(
                        .offline, cancelled ? "the download was cancelled" : (error as NSError).localizedDescription,
                        underlyingError: error)))
        } else {
            let sentence =
                (try? ErrorResponse(jsonBytes: transfer.errorBody))?.error
                ?? String(decoding: transfer.errorBody.prefix(200), as: UTF8.self)
            transfer.finish.resume(
                returning: .success(DownloadSession.Outcome(status: transfer.status, sentence: sentence)))
        }
    }
}
