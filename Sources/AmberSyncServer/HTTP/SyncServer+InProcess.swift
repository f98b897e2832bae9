import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

extension SyncServer {
    /// Answers requests with this server's router, without a socket: for clients in the same
    /// process, such as tests of the sync client.
    ///
    /// Every route and middleware answers as over HTTP (authentication, errors, metrics); what
    /// the HTTP channel does per connection (connection limits, timeouts of slow clients) does not
    /// apply. Migrate the database (``SyncDatabase/migrate()``) before the first request.
    ///
    /// - Parameter channel: The channel the requests' contexts name; none of the routes reads it.
    package func makeInProcessResponder(channel: any Channel) -> InProcessSyncResponder {
        InProcessSyncResponder(responder: makeRouter().buildResponder(), channel: channel, logger: logger)
    }
}

/// This server's router, answering requests handed to it in the same process.
package struct InProcessSyncResponder: Sendable {
    let responder: RouterResponder<SyncRequestContext>
    let channel: any Channel
    let logger: Logger

    /// An answer: its status, header fields and whole body.
    package struct Answer: Sendable {
        package let status: Int
        package let headers: [String: String]
        package let body: Data
    }

    /// Answers one request as the HTTP server would.
    ///
    /// - Parameters:
    ///   - method: The HTTP method, such as `GET`.
    ///   - target: The path and query, such as `/v1/pull?cursor=0`.
    ///   - headers: The request's header fields.
    ///   - body: The request's body.
    /// - Returns: The answer; an error no middleware turned into an answer is a `500`.
    package func respond(method: String, target: String, headers: [String: String], body: Data?) async -> Answer {
        var fields = HTTPFields()
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        if let body { fields[.contentLength] = String(body.count) }
        let request = Request(
            head: HTTPRequest(
                method: HTTPRequest.Method(method) ?? .get, scheme: "http", authority: "localhost", path: target,
                headerFields: fields),
            body: RequestBody(buffer: ByteBuffer(bytes: body ?? Data())))
        let context = SyncRequestContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
        let response: Response
        do {
            response = try await responder.respond(to: request, context: context)
        } catch {
            response = Response(status: .internalServerError)
        }
        let collected = CollectedBody()
        do {
            try await response.body.write(collected)
        } catch {
            return Answer(status: 500, headers: [:], body: Data())
        }
        var answerHeaders: [String: String] = [:]
        for field in response.headers { answerHeaders[field.name.canonicalName] = field.value }
        return Answer(status: response.status.code, headers: answerHeaders, body: collected.bytes)
    }
}

/// Collects a response's body.
private final class CollectedBody: ResponseBodyWriter, @unchecked Sendable {
    // @unchecked: a body is written by one task, one buffer after another, and read once it finished.
    private(set) var bytes = Data()

    func write(_ buffer: ByteBuffer) async throws {
        bytes.append(contentsOf: buffer.readableBytesView)
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
