import Foundation

/// Carries the wire protocol's requests to a server and brings back its answers.
///
/// ``SyncClient`` speaks the protocol (tokens, paths, bodies, the answers' meaning) and hands each
/// request to a transport: ``HTTPSyncTransport`` sends it over the network; a transport that hands
/// requests to a server's router in the same process lets tests sync without a socket.
///
/// A transport reports a request that never got an answer as a ``SyncError`` of kind
/// ``SyncError/Kind/offline``, and returns every answer it got, whatever its status.
package protocol SyncTransport: Sendable {
    /// The server's address. Attachments travel over HTTP to it, whatever the transport.
    var server: URL { get }

    /// Sends one request and returns the server's answer.
    ///
    /// - Throws: ``SyncError`` of kind ``SyncError/Kind/offline`` when no answer came.
    func send(_ request: SyncTransportRequest) async throws(SyncError) -> SyncTransportResponse
}

/// One request of the wire protocol, as a transport sends it.
package struct SyncTransportRequest: Sendable, Equatable {
    /// The HTTP method, `GET` or `POST`.
    package var method: String
    /// The path under the server's address, such as `v1/pull`.
    package var path: String
    /// The query's items, in order.
    package var query: [URLQueryItem]
    /// Header fields by name.
    package var headers: [String: String]
    /// The body, if any.
    package var body: Data?
    /// How long to wait for the answer; `nil` for the transport's default.
    package var timeout: TimeInterval?

    package init(
        method: String, path: String, query: [URLQueryItem] = [], headers: [String: String] = [:],
        body: Data? = nil, timeout: TimeInterval? = nil
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// The path from the server's root with the query, as in an HTTP request line: `/v1/pull?cursor=0`.
    package var target: String {
        var components = URLComponents()
        components.path = "/" + path
        components.queryItems = query.isEmpty ? nil : query
        return components.string ?? "/" + path
    }
}

/// A server's answer to a ``SyncTransportRequest``.
package struct SyncTransportResponse: Sendable, Equatable {
    /// The HTTP status.
    package var status: Int
    /// Header fields by lowercased name.
    package var headers: [String: String]
    /// The body, decompressed.
    package var body: Data

    package init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }) { first, _ in first }
        self.body = body
    }

    /// The value of the header field `name`, whatever its case.
    package func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }
}
