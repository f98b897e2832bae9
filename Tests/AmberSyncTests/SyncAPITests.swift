import Amber
import AmberLock
import AmberSyncProtocol
import AmberTestSupport
import Foundation
import Testing

@testable import AmberSync

/// The protocol's calls over a transport that answers from a script: what is sent, and what each
/// answer becomes, with no server.
@Suite(.boundedConcurrency) struct SyncAPITests {
    /// Answers each request with the next of `answers`, and keeps the requests.
    final class ScriptedTransport: SyncTransport {
        let server = URL(string: "http://scripted.invalid")!
        private let state: LockedValue<(answers: [SyncTransportResponse], sent: [SyncTransportRequest])>

        init(_ answers: [SyncTransportResponse]) {
            state = LockedValue((answers, []))
        }

        var sent: [SyncTransportRequest] { state.withLock { $0.sent } }

        func send(_ request: SyncTransportRequest) async throws(SyncError) -> SyncTransportResponse {
            let answer = state.withLock { state -> SyncTransportResponse? in
                state.sent.append(request)
                return state.answers.isEmpty ? nil : state.answers.removeFirst()
            }
            guard let answer else { throw SyncError(.offline, "no answer left in the script") }
            return answer
        }
    }

    static func json(_ text: String, status: Int = 200, headers: [String: String] = [:]) -> SyncTransportResponse {
        SyncTransportResponse(status: status, headers: headers, body: Data(text.utf8))
    }

    static let emptyPage = #"{"changes":[],"cursor":7,"hasMore":false,"cursorTag":"t7"}"#

    @Test func aPullSendsItsQueryAndTheTokenAndReadsTheDatabaseHeader() async throws {
        let transport = ScriptedTransport([Self.json(Self.emptyPage, headers: ["Amber-Database-ID": "db-1"])])
        let api = SyncAPI(transport: transport, tokens: SyncTokenSource(provider: { "secret" }))
        let answer = try await api.pull(cursor: 3, tag: "a&b=c", limit: 10, wait: 5)
        #expect(answer.body.cursor == 7 && answer.body.cursorTag == "t7")
        #expect(answer.databaseID == "db-1", "header names are matched whatever their case")
        let request = try #require(transport.sent.first)
        #expect(request.method == "GET" && request.headers["Authorization"] == "Bearer secret")
        #expect(request.target == "/v1/pull?cursor=3&limit=10&wait=5&cursorTag=a%26b%3Dc")
        #expect(request.timeout == 35, "a long poll waits longer than it asks the server to")
    }

    @Test func a401AsksTheProviderForAFreshTokenAndSendsOnceMore() async throws {
        let tokens = LockedValue(["old", "new"])
        let transport = ScriptedTransport([
            Self.json(#"{"error":"expired"}"#, status: 401), Self.json(Self.emptyPage),
        ])
        let api = SyncAPI(
            transport: transport, tokens: SyncTokenSource(provider: { tokens.withLock { $0.removeFirst() } }))
        _ = try await api.pull(cursor: 0, tag: nil)
        #expect(transport.sent.map { $0.headers["Authorization"] } == ["Bearer old", "Bearer new"])
    }

    @Test func aRefusalOfTheSameTokenAgainIsUnauthorized() async throws {
        let transport = ScriptedTransport([Self.json(#"{"error":"the server refused the token"}"#, status: 401)])
        let api = SyncAPI(transport: transport, tokens: SyncTokenSource(provider: { "constant" }))
        await #expect {
            _ = try await api.pull(cursor: 0, tag: nil)
        } throws: { error in
            (error as? SyncError)?.kind == .unauthorized && transport.sent.count == 1
        }
    }

    @Test func anErrorAnswerKeepsTheServersSentenceAndCode() async throws {
        let transport = ScriptedTransport([
            Self.json(#"{"error":"cursor too old","code":"cursor_expired"}"#, status: 410)
        ])
        let api = SyncAPI(transport: transport, tokens: SyncTokenSource(provider: { "t" }))
        await #expect {
            _ = try await api.pull(cursor: 9, tag: nil)
        } throws: { error in
            guard let error = error as? SyncError else { return false }
            return error.kind == .server(status: 410) && error.code == "cursor_expired"
                && error.message == "cursor too old"
        }
    }

    @Test(arguments: [
        #"{"results":[]}"#,
        #"{"results":[{"mutationID":2,"status":"applied","version":1}]}"#,
        #"{"results":"#,
    ])
    func aPushAnswerThatDoesNotAnswerEachMutationInOrderIsAProtocolViolation(answer: String) async throws {
        let transport = ScriptedTransport([Self.json(answer)])
        let api = SyncAPI(transport: transport, tokens: SyncTokenSource(provider: { "t" }))
        let mutation = Mutation(mutationID: 1, collection: "notes", id: "a", baseVersion: nil, record: nil, fields: nil)
        await #expect {
            _ = try await api.push(PushRequest(clientID: "c", mutations: [mutation]))
        } throws: { error in
            (error as? SyncError)?.kind == .protocolViolation
        }
        #expect(transport.sent.first?.headers["Content-Type"] == "application/json")
    }
}
