import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@Suite(.boundedConcurrency) struct AuthenticationTests {
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
                for (method, uri, body) in [
                    (HTTPRequest.Method.post, "/v1/push", push), (.get, "/v1/pull?cursor=0", nil),
                ] {
                    let response = try await harness.send(method, uri, token: nil, body: body, headers: headers)
                    #expect(response.status == .unauthorized, "\(method) \(uri) with \(headers)")
                    #expect(response.headers[.wwwAuthenticate] == "Bearer")
                    _ = try response.errorBody()
                }
            }
            // The scheme is case-insensitive; the real token works.
            let response = try await harness.send(
                .get, "/v1/pull", token: nil, headers: [.authorization: "bearer \(token)"])
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
                [
                    Mutation(
                        mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: .strings(["text": "hi"]))
                ],
                token: phone
            )
            #expect(try await harness.pullAll(token: laptop).map(\.id) == ["n"])

            #expect(try await harness.database.revokeToken(laptop))
            #expect(try await harness.send(.get, "/v1/pull", token: laptop).status == .unauthorized)
            #expect(try await harness.send(.get, "/v1/pull", token: phone).status == .ok)
            #expect(try await harness.database.revokeToken(laptop) == false)
        }
    }

    /// A server that remembers a token's user leaves the check to the push; a token revoked
    /// through another server process must still be refused, before any other answer.
    @Test(arguments: Backend.allCases)
    func aPushWithATokenRevokedThroughAnotherProcessIsRefusedBeforeAnythingElse(backend: Backend) async throws {
        try await backend.withDatabase { test in
            try await test.withSecondProcess { other in
                let logger = Logger.quietTests
                let server = SyncServer(database: test.database, logger: logger)
                try await server.makeApplication().test(.router) { client in
                    let harness = Harness(client: client, database: test.database)
                    let token = try await harness.addUser("ann")
                    let note = { (id: Int64) in
                        Mutation(mutationID: id, collection: "notes", id: "n\(id)", baseVersion: nil, value: [:])
                    }
                    // The first push looks the token up; the second leaves it to the push.
                    #expect(
                        try await harness.push([note(1)], clientID: "phone", token: token).map(\.status) == [.applied])
                    #expect(
                        try await harness.push([note(2)], clientID: "phone", token: token).map(\.status) == [.applied])

                    #expect(try await other.revokeToken(token))
                    let refused = try await harness.send(
                        .post, "/v1/push", token: token,
                        body: Array(try JSONEncoder().encode(PushRequest(clientID: "phone", mutations: [note(3)]))))
                    #expect(refused.status == .unauthorized)

                    // A body the server cannot take, with a token revoked elsewhere: refused for the token.
                    let laptop = try await harness.database.addToken(forUserNamed: "ann")
                    let laptopNote = Mutation(
                        mutationID: 1, collection: "notes", id: "l1", baseVersion: nil, value: [:])
                    #expect(
                        try await harness.push([laptopNote], clientID: "laptop", token: laptop).map(\.status) == [
                            .applied
                        ])
                    #expect(try await other.revokeToken(laptop))
                    for body in [#"{"clientID":"laptop","mutations":[{"#, #"{"clientID":"","mutations":[]}"#] {
                        let response = try await harness.send(.post, "/v1/push", token: laptop, body: Array(body.utf8))
                        #expect(response.status == .unauthorized, "\(body)")
                    }

                    let phone = try await harness.database.addToken(forUserNamed: "ann")
                    #expect(try await harness.pullAll(token: phone).map(\.id) == ["n1", "n2", "l1"])
                }
            }
        }
    }
}
