import AmberLock
import AmberSyncProtocol
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// The HTTP/1.1 connections of the sync server: Hummingbird's, with the server's limits.
///
/// - A connection silent for ``SyncServerLimits/idleTimeout`` while it sends a request (or
///   between requests) is closed.
/// - A connection past ``SyncServerLimits/maximumConnections`` is answered `503` with
///   `Retry-After` and closed.
/// - A request the HTTP parser refuses (a garbage request line, headers too large, a bad
///   `Content-Length`) is answered `400` with an `{"error": ...}` body, and the connection closed.
/// - The unread rest of a refused body is read and dropped, up to ``drainLimit`` bytes, so a
///   client that sends its whole body before it reads (as with `Connection: close`) gets its
///   answer; past that the connection is closed.
struct SyncHTTPChannel: ServerChildChannel {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let base: HTTP1Channel
    let limits: SyncServerLimits
    let maximumBodySize: Int
    let connections: ConnectionCount

    init(
        responder: @escaping HTTPChannelHandler.Responder, limits: SyncServerLimits, maximumBodySize: Int,
        connections: ConnectionCount
    ) {
        // Headers stay far below Hummingbird's default 80 KiB: a request of this protocol carries a few.
        let decoder = HTTP1Channel.Configuration.DecoderConfiguration(
            maxHeaderFieldSize: 16 * 1_024, maxHeaderListSize: 64 * 1_024, maxHeaderFieldCount: 100)
        let timeout = limits.idleTimeout.components
        let nanoseconds = timeout.seconds * 1_000_000_000 + timeout.attoseconds / 1_000_000_000
        base = HTTP1Channel(
            responder: responder,
            configuration: .init(idleTimeout: .nanoseconds(nanoseconds), httpDecoderConfiguration: decoder)
        )
        self.limits = limits
        self.maximumBodySize = maximumBodySize
        self.connections = connections
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        base.setup(channel: channel, logger: logger)
    }

    func handle(value asyncChannel: Value, logger: Logger) async {
        let admitted = connections.open(limit: limits.maximumConnections)
        defer { connections.close() }
        do {
            try await withTaskCancellationHandler {
                try await asyncChannel.executeThenClose { inbound, outbound in
                    do {
                        if admitted {
                            try await serve(inbound, outbound, channel: asyncChannel.channel)
                        } else {
                            // Read the request line and headers first: a client still sending
                            // would otherwise see a reset instead of the answer.
                            var iterator = inbound.makeAsyncIterator()
                            _ = try await iterator.next()
                            logger.warning("Refused a connection: \(limits.maximumConnections) are open.")
                            try await write(
                                Self.error(
                                    .serviceUnavailable,
                                    "The server has too many connections open; try again in \(limits.retryAfterSeconds) seconds.",
                                    retryAfter: limits.retryAfterSeconds),
                                to: outbound)
                        }
                    } catch let error as HTTPParserError {
                        logger.debug("HTTP parse error, closing the connection: \(error)")
                        try await write(
                            Self.error(.badRequest, "The request is not valid HTTP/1.1: \(Self.sentence(for: error))"),
                            to: outbound)
                    }
                    outbound.finish()
                    try await asyncChannel.channel.closeFuture.get()
                }
            } onCancel: {
                asyncChannel.channel.close(mode: .input, promise: nil)
            }
        } catch {
            logger.trace("Failed to read from or write to a connection: \(error)")
        }
    }

    /// Answers the requests of one connection in turn, as Hummingbird does, dropping the unread
    /// rest of each body up to a bound.
    private func serve(
        _ inbound: NIOAsyncChannelInboundStream<HTTPRequestPart>,
        _ outbound: NIOAsyncChannelOutboundWriter<HTTPResponsePart>,
        channel: any Channel
    ) async throws {
        var iterator = inbound.makeAsyncIterator()
        guard let first = try await iterator.next() else { return }
        guard case .head(var head) = first else { throw HTTPParserError.invalidInternalState }
        while true {
            let request = Request(head: head, body: RequestBody(asyncSequence: InboundBody(parts: iterator)))
            try await base.responder(request, ResponseWriter(outbound: outbound), channel)
            // Drop what the handler left of the body, up to a bound.
            var dropped = 0
            var part: HTTPRequestPart?
            while true {
                part = try await iterator.next()
                guard case .body(let bytes) = part else { break }
                dropped += bytes.readableBytes
                if dropped > drainLimit {
                    // Not worth reading on: close, and the client sees its answer or a reset.
                    channel.close(promise: nil)
                    return
                }
            }
            if request.headers[.connection]?.lowercased() == "close" { return }
            if case .end = part {
                part = try await iterator.next()
            }
            guard let part else { return }
            guard case .head(let next) = part else { throw HTTPParserError.invalidInternalState }
            head = next
        }
    }

    /// The most bytes of an unread body dropped before the connection is closed instead.
    var drainLimit: Int {
        max(maximumBodySize, 16 * 1_024 * 1_024)
    }

    private func write(_ parts: [HTTPResponsePart], to outbound: NIOAsyncChannelOutboundWriter<HTTPResponsePart>)
        async throws
    {
        try await outbound.write(contentsOf: parts)
    }

    /// A complete error answer with `Connection: close` and an `{"error": ...}` body.
    static func error(_ status: HTTPResponse.Status, _ sentence: String, retryAfter: Int? = nil)
        -> [HTTPResponsePart]
    {
        let body = ByteBuffer(bytes: (try? JSONEncoder().encode(ErrorResponse(error: sentence))) ?? Data("{}".utf8))
        var fields: HTTPFields = [
            .contentType: "application/json", .contentLength: String(body.readableBytes), .connection: "close",
        ]
        if let retryAfter { fields[.retryAfter] = String(retryAfter) }
        return [.head(HTTPResponse(status: status, headerFields: fields)), .body(body), .end(nil)]
    }

    /// What the parser found wrong, in words.
    static func sentence(for error: HTTPParserError) -> String {
        switch error {
        case .headerOverflow: "the headers are larger than the server accepts."
        case .invalidContentLength, .unexpectedContentLength: "the Content-Length header is not valid."
        case .invalidMethod: "the request line has no valid method."
        case .invalidURL: "the request line has no valid path."
        case .invalidVersion: "the request line has no valid HTTP version."
        case .invalidHeaderToken: "a header is not valid."
        case .invalidChunkSize: "a chunk size is not valid."
        default: "\(error)."
        }
    }
}

/// The body of the request being read: the body parts of the connection up to the request's end.
struct InboundBody: AsyncSequence, @unchecked Sendable {
    // @unchecked: one request reads the parts at a time, before the connection reads on.
    typealias Element = ByteBuffer
    let parts: NIOAsyncChannelInboundStream<HTTPRequestPart>.AsyncIterator

    struct AsyncIterator: AsyncIteratorProtocol {
        var parts: NIOAsyncChannelInboundStream<HTTPRequestPart>.AsyncIterator
        var done = false

        mutating func next() async throws -> ByteBuffer? {
            guard !done, let part = try await parts.next() else { return nil }
            switch part {
            case .body(let bytes):
                return bytes
            case .end:
                done = true
                return nil
            case .head:
                throw HTTPParserError.invalidInternalState
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(parts: parts)
    }
}

/// How many connections the server has open.
final class ConnectionCount: Sendable {
    private let count = LockedValue(0)

    /// Counts a new connection; whether it is within `limit`.
    func open(limit: Int) -> Bool {
        count.withLock { count in
            count += 1
            return count <= limit
        }
    }

    /// Counts a closed connection.
    func close() {
        count.withLock { $0 -= 1 }
    }
}
