import Amber
import AmberFileFlush
import AmberLock
import AmberSyncProtocol
import Crypto
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Downloads straight into files, as the bytes arrive, resuming a file that already has some:
/// with AsyncHTTPClient on Linux (``AsyncHTTPExchange``), with `URLSession` elsewhere.
///
/// A download asks for the bytes after those its partial file holds (`Range: bytes=N-`) and
/// appends them; a server that answers with the whole file (`200`) has the file rewritten from
/// the start. Bytes written stay when the connection is cut or the process killed, so the next
/// try resumes there.
///
/// The bytes are hashed as they arrive, so that the file need not be read again to be checked,
/// and on Linux handed to the disk every few MiB (`sync_file_range`), so that the flush that
/// keeps the file has little left to wait for.
final class DownloadSession: Sendable {
    #if !os(Linux)
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
    #endif

    /// Bytes written between two hand-overs to the disk.
    static let flushedBytes: Int64 = 4 << 20

    /// Bytes received before they are written: the network hands them over a few KiB at a time.
    static let writtenBytes = 1 << 20

    /// What a download ended with: the status, and the server's sentence for an error.
    struct Outcome: Sendable {
        let status: Int
        let sentence: String
        /// The SHA-256 and size of the whole partial file, when its bytes were all hashed as
        /// they were written (those it held before included).
        var written: (hash: String, size: Int64)? = nil
    }

    /// Fetches `url` into `partial`, after the bytes it holds.
    ///
    /// - Parameter progress: Told the bytes received so far by this call.
    func fetch(_ url: URL, token: String, into partial: URL, progress: @escaping @Sendable (Int) -> Void)
        async throws(SyncError) -> Outcome
    {
        let existing = ((try? FileManager.default.attributesOfItem(atPath: partial.path))?[.size] as? Int) ?? 0
        // The bytes held, hashed before more are appended; read again once only when resumed.
        let held = existing > 0 ? try? AttachmentStore.hasher(of: partial, count: existing) : SHA256()
        let transfer = DownloadTransfer(partial: partial, existing: existing, held: held, progress: progress)
        var headers = ["Authorization": "Bearer \(token)"]
        if existing > 0 { headers["Range"] = "bytes=\(existing)-" }
        #if os(Linux)
            var failure: SyncError?
            do {
                try await AsyncHTTPExchange.send(
                    url, method: "GET", headers: headers, body: nil,
                    head: { head throws(SyncError) in
                        transfer.begin(status: head.status, contentRange: head.header("Content-Range"))
                    },
                    chunk: { part throws(SyncError) in
                        // A write that failed ends the transfer with its error.
                        guard transfer.receive(Data(part.readableBytesView)) else {
                            throw transfer.failure ?? SyncError(.storage, "cannot write \(partial.path)")
                        }
                    })
            } catch {
                failure = error
            }
            return try transfer.end(networkError: failure).get()
        #else
            var request = URLRequest(url: url)
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            let session = self.session
            let handlers = self.handlers
            let taskBox = LockedValue<URLSessionDataTask?>(nil)
            let result: Result<Outcome, SyncError> = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let task = session.dataTask(with: request)
                    handlers.register(task.taskIdentifier, transfer, finish: continuation)
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

/// One download's file: where its bytes go, hashed, as they arrive.
///
/// @unchecked Sendable: its state is touched by one callback at a time, in order (the URL
/// session's delegate queue, or the task that reads the answer).
private final class DownloadTransfer: @unchecked Sendable {
    let partial: URL
    let existing: Int
    /// The hash of the `existing` bytes, if they could be read.
    let held: SHA256?
    let progress: @Sendable (Int) -> Void
    private(set) var status = 0
    private var file: FileHandle?
    private var errorBody = Data()
    private var received = 0
    /// Why the transfer stopped on this side, if it did.
    private(set) var failure: SyncError?
    /// The hash of the file's bytes so far, and their count.
    private var hasher: SHA256?
    private var size: Int64 = 0
    /// The first byte not yet handed to the disk.
    private var unflushed: Int64 = 0
    /// Bytes received and not yet written.
    private var buffer = Data()

    init(partial: URL, existing: Int, held: SHA256?, progress: @escaping @Sendable (Int) -> Void) {
        self.partial = partial
        self.existing = existing
        self.held = held
        self.progress = progress
    }

    /// Takes the answer's head: opens the file for a `200` or the `206` asked for.
    ///
    /// - Returns: Whether to read the body; not when the file cannot be written or the server
    ///   answered another range than the one asked for (``failure`` says which).
    func begin(status: Int, contentRange: String?) -> Bool {
        self.status = status
        guard status == 200 || status == 206 else { return true }
        do {
            let range = contentRange ?? ""
            // Appending is right only for the range asked for; anything else starts over.
            let append = status == 206 && range.hasPrefix("bytes \(existing)-")
            if !append || !FileManager.default.fileExists(atPath: partial.path) {
                try AttachmentStore.createEmpty(partial)
            }
            if status == 206 && !append {
                self.status = 0
                failure = SyncError(.protocolViolation, "the server answered the range \(range), not the one asked for")
                return false
            }
            let file = try FileHandle(forWritingTo: partial)
            size = Int64(try file.seekToEnd())
            unflushed = size
            hasher = append ? held : SHA256()
            if append && size != Int64(existing) { hasher = nil }
            self.file = file
            return true
        } catch {
            failure = SyncError(.storage, "cannot write \(partial.path): \(error)", underlyingError: error)
            return false
        }
    }

    /// Takes bytes of the body: the file's, or an error's sentence.
    ///
    /// - Returns: Whether to read on; not when the file cannot be written (``failure``).
    func receive(_ data: Data) -> Bool {
        guard let file else {
            if errorBody.count < 4_096 { errorBody.append(data) }
            return true
        }
        buffer.append(data)
        received += data.count
        if buffer.count >= DownloadSession.writtenBytes {
            do {
                try writeBuffer(to: file)
            } catch {
                failure = SyncError(.storage, "cannot write \(partial.path): \(error)", underlyingError: error)
                return false
            }
        }
        progress(received)
        return true
    }

    /// Ends the transfer, the network's error given if it failed: the bytes received are
    /// written, and flushed when they are kept for a later try to resume after.
    func end(networkError: SyncError?) -> Result<DownloadSession.Outcome, SyncError> {
        // A whole file is flushed once, when it is checked and kept, off the queue that all
        // transfers share.
        if let file, failure == nil {
            do {
                try writeBuffer(to: file)
            } catch {
                failure = SyncError(.storage, "cannot write \(partial.path): \(error)", underlyingError: error)
            }
        }
        if networkError != nil || failure != nil { try? file?.synchronize() }
        try? file?.close()
        if let failure { return .failure(failure) }
        if let networkError { return .failure(networkError) }
        let sentence =
            (try? ErrorResponse(jsonBytes: errorBody))?.error ?? String(decoding: errorBody.prefix(200), as: UTF8.self)
        let written: (hash: String, size: Int64)? = file == nil ? nil : hasher.map { ($0.finalize().hexDigest, size) }
        return .success(DownloadSession.Outcome(status: status, sentence: sentence, written: written))
    }

    /// Writes the bytes received to the file, hashing them, and hands every few MiB written to
    /// the disk.
    private func writeBuffer(to file: FileHandle) throws {
        guard !buffer.isEmpty else { return }
        try file.write(contentsOf: buffer)
        hasher?.update(data: buffer)
        size += Int64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
        if size - unflushed >= DownloadSession.flushedBytes {
            // Starts writing the pages to disk without waiting for them.
            _ = amber_start_flushing(file.fileDescriptor, unflushed, size - unflushed)
            unflushed = size
        }
    }
}

#if !os(Linux)
    /// The delegate of a ``DownloadSession``: hands each task's answer to its transfer.
    private final class DownloadHandlers: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        // @unchecked: a transfer's own state is touched only on the session's delegate queue,
        // which runs one callback at a time.
        typealias Finish = CheckedContinuation<Result<DownloadSession.Outcome, SyncError>, Never>
        private let transfers = LockedValue<[Int: (transfer: DownloadTransfer, finish: Finish)]>([:])

        func register(_ id: Int, _ transfer: DownloadTransfer, finish: Finish) {
            transfers.withLock { $0[id] = (transfer, finish) }
        }

        private func transfer(_ id: Int) -> DownloadTransfer? {
            transfers.withLock { $0[id]?.transfer }
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
        ) {
            guard let transfer = transfer(dataTask.taskIdentifier) else { return completionHandler(.cancel) }
            let http = response as? HTTPURLResponse
            let proceed = transfer.begin(
                status: http?.statusCode ?? 0, contentRange: http?.value(forHTTPHeaderField: "Content-Range"))
            completionHandler(proceed ? .allow : .cancel)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            guard let transfer = transfer(dataTask.taskIdentifier) else { return }
            if !transfer.receive(data) { dataTask.cancel() }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let (transfer, finish) = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) })
            else { return }
            let networkError = error.map { error in
                let cancelled = (error as? URLError)?.code == .cancelled
                return SyncError(
                    .offline, cancelled ? "the download was cancelled" : (error as NSError).localizedDescription,
                    underlyingError: error)
            }
            finish.resume(returning: transfer.end(networkError: networkError))
        }
    }
#endif
