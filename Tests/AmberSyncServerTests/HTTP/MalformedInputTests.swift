import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Bodies and queries that break the protocol, each refused with a `400` JSON error and no change.
@Suite(.boundedConcurrency) struct MalformedInputTests {
    /// A valid body whose every part the generator below breaks in turn.
    static func makeValidBody() -> [String: Any] {
        [
            "clientID": "client-1",
            "mutations": [
                [
                    "mutationID": 1, "collection": "notes", "id": "n1", "baseVersion": NSNull(),
                    "value": ["id": "n1", "text": "hi", "tags": ["a", "b"], "nested": ["x": 1.5]] as [String: Any],
                    "fields": ["text"],
                ] as [String: Any],
                ["mutationID": 2, "collection": "tags", "id": "t1", "baseVersion": 7, "value": NSNull()]
                    as [String: Any],
            ],
        ]
    }

    static func serialized(_ object: Any) -> [UInt8] {
        Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed]))
    }

    /// A named malformed body.
    struct Case: CustomStringConvertible {
        let name: String
        let body: [UInt8]
        var description: String { "\(name): \(String(decoding: body.prefix(120), as: UTF8.self))" }
    }

    static func malformedBodies() -> [Case] {
        var cases: [Case] = []
        let validBody = makeValidBody()
        let valid = serialized(validBody)

        // Every truncation of a valid body.
        for length in 0..<valid.count {
            cases.append(Case(name: "truncated to \(length) bytes", body: Array(valid.prefix(length))))
        }

        // Wrong types and missing fields at the top level.
        let wrongScalars: [Any] = [1, 1.5, true, NSNull(), [Any](), [String: Any](), "text"]
        for value in wrongScalars where !(value is String) {
            var body = validBody
            body["clientID"] = value
            cases.append(Case(name: "clientID \(value)", body: serialized(body)))
        }
        for value: Any in ["text", 1, true, NSNull(), [String: Any](), [1], ["x"], [NSNull()], [[Any]()]] {
            var body = validBody
            body["mutations"] = value
            cases.append(Case(name: "mutations \(value)", body: serialized(body)))
        }
        for key in ["clientID", "mutations"] {
            var body = validBody
            body[key] = nil
            cases.append(Case(name: "missing \(key)", body: serialized(body)))
        }
        for clientID in ["", String(repeating: "c", count: 257), "client\u{0}2"] {
            var body = validBody
            body["clientID"] = clientID
            cases.append(Case(name: "clientID of \(clientID.utf8.count) bytes", body: serialized(body)))
        }

        // Wrong types, missing fields and broken limits in each mutation.
        let tooLongCollection = String(repeating: "c", count: 65)
        let badValues: [String: [Any]] = [
            "mutationID": ["1", 1.5, true, NSNull(), [Any](), [String: Any](), 1e30, "one"],
            "collection": [
                1, NSNull(), [Any](), [String: Any](), true, "", "a b", "notes/x", "../notes", "ä", "no\u{0}tes",
                tooLongCollection, "tab\t", "emoji😀", "semi;colon",
            ],
            "id": [
                1, NSNull(), [Any](), [String: Any](), true, "", String(repeating: "i", count: 257),
                String(repeating: "é", count: 129),
                "a\u{0}b", "\u{0}",
            ],
            "baseVersion": ["1", 1.5, true, [Any](), [String: Any](), -1, "null"],
            "value": [[Any](), "text", 1, 1.5, true, [[String: Any]()], ["id", "n1"]],
            "fields": ["text", 1, [1], [NSNull()], [String: Any](), true, [["text"]]],
        ]
        let mutations = validBody["mutations"] as! [[String: Any]]
        for index in mutations.indices {
            for (key, values) in badValues.sorted(by: { $0.key < $1.key }) {
                for value in values {
                    var broken = mutations
                    broken[index][key] = value
                    var body = validBody
                    body["mutations"] = broken
                    cases.append(Case(name: "mutations[\(index)].\(key) = \(value)", body: serialized(body)))
                }
            }
            for key in ["mutationID", "collection", "id"] {
                var broken = mutations
                broken[index][key] = nil
                var body = validBody
                body["mutations"] = broken
                cases.append(Case(name: "mutations[\(index)] without \(key)", body: serialized(body)))
            }
        }

        // Mutation ids that do not increase.
        for ids in [[2, 1], [1, 1], [5, 3]] {
            var broken = mutations
            broken[0]["mutationID"] = ids[0]
            broken[1]["mutationID"] = ids[1]
            var body = validBody
            body["mutations"] = broken
            cases.append(Case(name: "mutation ids \(ids)", body: serialized(body)))
        }

        // Not an object, not JSON, and JSON nested too deep.
        let texts = [
            "", " ", "null", "[]", "\"push\"", "42", "true", "{}", "{\"clientID\":\"c\"}", "{\"mutations\":[]}",
            "{\"clientID\":\"c\",\"mutations\":[]}x", "{\"clientID\":\"c\",\"mutations\":[]}{}", "{'clientID':'c'}",
            "{\"clientID\":\"c\",\"mutations\":[],}", "{\"clientID\":\"c\",\"mutations\":[NaN]}",
            "{\"clientID\":\"c\" /* comment */,\"mutations\":[]}", "<xml/>", "clientID=c&mutations=",
            // A number past `Double` (`1e999`) is valid JSON and kept as written; a key twice, also
            // in two Unicode normalizations, and a lone surrogate are not.
            "{\"clientID\":\"c\",\"mutations\":[{\"mutationID\":1,\"collection\":\"n\",\"id\":\"1\",\"value\":{\"x\":1,\"x\":2}}]}",
            "{\"clientID\":\"c\",\"mutations\":[{\"mutationID\":1,\"collection\":\"n\",\"id\":\"1\",\"value\":{\"\\u00e9\":1,\"e\\u0301\":2}}]}",
            "{\"clientID\":\"c\",\"mutations\":[{\"mutationID\":1,\"collection\":\"n\",\"id\":\"1\",\"value\":{\"x\":\"\\ud800\"}}]}",
            "{\"clientID\":\"c\",\"clientID\":\"d\",\"mutations\":[]}",
        ]
        for text in texts {
            cases.append(Case(name: "text", body: Array(text.utf8)))
        }
        cases.append(
            Case(
                name: "invalid UTF-8 in a string",
                body: Array("{\"clientID\":\"".utf8) + [0xC3, 0x28, 0xFF] + Array("\",\"mutations\":[]}".utf8)))
        cases.append(
            Case(
                name: "UTF-16",
                body: Array(
                    "{\"clientID\":\"c\",\"mutations\":[]}".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })))
        for depth in [257, 1_000, 100_000] {
            cases.append(Case(name: "value nested \(depth) deep", body: pushNested(depth: depth)))
            cases.append(
                Case(
                    name: "body nested \(depth) deep",
                    body: Array(
                        (String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)).utf8))
            )
        }

        // Random bytes, from a fixed seed so a failure can be replayed.
        var generator = SeededGenerator(seed: 0x5EED)
        for index in 0..<150 {
            let length = Int.random(in: 1...300, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Half of them start like a push, so the parser goes further in.
            if index.isMultiple(of: 2) { bytes = Array("{\"clientID\":\"c\",\"mutations\":[".utf8) + bytes }
            cases.append(Case(name: "random bytes #\(index)", body: bytes))
        }
        return cases
    }

    /// A push whose JSON nests `depth` levels deep: 4 levels of push, mutation and value, then arrays.
    static func pushNested(depth: Int) -> [UInt8] {
        let arrays = depth - 4
        let text =
            "{\"clientID\":\"c\",\"mutations\":[{\"mutationID\":1,\"collection\":\"n\",\"id\":\"1\",\"value\":{\"a\":"
            + String(repeating: "[", count: arrays) + String(repeating: "]", count: arrays) + "}}]}"
        return Array(text.utf8)
    }

    @Test(arguments: Backend.allCases)
    func aValueNestedAsDeepAsAllowedIsStoredAndPulledBack(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            let response = try await harness.send(.post, "/v1/push", token: token, body: Self.pushNested(depth: 256))
            #expect(response.status == .ok, "\(response.text.prefix(200))")
            let pulled = try await harness.send(.get, "/v1/pull", token: token)
            #expect(pulled.status == .ok)
            let change = try #require(try pulled.decode(PullResponse.self).changes.first)
            var depth = 0
            var value = change.value?["a"]
            while case .array(let elements) = value {
                depth += 1
                value = elements.first
            }
            #expect(depth == 252)
        }
    }

    @Test func theGeneratorMakesMoreThan500Bodies() {
        #expect(Self.malformedBodies().count > 500)
    }

    @Test(arguments: Backend.allCases)
    func everyMalformedPushIs400WithAJSONErrorAndChangesNothing(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            let seed = Mutation(
                mutationID: 1, collection: "notes", id: "n1", baseVersion: nil, value: ["text": .string("seed")])
            _ = try await harness.push([seed], clientID: "client-1", token: token)
            let before = try await harness.pullAll(token: token)

            for malformed in Self.malformedBodies() {
                let response = try await harness.send(.post, "/v1/push", token: token, body: malformed.body)
                #expect(response.status == .badRequest, "\(malformed)")
                #expect(response.headers[.contentType] == "application/json", "\(malformed)")
                let error = try? response.decode(ErrorResponse.self)
                #expect(error.map { !$0.error.isEmpty } == true, "\(malformed): \(response.text)")
            }

            // Nothing changed: the same records, and the next applied mutation gets version 2.
            #expect(try await harness.pullAll(token: token) == before)
            let next = try await harness.push(
                [Mutation(mutationID: 2, collection: "notes", id: "n2", baseVersion: nil, value: [:])],
                clientID: "client-1", token: token
            )
            #expect(next == [MutationResult(mutationID: 2, status: .applied, version: 2)])
            #expect(try await harness.send(.get, "/v1/health", token: nil).status == .ok)
        }
    }

    @Test(arguments: Backend.allCases)
    func errorSentencesNameTheField(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            let expectations: [(String, String)] = [
                ("{", "not valid JSON"),
                ("[]", "must be a JSON object"),
                ("{\"mutations\":[]}", "`clientID` is missing"),
                (
                    "{\"clientID\":\"c\",\"mutations\":[{\"mutationID\":1,\"collection\":\"n\",\"id\":\"1\",\"value\":[]}]}",
                    "`mutations[0].value` must be a JSON object or null"
                ),
                (
                    "{\"clientID\":\"c\",\"mutations\":[{\"mutationID\":\"1\",\"collection\":\"n\",\"id\":\"1\"}]}",
                    "`mutations[0].mutationID` must be an integer"
                ),
                (
                    "{\"clientID\":\"c\",\"mutations\":[{\"mutationID\":1.5,\"collection\":\"n\",\"id\":\"1\"}]}",
                    "`mutations[0].mutationID` must be an integer from"
                ),
                (
                    "{\"clientID\":\"c\",\"mutations\":[{\"mutationID\":1180591620717411303424,\"collection\":\"n\",\"id\":\"1\"}]}",
                    "`mutations[0].mutationID` must be an integer from"
                ),
                (
                    "{\"clientID\":\"c\",\"mutations\":[{\"mutationID\":1,\"collection\":\"n\",\"id\":\"1\",\"baseVersion\":1e3}]}",
                    "`mutations[0].baseVersion` must be an integer from"
                ),
                (
                    "{\"clientID\":\"c\",\"mutations\":[{\"mutationID\":1,\"collection\":\"a b\",\"id\":\"1\"}]}",
                    "`mutations[0].collection` must match"
                ),
                (
                    "{\"clientID\":\"c\",\"mutations\":[{\"mutationID\":1,\"collection\":\"n\",\"id\":\"\"}]}",
                    "`mutations[0].id` must be 1 to 256 bytes"
                ),
                (
                    "{\"clientID\":\"c\",\"mutations\":[{\"mutationID\":2,\"collection\":\"n\",\"id\":\"1\"},{\"mutationID\":2,\"collection\":\"n\",\"id\":\"2\"}]}",
                    "`mutations[1].mutationID` must be greater"
                ),
            ]
            for (body, phrase) in expectations {
                let response = try await harness.send(.post, "/v1/push", token: token, body: Array(body.utf8))
                #expect(response.status == .badRequest)
                let error = try response.errorBody()
                #expect(error.error.contains(phrase), "\(body) → \(error.error)")
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func malformedPullQueriesAre400(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            let queries = [
                "cursor=-1", "cursor=abc", "cursor=1.5", "cursor=", "cursor=1e3", "cursor=%2D1",
                "cursor=99999999999999999999",
                "cursor=+1", "cursor=0x10", "cursor= 1", "limit=-5", "limit=0", "limit=ten", "limit=2.5", "limit=",
                "wait=-1", "wait=abc", "wait=0.5", "wait=", "cursor=1&limit=-1", "cursor=0&wait=NaN",
            ]
            for query in queries {
                let response = try await harness.send(.get, "/v1/pull?\(query)", token: token)
                #expect(response.status == .badRequest, "\(query)")
                _ = try response.errorBody()
            }
            // Large limits are capped, not refused; a cursor beyond the history is told to reset.
            #expect(try await harness.send(.get, "/v1/pull?cursor=0&limit=100000&wait=0", token: token).status == .ok)
            let beyond = try await harness.send(.get, "/v1/pull?cursor=9223372036854775807", token: token)
            #expect(beyond.status == .gone)
            #expect(try beyond.errorBody().code == SyncErrorCode.historyChanged)
        }
    }

    @Test(arguments: Backend.allCases)
    func aBodyOverTheLimitIs413AndChangesNothing(backend: Backend) async throws {
        try await withHarness(backend, maximumBodySize: 1_024) { harness in
            let token = try await harness.addUser("ann")
            let big = Mutation(
                mutationID: 1, collection: "notes", id: "n", baseVersion: nil,
                value: ["text": .string(String(repeating: "x", count: 2_000))]
            )
            let body = Array(try JSONEncoder().encode(PushRequest(clientID: "c", mutations: [big])))
            let response = try await harness.send(.post, "/v1/push", token: token, body: body)
            #expect(response.status == .contentTooLarge)
            #expect(try response.errorBody().error.contains("1024"))
            #expect(try await harness.pullAll(token: token).isEmpty)

            // Just under the limit is fine.
            let small = Mutation(
                mutationID: 2, collection: "notes", id: "n", baseVersion: nil, value: ["text": .string("x")])
            #expect(try await harness.push([small], clientID: "c", token: token).map(\.status) == [.applied])
        }
    }

    @Test(arguments: Backend.allCases)
    func unknownPathsAre404AndWrongMethods405WithAJSONError(backend: Backend) async throws {
        try await withHarness(backend) { harness in
            let token = try await harness.addUser("ann")
            let requests: [(HTTPRequest.Method, String, String?)] = [
                (.get, "/", nil), (.get, "/v1", nil), (.get, "/v2/pull", token), (.get, "/v1/pulls", token),
                (.post, "/v1/health/x", nil), (.get, "/v1/push", token), (.post, "/v1/pull", token),
                (.delete, "/v1/push", token), (.put, "/v1/health", nil), (.get, "/v1/push", nil),
            ]
            for (method, uri, token) in requests {
                let response = try await harness.send(method, uri, token: token)
                let known = ["/v1/push", "/v1/pull", "/v1/health"].contains(uri)
                #expect(response.status == (known ? .methodNotAllowed : .notFound), "\(method) \(uri)")
                _ = try response.errorBody()
            }
        }
    }
}
