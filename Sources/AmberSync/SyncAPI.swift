import AmberSyncProtocol
import Foundation

/// The calls of the wire protocol over a ``SyncTransport``: requests sent with the bearer token,
/// answers read exactly.
struct SyncAPI: Sendable {
    let transport: any SyncTransport
    let tokens: SyncTokenSource

    /// A `200` answer, with the database the server named in it.
    struct Answer<Body: Sendable>: Sendable {
        let body: Body
        /// The `Amber-Database-ID` header, when the server sent one.
        let databaseID: String?
        /// For a push, the JSON `body` was read from, as the server sent it (`nil` for a pull,
        /// whose pages would otherwise hold their text beside their records while they wait).
        var text: Data? = nil
    }

    /// Sends a push.
    ///
    /// - Parameter written: The request's mutations as it writes them (the elements of its
    ///   array), when they are written already: sent as they are.
    func push(_ request: PushRequest, written: [UInt8]? = nil) async throws(SyncError) -> Answer<PushResponse> {
        var body = JSONWriter(capacity: (written?.count ?? request.mutations.count * 256) + 256)
        if let written {
            PushRequest.write(
                clientID: request.clientID, cursor: request.cursor, cursorTag: request.cursorTag, to: &body
            ) { $0.rawBytes(written) }
        } else {
            request.write(to: &body)
        }
        let response: Answer<PushResponse> = try await send(
            SyncTransportRequest(
                method: "POST", path: "v1/push", headers: ["Content-Type": "application/json"],
                body: Data(body.bytes)),
            keepingText: true)
        guard response.body.results.map(\.mutationID) == request.mutations.map(\.mutationID) else {
            throw SyncError(.protocolViolation, "the push answer does not list one result per mutation, in order")
        }
        return response
    }

    func pull(cursor: Int64, tag: String?, limit: Int = SyncLimits.defaultPullLimit, wait: Int = 0)
        async throws(SyncError) -> Answer<PullResponse>
    {
        let query =
            [
                URLQueryItem(name: "cursor", value: String(cursor)),
                URLQueryItem(name: "limit", value: String(limit)),
            ] + (wait > 0 ? [URLQueryItem(name: "wait", value: String(wait))] : [])
            + (tag.map { [URLQueryItem(name: "cursorTag", value: $0)] } ?? [])
        return try await send(
            SyncTransportRequest(
                method: "GET", path: "v1/pull", query: query, timeout: wait > 0 ? TimeInterval(wait + 30) : nil))
    }

    /// Sends a request and decodes a `200` answer; any other answer becomes a ``SyncError``.
    ///
    /// A `401` asks the token provider for a fresh token and sends the request once more with it.
    private func send<Response: JSONWireDecodable & Sendable>(
        _ request: SyncTransportRequest, keepingText: Bool = false
    ) async throws(SyncError) -> Answer<Response> {
        var request = request
        var token = try await tokens.token()
        request.headers["Authorization"] = "Bearer \(token)"
        var response = try await transport.send(request)
        if response.status == 401, let fresh = try await tokens.token(replacing: token) {
            token = fresh
            request.headers["Authorization"] = "Bearer \(token)"
            response = try await transport.send(request)
        }
        guard response.status == 200 else {
            let error = try? ErrorResponse(jsonBytes: response.body)
            let message = error?.error ?? String(decoding: response.body.prefix(200), as: UTF8.self)
            if response.status == 401 { throw SyncError(.unauthorized, message) }
            throw SyncError(.server(status: response.status), message, code: error?.code)
        }
        // Read exactly: numbers keep their digits, strings and keys their bytes.
        do {
            return Answer(
                body: try Response(jsonBytes: response.body), databaseID: response.header(SyncHeader.databaseID),
                text: keepingText ? response.body : nil)
        } catch {
            throw SyncError(
                .protocolViolation,
                "cannot read the answer to /\(request.path): \(error.sentence(subject: "The answer"))",
                underlyingError: error)
        }
    }
}
