import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@Suite struct AuthenticationTests {
    @Test(arguments: Backend.allCases)
    func healthAnswersWithoutAToken(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let response = try await harness.send(.get, "/v1/health", token: nil)
            #expect(response.status == .ok)
            #expect(try response.decode(HealthResponse.self) == HealthResponse(status: "ok", protocolVersion: 1))
        }
    }

    @Test(arguments: Backend.allCases)
    func pushAndPullWithoutAValidTokenAre401WithAJSONError(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            let revoked = try await harness.database.addToken(forUserNamed: "ann")
            #expect(try await harness.database.revokeToken(revoked))
            let push = Array(#"{"clientID":"c","mutations":[]}"#.utf8)
            let headerCases: [HTTPFields] = [
                [:],
                [.authorization: "Bearer"],
                [.authorization: "Bearer "],
                [.authorization: "Bearer not-a-token"],
                [.authorization: "Bearer \(revoked)"],
                [.authorization: "Basic \(token)"],
                [.authorization: token],
                [.authorization: "Bearer \(token)x"],
            ]
            for headers in headerCases {
                for (method, uri, body) in [(HTTPRequest.Method.post, "/v1/push", push), (.get, "/v1/pull?cursor=0", nil)] {
                    let response = try await harness.send(method, uri, token: nil, body: body, headers: headers)
                    #expect(response.status == .unauthorized, "\(method) \(uri) with \(headers)")
                    #expect(response.headers[.wwwAuthenticate] == "Bearer")
                    _ = try response.errorBody()
                }
            }
            // The scheme is case-insensitive; the real token works.
            let response = try await harness.send(.get, "/v1/pull", token: nil, headers: [.authorization: "bearer \(token)"])
            #expect(response.status == .ok)
        }
    }

    @Test(arguments: Backend.allCases)
    func aSecondTokenSeesTheSameRecordsAndARevokedTokenIsRefusedAtOnce(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let phone = try await harness.addUser("ann")
            let laptop = try await harness.database.addToken(forUserNamed: "ann")
            #expect(phone != laptop)
            _ = try await harness.push(
                [Mutation(mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: .strings(["text": "hi"]))],
                token: phone
            )
            #expect(try await harness.pullAll(token: laptop).map(\.id) == ["n"])

            #expect(try await harness.database.revokeToken(laptop))
            #expect(try await harness.send(.get, "/v1/pull", token: laptop).status == .unauthorized)
            #expect(try await harness.send(.get, "/v1/pull", token: phone).status == .ok)
            #expect(try await harness.database.revokeToken(laptop) == false)
        }
    }
}
