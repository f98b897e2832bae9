import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// A sync server answering through `app.test(.router)`, with helpers that speak the wire protocol.
struct Harness: Sendable {
    let client: any TestClientProtocol
    let database: any SyncDatabase

    /// A new user and its token.
    func addUser(_ name: String) async throws -> String {
        try await database.addUser(named: name)
    }

    /// Sends a request; `token` becomes `Authorization: Bearer token`.
    func send(
        _ method: HTTPRequest.Method, _ uri: String, token: String?, body: [UInt8]? = nil, headers: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = headers
        if let token {
            headers[.authorization] = "Bearer \(token)"
        }
        return try await client.execute(
            uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(bytes: $0) }
        )
    }

    /// Pushes `mutations` and decodes the `200` answer.
    func push(_ mutations: [Mutation], clientID: String = "client", token: String) async throws -> [MutationResult] {
        let body = try JSONEncoder().encode(PushRequest(clientID: clientID, mutations: mutations))
        let response = try await send(.post, "/v1/push", token: token, body: Array(body))
        try #require(response.status == .ok, "push answered \(response.status): \(response.text)")
        return try response.decode(PushResponse.self).results
    }

    /// Pulls and decodes the `200` answer.
    ///
    /// The answer's `cursorTag` is checked here (present exactly when the cursor is above 0) and
    /// left out of what is returned, so that tests compare pages by their changes and cursors.
    func pull(token: String, cursor: Int64 = 0, limit: Int? = nil, wait: Int? = nil) async throws -> PullResponse {
        var uri = "/v1/pull?cursor=\(cursor)"
        if let limit { uri += "&limit=\(limit)" }
        if let wait { uri += "&wait=\(wait)" }
        let response = try await send(.get, uri, token: token)
        try #require(response.status == .ok, "pull answered \(response.status): \(response.text)")
        var page = try response.decode(PullResponse.self)
        #expect((page.cursorTag != nil) == (page.cursor > 0), "a cursor above 0 comes with its tag")
        page.cursorTag = nil
        return page
    }

    /// The samples of `GET /metrics`, by name and labels as written: `amber_sync_waiting_pulls`,
    /// `amber_sync_requests_total{route="/v1/push",status="200"}`.
    func metrics(sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Double] {
        let response = try await send(.get, "/metrics", token: nil)
        try #require(
            response.status == .ok, "metrics answered \(response.status): \(response.text)",
            sourceLocation: sourceLocation)
        #expect(
            response.headers[.contentType] == "text/plain; version=0.0.4; charset=utf-8", sourceLocation: sourceLocation
        )
        return try parsePrometheusText(response.text)
    }

    /// Everything the user has, pulled page by page from cursor 0.
    func pullAll(token: String) async throws -> [RecordChange] {
        var changes: [RecordChange] = []
        var cursor: Int64 = 0
        while true {
            let page = try await pull(token: token, cursor: cursor)
            changes += page.changes
            cursor = page.cursor
            if !page.hasMore { return changes }
        }
    }
}

/// Runs `body` against a fresh server on a fresh database of `backend`; `wrap` may put the
/// database behind another one (to inject faults) for the server only.
func withHarness(
    _ backend: Backend,
    maximumBodySize: Int = SyncLimits.defaultMaximumBody,
    jwtVerifier: JWTVerifier? = nil,
    wrap: (any SyncDatabase) -> any SyncDatabase = { $0 },
    _ body: @Sendable (Harness) async throws -> Void
) async throws {
    try await backend.withDatabase { test in
        let logger = Logger.quietTests
        let server = SyncServer(
            database: wrap(test.database), maximumBodySize: maximumBodySize, logger: logger, jwtVerifier: jwtVerifier)
        try await server.makeApplication().test(.router) { client in
            try await body(Harness(client: client, database: test.database))
        }
    }
}

extension TestResponse {
    /// The body as UTF-8 text.
    var text: String { String(buffer: body) }

    /// The body decoded from JSON: exactly, as the client reads it, for the protocol's types.
    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        if let wire = type as? any JSONWireDecodable.Type {
            return try wire.init(jsonBytes: body.readableBytesView) as! Value  // `wire` is `Value`
        }
        return try JSONDecoder().decode(type, from: Data(body.readableBytesView))
    }

    /// The `{"error": ...}` body of an error response, checked to be JSON with a non-empty sentence.
    func errorBody(sourceLocation: SourceLocation = #_sourceLocation) throws -> ErrorResponse {
        #expect(headers[.contentType] == "application/json", sourceLocation: sourceLocation)
        let error = try decode(ErrorResponse.self)
        #expect(!error.error.isEmpty, sourceLocation: sourceLocation)
        return error
    }
}

extension JSONObject {
    /// A record value from string fields: `["text": "hi"]`.
    static func strings(_ fields: KeyValuePairs<String, String>) -> JSONObject {
        var object: JSONObject = [:]
        for (key, value) in fields { object[key] = .string(value) }
        return object
    }
}

extension Logger {
    /// A logger for the tests' servers and databases: only critical messages.
    static var quietTests: Logger {
        var logger = Logger(label: "amber-sync-tests")
        logger.logLevel = .critical
        return logger
    }
}
