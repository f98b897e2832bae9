import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// The protocol's OpenAPI document, `openapi.json` at the repository's root: served as committed,
/// and naming every route the server answers.
@Suite(.boundedConcurrency) struct OpenAPIDocumentTests {
    /// The committed document, read from the repository.
    static func committedDocument() throws -> Data {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try Data(contentsOf: root.appendingPathComponent("openapi.json"))
    }

    @Test func theServerAnswersTheCommittedDocumentWithoutAToken() async throws {
        let committed = try Self.committedDocument()
        try await withHarness(.sqlite) { harness in
            let response = try await harness.send(.get, "/v1/openapi.json", token: nil)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json")
            #expect(Data(response.body.readableBytesView) == committed, "run scripts/openapi embed")
        }
    }

    @Test func theDocumentNamesEveryRouteTheServerAnswersAndNoOther() async throws {
        let document = try #require(
            try JSONSerialization.jsonObject(with: Self.committedDocument()) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
        let documented = Set(
            paths.flatMap { path, operations in
                operations.keys.filter(methods.contains).map { "\($0.uppercased()) \(path)" }
            })
        try await Backend.sqlite.withDatabase { test in
            let routes = SyncServer(database: test.database).routes
            #expect(Set(routes) == documented)
            #expect(routes.count == documented.count)
        }
    }

    @Test(arguments: Backend.allCases)
    func aKnownPathAskedWithAnotherMethodIs405WithAllow(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            let requests: [(HTTPRequest.Method, String, String?, String)] = [
                (.get, "/v1/push", token, "POST"), (.delete, "/v1/push", nil, "POST"),
                (.post, "/v1/pull", token, "GET"), (.put, "/v1/health", nil, "GET"),
                (.head, "/v1/openapi.json", nil, "GET"), (.post, "/metrics", nil, "GET"),
                (.patch, "/v1/pull/", token, "GET"),
                (.post, "/v1/attachments/\(String(repeating: "ab", count: 32))", token, "GET, HEAD, PUT"),
                (.delete, "/v1/attachments/x", nil, "GET, HEAD, PUT"),
            ]
            for (method, uri, token, allowed) in requests {
                let response = try await harness.send(method, uri, token: token)
                #expect(response.status == .methodNotAllowed, "\(method) \(uri)")
                #expect(response.headers[.allow] == allowed, "\(method) \(uri)")
                if method != .head {
                    let error = try response.errorBody()
                    #expect(error.error.contains(allowed), "\(error.error)")
                }
            }
            let unknown = try await harness.send(.get, "/v1/pulls", token: token)
            #expect(unknown.status == .notFound)
            #expect(try unknown.errorBody().error.contains("/v1/openapi.json"))
            #expect(try unknown.errorBody().error.contains("/v1/attachments/{sha256}"))
            let unknownAttachmentRoute = try await harness.send(.get, "/v1/attachments/a/b", token: token)
            #expect(unknownAttachmentRoute.status == .notFound)
            #expect(try unknownAttachmentRoute.errorBody().error.contains("/v1/attachments/a/b"))
        }
    }
}
