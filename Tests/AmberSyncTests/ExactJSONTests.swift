import Amber
import AmberSQLite
import AmberSync
import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A model with fields whose JSON numbers leave `Int64` or need their exact digits.
@Immutable
struct Reading: Identifiable, Hashable, Codable, Sendable {
    let id: UUID
    let total: UInt64
    let ratio: Double
}

/// Records come back from an `amber-sync serve` process exactly as they were sent: number digits
/// and key bytes as written, and ids that differ only in Unicode normalization stay two records.
@Suite(.boundedConcurrency, .serialized) struct ExactJSONTests {
    /// Record values, each written as the server writes JSON (sorted keys, no spaces), so the
    /// pulled text must hold them byte for byte.
    static let values: [String] = [
        #"{"n":18446744073709551615}"#,
        #"{"n":-9223372036854775809}"#,
        #"{"n":1180591620717411303424}"#,
        #"{"n":1.0}"#,
        #"{"n":-0.0}"#,
        #"{"n":-0}"#,
        #"{"n":1e400}"#,
        #"{"n":1E+2}"#,
        #"{"n":0.1000000000000000000000000001}"#,
        #"{"a":[1.50,{"b":2.0e-0}],"z":"caf\u00e9"}"#,
        "{\"caf\u{e9}\":1}",
        "{\"cafe\u{301}\":2}",
        "{\"s\":\"cafe\u{301} / caf\u{e9}\"}",
    ]

    @Test(arguments: Backend.allCases)
    func valuesComeBackAsTheyWereSent(backend: Backend) async throws {
        try await withServerProcess(backend) { server, token in
            let mutations = Self.values.enumerated().map { index, value in
                #"{"mutationID":\#(index + 1),"collection":"exact","id":"v\#(index)","baseVersion":null,"value":\#(value)}"#
            }
            let body = #"{"clientID":"raw","mutations":[\#(mutations.joined(separator: ","))]}"#
            let (status, answer) = try await Self.send(server, "POST", "v1/push", body: body, token: token)
            #expect(status == 200, "\(answer)")
            // Stored as sent, so the answers carry no value: the client keeps what it sent.
            let results = try PushResponse(jsonBytes: Array(answer.utf8)).results
            #expect(results.map(\.status) == Array(repeating: .applied, count: Self.values.count))
            #expect(results.allSatisfy { $0.value == nil }, "\(answer)")

            let (pullStatus, pulled) = try await Self.send(server, "GET", "v1/pull?cursor=0", token: token)
            #expect(pullStatus == 200)
            for (index, value) in Self.values.enumerated() {
                let expected = #""id":"v\#(index)","value":\#(Self.canonical(value)),"#
                #expect(pulled.contains(expected), "v\(index): \(value) not in \(pulled)")
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func idsThatDifferOnlyInNormalizationAreTwoRecords(backend: Backend) async throws {
        try await withServerProcess(backend) { server, token in
            let composed = "caf\u{e9}"
            let decomposed = "cafe\u{301}"
            let body =
                #"{"clientID":"raw","mutations":[{"mutationID":1,"collection":"ids","id":"\#(composed)","baseVersion":null,"value":{"n":1}},{"mutationID":2,"collection":"ids","id":"\#(decomposed)","baseVersion":null,"value":{"n":2}}]}"#
            let (status, answer) = try await Self.send(server, "POST", "v1/push", body: body, token: token)
            #expect(status == 200)
            let results = try PushResponse(jsonBytes: Array(answer.utf8)).results
            #expect(results.map(\.status) == [.applied, .applied], "\(answer)")

            // And once more in separate pushes, each a change of its own record.
            let second =
                #"{"clientID":"raw","mutations":[{"mutationID":3,"collection":"ids","id":"\#(decomposed)","baseVersion":2,"value":{"n":22}}]}"#
            let (_, secondAnswer) = try await Self.send(server, "POST", "v1/push", body: second, token: token)
            #expect(try PushResponse(jsonBytes: Array(secondAnswer.utf8)).results.map(\.status) == [.applied])

            let (_, pulled) = try await Self.send(server, "GET", "v1/pull?cursor=0", token: token)
            #expect(pulled.contains(#""id":"\#(composed)","value":{"n":1},"version":1"#), "\(pulled)")
            #expect(pulled.contains(#""id":"\#(decomposed)","value":{"n":22},"version":3"#), "\(pulled)")
            let changes = try PullResponse(jsonBytes: Array(pulled.utf8)).changes
            #expect(changes.count == 2)
        }
    }

    @Test(arguments: Backend.allCases)
    func refusalsNameTheField(backend: Backend) async throws {
        try await withServerProcess(backend) { server, token in
            func mutation(_ members: String) -> String {
                #"{"clientID":"raw","mutations":[{"collection":"n","id":"1",\#(members)}]}"#
            }
            let cases: [(String, String)] = [
                (mutation(#""mutationID":1.5"#), "The field `mutations[0].mutationID` must be an integer"),
                (
                    mutation(#""mutationID":1180591620717411303424"#),
                    "The field `mutations[0].mutationID` must be an integer from -9223372036854775808 to 9223372036854775807, written without fraction or exponent, not 1180591620717411303424"
                ),
                (mutation(#""mutationID":1,"baseVersion":1e3"#), "`mutations[0].baseVersion` must be an integer"),
                (mutation(#""mutationID":1,"baseVersion":2.0"#), "`mutations[0].baseVersion` must be an integer"),
                (mutation(#""mutationID":"1""#), "`mutations[0].mutationID` must be an integer, not a string"),
                (
                    mutation("\"mutationID\":1,\"value\":{\"x\":{\"caf\u{e9}\":1,\"cafe\u{301}\":2}}"),
                    "The field `mutations[0].value.x` has the keys `caf\u{e9}` (U+0063 U+0061 U+0066 U+00E9) and `cafe\u{301}` (U+0063 U+0061 U+0066 U+0065 U+0301), which differ only in Unicode normalization"
                ),
                (mutation(#""mutationID":1,"value":{"a":1,"a":2}"#), "`mutations[0].value` has the key `a` twice"),
                (mutation(#""mutationID":1,"value":{"a":"\ud800"}"#), "lone surrogate"),
            ]
            for (body, phrase) in cases {
                let (status, answer) = try await Self.send(server, "POST", "v1/push", body: body, token: token)
                #expect(status == 400, "\(body)")
                let error = try ErrorResponse(jsonBytes: Array(answer.utf8)).error
                #expect(error.contains(phrase), "\(body) → \(error)")
            }
            let (_, pulled) = try await Self.send(server, "GET", "v1/pull?cursor=0", token: token)
            #expect(try PullResponse(jsonBytes: Array(pulled.utf8)).changes.isEmpty)
        }
    }

    /// A model's `UInt64.max` and a `Double` travel through two sync clients unchanged.
    @Test(arguments: Backend.allCases)
    func aClientRoundTripKeepsUInt64Max(backend: Backend) async throws {
        try await withServerProcess(backend) { server, token in
            func device() throws -> (IdentityStore<Reading>, SyncClient) {
                let storage = try SQLiteStorage(path: temporaryDirectory().appendingPathComponent("device.sqlite").path)
                let store = try IdentityStore<Reading>(key: "readings", storage: storage)
                let client = try SyncClient(storage: storage, server: server, token: token)
                try client.add(store)
                return (store, client)
            }
            let (dayStore, day) = try device()
            let (nightStore, night) = try device()
            let reading = Reading(id: UUID(), total: .max, ratio: 0.1)
            try dayStore.add(reading)
            let pushed = try await day.sync()
            #expect(pushed.pushed == 1)
            try await night.sync()
            #expect(nightStore[id: reading.id] == reading)

            let (_, pulled) = try await Self.send(server, "GET", "v1/pull?cursor=0", token: token)
            #expect(pulled.contains(#""total":18446744073709551615"#), "\(pulled)")

            // An edit on the other phone comes back as well, and nothing stays pending.
            try nightStore.update(id: reading.id) { $0.with(total: .max - 1) }
            try await night.sync()
            try await day.sync()
            #expect(dayStore[id: reading.id]?.total == UInt64.max - 1)
            #expect(try await day.sync().pushed == 0)
        }
    }

    // MARK: Support

    /// Runs `body` with an `amber-sync serve` child process on a new database of `backend`.
    private func withServerProcess(
        _ backend: Backend, _ body: (URL, String) async throws -> Void
    ) async throws {
        try await backend.withDatabase { test in
            let location = try #require(test.location)
            let token = try await test.database.addUser(named: "ann")
            let child = try Child("amber-sync", ["serve", "--port", "0", "--database", location])
            defer { child.kill() }
            let line = try #require(await child.line(startingWith: "listening on "), "the server did not start")
            let url = try #require(URL(string: String(line.dropFirst("listening on ".count))))
            try await body(url, token)
        }
    }

    /// `value` as the server writes it: the same text, but for `\u00e9` escapes, which it writes as UTF-8.
    private static func canonical(_ value: String) -> String {
        value.replacingOccurrences(of: #"\u00e9"#, with: "\u{e9}")
    }

    /// One raw HTTP request over a socket; the status and the body as text.
    private static func send(
        _ server: URL, _ method: String, _ path: String, body: String? = nil, token: String
    ) async throws -> (Int, String) {
        var request = URLRequest(url: URL(string: "\(server.absoluteString)/\(path)")!)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.utf8)
        }
        request.timeoutInterval = 30
        return try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else {
                    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                    continuation.resume(returning: (status, String(decoding: data ?? Data(), as: UTF8.self)))
                }
            }.resume()
        }
    }
}
