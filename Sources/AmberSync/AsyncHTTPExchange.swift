#if os(Linux)
    import AmberLock
    import AsyncHTTPClient
    import Foundation
    import Glibc
    import NIOCore
    import NIOHTTP1
    import NIOHTTPCompression

    /// The client's HTTP on Linux, over AsyncHTTPClient; Apple platforms use `URLSession`.
    ///
    /// FoundationNetworking's `URLSession` re-arms a dispatch timer for every chunk libcurl moves:
    /// while a request's body went out, that kept a core busy, a third of the client's CPU in a
    /// first push and most of an upload's (see CONTRIBUTING). The three transports of the client
    /// (``HTTPSyncTransport``, ``UploadSession`` and ``DownloadSession``) send their requests here
    /// on Linux, one shared connection pool for the process.
    enum AsyncHTTPExchange {
        /// The process's client: never shut down, as `URLSession.shared` is not.
        ///
        /// `read` is the longest wait for the next bytes of an answer, as `URLSession`'s
        /// `timeoutIntervalForRequest` (90 s: a long-poll pull waits at most 60 s for a change).
        static let client: HTTPClient = {
            var configuration = HTTPClient.Configuration(
                timeout: .init(connect: .seconds(30), read: .seconds(90)),
                // Asks for gzip-compressed answers (`Accept-Encoding`, as `URLSession` does) and
                // inflates them: at most 1 GiB once inflated, far above any page.
                decompression: .enabled(limit: .size(1 << 30)))
            // The sync server speaks HTTP/1.1: a request in flight has a connection of its own.
            configuration.httpVersion = .http1Only
            // Every client of the process shares this pool, and each live client holds a
            // connection in its long-poll: with the default of 8 a host's connections, the ninth
            // waiting client would make every other request wait for a long-poll to end.
            configuration.connectionPool = .init(
                idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 1_024)
            return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        }()

        /// An answer's status and header fields.
        struct Head: Sendable {
            let status: Int
            let headers: HTTPHeaders

            /// The value of the header field `name`, whatever its case.
            func header(_ name: String) -> String? {
                headers.first(name: name)
            }

            /// The header fields by lowercased name; the first of a repeated name.
            var fields: [String: String] {
                Dictionary(headers.map { ($0.name.lowercased(), $0.value) }) { first, _ in first }
            }
        }

        /// Bytes per part of a body handed to the connection, each reported sent once it is taken.
        static let bodyChunk = 1 << 20

        /// A request's body.
        enum Body: Sendable {
            /// Bytes in memory.
            case data(Data)
            /// A range of a file, read a part at a time as the connection takes it.
            case file(UploadBody)
        }

        /// Sends one request; hands the answer's head to `head`, then its body to `chunk`, part
        /// by part as it arrives.
        ///
        /// Cancelling the calling task cancels the request.
        ///
        /// - Parameters:
        ///   - url: The request's address.
        ///   - method: Its method.
        ///   - headers: Its header fields.
        ///   - body: Its body, if any.
        ///   - timeout: The longest the whole exchange may take; without it, only the wait for
        ///     each next part of the answer is bounded (``client``).
        ///   - sent: Told the body's bytes handed to the connection so far, as each part goes.
        ///   - head: Told the answer's head; returns whether to read the body.
        ///   - chunk: Told each part of the body.
        /// - Throws: ``SyncError`` of kind ``SyncError/Kind/offline`` when the exchange fails or
        ///   is cancelled, of kind ``SyncError/Kind/storage`` when a file body cannot be read;
        ///   what `head` or `chunk` throws.
        static func send(
            _ url: URL, method: String, headers: [String: String], body: Body?, timeout: TimeInterval? = nil,
            sent: @escaping @Sendable (Int) -> Void = { _ in },
            head: (Head) throws(SyncError) -> Bool,
            chunk: (ByteBuffer) throws(SyncError) -> Void
        ) async throws(SyncError) {
            var request = HTTPClientRequest(url: url.absoluteString)
            var input: OpenFile?
            defer { input?.closeFile() }
            request.method = HTTPMethod(rawValue: method)
            for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
            switch body {
            case .data(let data):
                request.body = .stream(BodyParts(data: data, sent: sent), length: .known(Int64(data.count)))
            case .file(let file):
                let opened: OpenFile
                do {
                    opened = try OpenFile(path: file.file.path)
                } catch {
                    throw UploadBody.unreadable(file.file, file.range, error)
                }
                input = opened
                request.body = .stream(
                    FileParts(body: file, input: opened, sent: sent), length: .known(Int64(file.range.count)))
            case nil:
                break
            }
            let deadline: NIODeadline =
                if let timeout { .now() + .milliseconds(Int64(timeout * 1_000)) } else { .distantFuture }
            do {
                let response = try await client.execute(request, deadline: deadline)
                let answer = Head(status: Int(response.status.code), headers: response.headers)
                guard try head(answer) else { return }
                for try await part in response.body {
                    try chunk(part)
                }
            } catch let error as SyncError {
                throw error
            } catch {
                throw offline(error)
            }
        }

        /// Sends one request and collects its answer: status, header fields and the whole body.
        static func exchange(
            _ url: URL, method: String, headers: [String: String], body: Data?, timeout: TimeInterval? = nil
        ) async throws(SyncError) -> (head: Head, body: Data) {
            var answer: Head?
            var collected = Data()
            try await send(
                url, method: method, headers: headers, body: body.map { .data($0) }, timeout: timeout,
                head: { head throws(SyncError) in
                    answer = head
                    // The length sent; an answer inflated from gzip grows past it.
                    if let length = head.header("Content-Length").flatMap(Int.init), length > 0 {
                        collected.reserveCapacity(Swift.min(length, 64 << 20))
                    }
                    return true
                },
                chunk: { part throws(SyncError) in collected.append(contentsOf: part.readableBytesView) })
            guard let answer else { throw SyncError(.protocolViolation, "not an HTTP answer") }
            return (answer, collected)
        }

        /// An error of the exchange as the client reports it.
        private static func offline(_ error: any Error) -> SyncError {
            if error is CancellationError || (error as? HTTPClientError) == .cancelled {
                return SyncError(.offline, "the request was cancelled", underlyingError: error)
            }
            if (error as? HTTPClientError) == .deadlineExceeded || (error as? HTTPClientError) == .readTimeout {
                return SyncError(.offline, "the request timed out", underlyingError: error)
            }
            return SyncError(.offline, String(describing: error), underlyingError: error)
        }
    }

    /// A request body in parts of ``AsyncHTTPExchange/bodyChunk`` bytes, telling the bytes taken
    /// so far as each part is taken.
    private struct BodyParts: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let data: Data
        let sent: @Sendable (Int) -> Void

        struct AsyncIterator: AsyncIteratorProtocol {
            let data: Data
            let sent: @Sendable (Int) -> Void
            var offset = 0

            mutating func next() async -> ByteBuffer? {
                guard offset < data.count else { return nil }
                let end = Swift.min(offset + AsyncHTTPExchange.bodyChunk, data.count)
                let part = ByteBuffer(bytes: data[data.startIndex + offset..<data.startIndex + end])
                offset = end
                sent(offset)
                return part
            }
        }

        func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(data: data, sent: sent)
        }
    }

    /// A range of a file as a request body, read in parts of ``AsyncHTTPExchange/bodyChunk``
    /// bytes as the connection takes them (a MiB held at a time, whatever the file's size),
    /// telling the bytes taken so far as each part is taken.
    private struct FileParts: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let body: UploadBody
        let input: OpenFile
        let sent: @Sendable (Int) -> Void

        struct AsyncIterator: AsyncIteratorProtocol {
            let body: UploadBody
            let input: OpenFile
            let sent: @Sendable (Int) -> Void
            var offset: Int64

            mutating func next() async throws -> ByteBuffer? {
                guard offset < body.range.upperBound else { return nil }
                let count = Int(Swift.min(Int64(AsyncHTTPExchange.bodyChunk), body.range.upperBound - offset))
                do {
                    let part = try input.read(count, at: offset)
                    offset += Int64(count)
                    sent(Int(offset - body.range.lowerBound))
                    return part
                } catch {
                    throw UploadBody.unreadable(body.file, body.range, error)
                }
            }
        }

        func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(body: body, input: input, sent: sent, offset: body.range.lowerBound)
        }
    }

    /// A file open for reading by one request, closed by the request once it has its answer:
    /// AsyncHTTPClient may keep a body it stopped taking (an early answer) for as long as it likes.
    final class OpenFile: Sendable {
        /// The descriptor; `nil` once closed.
        private let descriptor: LockedValue<Int32?>

        /// Opens `path` for reading.
        init(path: String) throws {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            self.descriptor = LockedValue(descriptor)
        }

        deinit {
            closeFile()
        }

        /// Closes the file; a read after it throws.
        func closeFile() {
            descriptor.withLock { descriptor in
                if let open = descriptor { _ = Glibc.close(open) }
                descriptor = nil
            }
        }

        /// The `count` bytes at `offset`; throws when the file ends before them, cannot be read,
        /// or was closed.
        func read(_ count: Int, at offset: Int64) throws -> ByteBuffer {
            try descriptor.withLock { descriptor in
                guard let descriptor else { throw POSIXError(.EBADF) }
                var buffer = ByteBufferAllocator().buffer(capacity: count)
                while buffer.readableBytes < count {
                    let (done, wanted) = (buffer.readableBytes, count - buffer.readableBytes)
                    var result = 0
                    var failure: Int32 = 0
                    buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: wanted) { pointer in
                        result = pread(descriptor, pointer.baseAddress, wanted, off_t(offset) + off_t(done))
                        failure = errno
                        return Swift.max(result, 0)
                    }
                    if result < 0 && failure == EINTR { continue }
                    guard result > 0 else {
                        throw POSIXError(result == 0 ? .ENODATA : POSIXErrorCode(rawValue: failure) ?? .EIO)
                    }
                }
                return buffer
            }
        }
    }
#endif
