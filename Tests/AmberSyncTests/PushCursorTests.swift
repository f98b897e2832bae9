import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Testing

@testable import AmberSync

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A push that sends the client's cursor learns how far the cursor may move past its own
/// changes, so a phone does not download again what it just uploaded.
@Suite(.boundedConcurrency, .serialized) struct PushCursorTests {
    /// A phone that had notes before its first sync pushes them in several batches and pulls
    /// none of them back; another phone still gets them all.
    @Test(arguments: Backend.allCases)
    func aFirstSyncDoesNotPullItsOwnNotesBack(backend: Backend) async throws {
        let server = try await TestServer.start(backend, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let phone = try Device(server: server, token: token)
        let notes = (0..<1_200).map { note("note \($0)") }
        try phone.notes.add(contentsOf: notes)

        let first = try await phone.client.sync()
        #expect(first.pushed == notes.count)
        #expect(first.pulled == 0, "the first sync pulled \(first.pulled) of its own notes back")
        let again = try await phone.client.sync()
        #expect(again.pushed == 0 && again.pulled == 0)

        let other = try Device(server: server, token: token)
        let pulled = try await other.client.sync()
        #expect(pulled.pulled == notes.count)
        #expect(Set(other.notes.all) == Set(notes))
    }

    /// A change another phone made before the push sits among the versions after the cursor:
    /// the cursor does not move past it, and the pull brings it.
    @Test(arguments: Backend.allCases)
    func aChangeOfAnotherPhoneBeforeThePushIsStillPulled(backend: Backend) async throws {
        let server = try await TestServer.start(backend, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let day = try Device(server: server, token: token)
        let night = try Device(server: server, token: token)
        let nights = note("written at night")
        try night.notes.add(nights)
        _ = try await night.client.sync()

        let days = (0..<3).map { note("written by day \($0)") }
        try day.notes.add(contentsOf: days)
        let report = try await day.client.sync()
        #expect(report.pushed == days.count)
        #expect(day.notes[id: nights.id] == nights)

        // And a change made after the push, before the next sync, arrives too.
        let later = note("later at night")
        try night.notes.add(later)
        _ = try await night.client.sync()
        _ = try await day.client.sync()
        #expect(day.notes[id: later.id] == later)
        _ = try await night.client.sync()
        #expect(Set(night.notes.all) == Set(days + [nights, later]))
    }

    /// Over plain HTTP: the answer names the cursor and the tag a pull would give there, only
    /// when the versions after the cursor are all the request's; a negative cursor is refused.
    @Test func theAnswerCarriesTheCursorOnlyWhenTheVersionsAfterItAreTheRequests() async throws {
        let server = try await TestServer.start(.sqlite)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()

        let first = try await push(server, token: token, client: "a", cursor: 0, ids: ["1", "2"])
        #expect(first["cursor"] as? Int == 2)
        let tag = try #require(first["cursorTag"] as? String)
        let pull = try await send(server, token: token, "GET", "v1/pull?cursor=0", body: nil).json
        #expect(pull["cursor"] as? Int == 2)
        #expect(pull["cursorTag"] as? String == tag)

        // Another client's versions 1 and 2 lie after its cursor 0: no cursor in the answer.
        let second = try await push(server, token: token, client: "b", cursor: 0, ids: ["3"])
        #expect(second["cursor"] == nil && second["cursorTag"] == nil)
        // From its own place in the history, with the tag the server gives there, it may move.
        let place = try await send(server, token: token, "GET", "v1/pull?cursor=0", body: nil).json
        let tagAt3 = try #require(place["cursorTag"] as? String)
        #expect(place["cursor"] as? Int == 3)
        let third = try await push(
            server, token: token, client: "b", cursor: 3, cursorTag: tagAt3, ids: ["4"], firstMutation: 2)
        #expect(third["cursor"] as? Int == 4)
        // Without the tag, or with another (a history the server no longer has), it moves nowhere.
        let untagged = try await push(server, token: token, client: "b", cursor: 4, ids: ["4a"], firstMutation: 3)
        #expect(untagged["cursor"] == nil)
        let otherTag = try await push(
            server, token: token, client: "b", cursor: 5, cursorTag: tagAt3, ids: ["4b"], firstMutation: 4)
        #expect(otherTag["cursor"] == nil)
        // A cursor past any version the server could give moves nowhere, and breaks nothing.
        let far = try await push(server, token: token, client: "e", cursor: .max, ids: ["6"])
        #expect(far["cursor"] == nil)
        // Without a cursor, the answer is as before.
        let plain = try await push(server, token: token, client: "c", cursor: nil, ids: ["5"])
        #expect(plain["cursor"] == nil)

        let refused = try await send(
            server, token: token, "POST", "v1/push",
            body: #"{"clientID":"d","cursor":-1,"mutations":[]}"#)
        #expect(refused.status == 400)
        #expect((refused.json["error"] as? String)?.contains("cursor") == true)
        for tag in [#""""#, #""a b""#, "\"\(String(repeating: "x", count: 65))\""] {
            let badTag = try await send(
                server, token: token, "POST", "v1/push",
                body: #"{"clientID":"d","cursor":1,"cursorTag":\#(tag),"mutations":[]}"#)
            #expect(badTag.status == 400, "cursorTag \(tag)")
            #expect((badTag.json["error"] as? String)?.contains("cursorTag") == true)
        }
    }

    /// Results as (version, applied), the cursor, and where it may move.
    static let runs: [([(Int64, Bool)], Int64, Int64?)] = [
        ([(1, true), (2, true), (3, true)], 0, 3),
        ([(7, true), (6, true)], 5, 7),
        ([(6, true), (8, true)], 5, nil),
        ([(7, true)], 5, nil),
        ([(6, true), (4, false), (7, true)], 5, 7),
        ([(4, false)], 5, nil),
        ([], 0, nil),
        ([(1, true)], .max, nil),
        ([(.max, true)], .max - 1, .max),
        ([(3, true)], -5, nil),
    ]

    @Test(arguments: 0..<runs.count)
    func theCursorMovesOnlyOverAnUnbrokenRunOfAppliedVersions(run: Int) {
        let (results, cursor, expected) = Self.runs[run]
        let answers = results.enumerated().map { offset, result in
            MutationResult(
                mutationID: Int64(offset + 1), status: result.1 ? .applied : .conflict, version: result.0, value: nil)
        }
        #expect(PushResponse.cursor(after: cursor, applying: answers) == expected)
    }

    private func push(
        _ server: TestServer, token: String, client: String, cursor: Int64?, cursorTag: String? = nil, ids: [String],
        firstMutation: Int64 = 1
    ) async throws -> [String: Any] {
        let mutations = ids.enumerated().map { offset, id in
            #"{"mutationID":\#(firstMutation + Int64(offset)),"collection":"notes","id":"\#(id)","baseVersion":null,"value":{"id":"\#(id)"}}"#
        }
        let cursorMember =
            (cursor.map { #","cursor":\#($0)"# } ?? "") + (cursorTag.map { #","cursorTag":"\#($0)""# } ?? "")
        let body = #"{"clientID":"\#(client)"\#(cursorMember),"mutations":[\#(mutations.joined(separator: ","))]}"#
        let answer = try await send(server, token: token, "POST", "v1/push", body: body)
        try #require(answer.status == 200, "\(answer.json)")
        return answer.json
    }

    private func send(_ server: TestServer, token: String, _ method: String, _ path: String, body: String?)
        async throws -> (status: Int, json: [String: Any])
    {
        var request = URLRequest(url: try #require(URL(string: "\(server.url.absoluteString)/\(path)")))
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = body.map { Data($0.utf8) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, json)
    }
}
