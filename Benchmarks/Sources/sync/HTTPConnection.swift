import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// One keep-alive HTTP/1.1 connection that sends a request at a time and reads its answer whole:
/// the load's client for the push figures.
///
/// On this machine's two cores the load's client runs beside the server and its database, so
/// what the client spends on each request is taken from them: with async-http-client as the
/// load's client, 100 users' single-record pushes cost the client about as much CPU as the
/// server (Benchmarks/README.md, Load). This client is NIO's HTTP/1.1 codec and one handler;
/// the server sees the same requests, one at a time on each client's connection.
final class HTTPConnection: Sendable {
    let channel: any Channel
    let host: String

    private init(channel: any Channel, host: String) {
        self.channel = channel
        self.host = host
    }

    /// A connection to the server at `url` (`http://HOST:PORT`).
    static func connect(_ url: String) async throws -> HTTPConnection {
        guard let components = URLComponents(string: url), let host = components.host, let port = components.port
        else { throw BenchmarkError("cannot read the server URL \(url)") }
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ExchangeHandler())
                }
            }
            .connect(host: host, port: port).get()
        return HTTPConnection(channel: channel, host: "\(host):\(port)")
    }

    /// Sends a request and returns the answer's status and body.
    func send(_ method: HTTPMethod, _ path: String, token: String, json body: ByteBuffer? = nil) async throws
        -> (status: HTTPResponseStatus, body: ByteBuffer)
    {
        var headers: HTTPHeaders = ["Host": host, "Authorization": "Bearer \(token)"]
        if let body {
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Content-Length", value: String(body.readableBytes))
        }
        let promise = channel.eventLoop.makePromise(of: Answer.self)
        let exchange = Exchange(
            head: HTTPRequestHead(version: .http1_1, method: method, uri: path, headers: headers), body: body,
            answer: promise)
        // A write that never reaches the handler (the connection closed first) fails the answer too.
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { promise.fail($0) }
        channel.writeAndFlush(exchange, promise: written)
        let answer = try await promise.futureResult.get()
        return (answer.status, answer.body)
    }

    /// Pushes `mutations` of `clientID` and returns the server's results, as ``LoadClient/push``.
    func push(token: String, clientID: String, mutations: [WireMutation]) async throws -> [WireResult] {
        let body = try WirePush.body(clientID: clientID, mutations: mutations)
        let answer = try await send(.POST, "/v1/push", token: token, json: body)
        guard answer.status == .ok else {
            throw BenchmarkError("POST /v1/push answered \(answer.status.code): \(String(buffer: answer.body))")
        }
        return try WirePushResponse.results(from: Data(answer.body.readableBytesView), of: mutations)
    }

    /// Pulls a page after `cursor`, to open the connection and warm the server before a figure.
    func pull(token: String, cursor: Int64, limit: Int) async throws {
        let answer = try await send(.GET, "/v1/pull?cursor=\(cursor)&limit=\(limit)&wait=0", token: token)
        guard answer.status == .ok else {
            throw BenchmarkError("GET /v1/pull answered \(answer.status.code): \(String(buffer: answer.body))")
        }
    }

    func close() {
        channel.close(promise: nil)
    }

    struct Answer: Sendable {
        var status: HTTPResponseStatus
        var body: ByteBuffer
    }

    /// A request and the promise of its answer, written to the channel as one value.
    struct Exchange: Sendable {
        let head: HTTPRequestHead
        let body: ByteBuffer?
        let answer: EventLoopPromise<Answer>
    }

    /// Writes an exchange's request and completes its promise with the answer read back; fails
    /// it when the connection fails or closes first.
    final class ExchangeHandler: ChannelDuplexHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundIn = Exchange
        typealias OutboundOut = HTTPClientRequestPart

        private var waiting: EventLoopPromise<Answer>?
        private var answer: Answer?

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let exchange = unwrapOutboundIn(data)
            guard waiting == nil else {
                exchange.answer.fail(BenchmarkError("a request was sent before the last one was answered"))
                return
            }
            waiting = exchange.answer
            context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
            if let body = exchange.body {
                context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            }
            context.write(wrapOutboundOut(.end(nil)), promise: promise)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                answer = Answer(status: head.status, body: context.channel.allocator.buffer(capacity: 0))
            case .body(var bytes):
                answer?.body.writeBuffer(&bytes)
            case .end:
                guard let answer, let waiting else { return }
                (self.answer, self.waiting) = (nil, nil)
                waiting.succeed(answer)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            fail(BenchmarkError("the connection failed: \(error)"))
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            fail(BenchmarkError("the server closed the connection"))
            context.fireChannelInactive()
        }

        private func fail(_ error: BenchmarkError) {
            let waiting = self.waiting
            (self.answer, self.waiting) = (nil, nil)
            waiting?.fail(error)
        }
    }
}
