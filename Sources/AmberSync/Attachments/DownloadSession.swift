import Amber
import AmberFileFlush
import AmberLock
import AmberSyncProtocol
import Crypto
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
///
/// The bytes are hashed as they arrive, so that the file need not be read again to be checked,
/// and on Linux handed to the disk every few MiB (`sync_file_range`), so that the flush that
/// keeps the file has little left to wait for.
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

    /// Bytes written between two hand-overs to the disk.
    static let flushedBytes: Int64 = 4 << 20

    /// Bytes received before they are written: the session hands them over 16 KiB at a time.
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
                        partial: partial, existing: existing, held: held, progress: progress, finish: continuation))
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
    // @unchecked: a transfer's own state is touched only on the session's delegate queue, which
    // runs one callback at a time.
    private let transfers = LockedValue<[Int: Transfer]>([:])

    final class Transfer {
        let partial: URL
        let existing: Int
        /// The hash of the `existing` bytes, if they could be read.
        let held: SHA256?
        let progress: @Sendable (Int) -> Void
        let finish: CheckedContinuation<Result<DownloadSession.Outcome, SyncError>, Never>
        var status = 0
        var file: FileHandle?
        var errorBody = Data()
        var received = 0
        var failure: SyncError?
        /// The hash of the file's bytes so far, and their count.
        var hasher: SHA256?
        var size: Int64 = 0
        /// The first byte not yet handed to the disk.
        var unflushed: Int64 = 0
        /// Bytes received and not yet written.
        var buffer = Data()

        /// Writes the bytes received to the file, hashing them, and hands every few MiB
        /// written to the disk.
        func writeBuffer(to file: FileHandle) throws {
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

        init(
            partial: URL, existing: Int, held: SHA256?, progress: @escaping @Sendable (Int) -> Void,
            finish: CheckedContinuation<Result<DownloadSession.Outcome, SyncError>, Never>
        ) {
            self.partial = partial
            self.existing = existing
            self.held = held
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
                transfer.size = Int64(try file.seekToEnd())
                transfer.unflushed = transfer.size
                transfer.hasher = append ? transfer.held : SHA256()
                if append && transfer.size != Int64(transfer.existing) { transfer.hasher = nil }
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
        transfer.buffer.append(data)
        transfer.received += data.count
        if transfer.buffer.count >= DownloadSession.writtenBytes {
            do {
                try transfer.writeBuffer(to: file)
            } catch {
                transfer.failure = SyncError(
                    .storage, "cannot write \(transfer.partial.path): \(error)", underlyingError: error)
                dataTask.cancel()
                return
            }
        }
        transfer.progress(transfer.received)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfer(task.taskIdentifier, remove: true) else { return }
        // Bytes kept for a later try to resume after are flushed now; a whole file is flushed
        // once, when it is checked and kept, off this queue that all transfers share.
        if let file = transfer.file, transfer.failure == nil {
            do {
                try transfer.writeBuffer(to: file)
            } catch {
                transfer.failure = SyncError(
                    .storage, "cannot write \(transfer.partial.path): \(error)", underlyingError: error)
            }
        }
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
            let written: (hash: String, size: Int64)? =
                transfer.file == nil ? nil : transfer.hasher.map { ($0.finalize().hexDigest, transfer.size) }
            transfer.finish.resume(
                returning: .success(
                    DownloadSession.Outcome(status: transfer.status, sentence: sentence, written: written)))
        }
    }
}
