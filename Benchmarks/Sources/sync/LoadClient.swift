import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Protocol clients for load: the wire protocol over async-http-client, which keeps a thousand
/// long-polls open on two event loop threads.
enum LoadClient {
    static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(120), concurrentHTTP1ConnectionsPerHostSoftLimit: 4_000)
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(120))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// Pushes `mutations` of `clientID` and returns the server's results.
    static func push(_ server: String, token: String, clientID: String, mutations: [WireMutation]) async throws
        -> [WireResult]
    {
        var request = HTTPClientRequest(url: server + "/v1/push")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(try WirePush.body(clientID: clientID, mutations: mutations))
        return try WirePushResponse.results(from: try await send(request), of: mutations)
    }

    /// Pulls after `cursor`, held up to `wait` seconds when there is nothing newer.
    static func pull(_ server: String, token: String, cursor: Int64, limit: Int = 1_000, wait: Int = 0) async throws
        -> WirePull
    {
        var request = HTTPClientRequest(url: server + "/v1/pull?cursor=\(cursor)&limit=\(limit)&wait=\(wait)")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        return try JSONDecoder().decode(WirePull.self, from: try await send(request))
    }

    /// Everything the user has: the ids and the last version.
    static func pullAll(_ server: String, token: String) async throws -> (ids: [String: Int64], cursor: Int64) {
        var ids: [String: Int64] = [:]
        var cursor: Int64 = 0
        while true {
            let page = try await pull(server, token: token, cursor: cursor)
            for change in page.changes { ids[change.id] = change.version }
            cursor = page.cursor
            if !page.hasMore { return (ids, cursor) }
        }
    }

    /// `GET /metrics`, parsed into samples by name and labels.
    static func metrics(_ server: String) async throws -> [String: Double] {
        let text = String(decoding: try await send(HTTPClientRequest(url: server + "/metrics")), as: UTF8.self)
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    private static func send(_ request: HTTPClientRequest) async throws -> Data {
        let response = try await http.execute(request, timeout: .seconds(120))
        let body = try await response.body.collect(upTo: 256 << 20)
        guard response.status == .ok else {
            throw BenchmarkError(
                "\(request.method) \(request.url) answered \(response.status.code): \(String(buffer: body))")
        }
        return Data(body.readableBytesView)
    }
}

/// A record as the figures write it: about 200 bytes of JSON.
struct WireValue: Codable, Sendable {
    let id: String
    let text: String
    let tags: [String]
    let created: Double
    let modified: Double
}

struct WireMutation: Encodable, Sendable {
    let mutationID: Int64
    let collection: String
    let id: String
    let baseVersion: Int64?
    let value: WireValue?

    private enum CodingKeys: String, CodingKey {
        case mutationID, collection, id, baseVersion, value
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(mutationID, forKey: .mutationID)
        try container.encode(collection, forKey: .collection)
        try container.encode(id, forKey: .id)
        // The protocol wants `null`, not a missing member.
        try container.encode(baseVersion, forKey: .baseVersion)
        try container.encode(value, forKey: .value)
    }

    /// A new record `id` of `collection` "notes".
    static func create(_ mutationID: Int64, id: String, index: Int) -> WireMutation {
        WireMutation(
            mutationID: mutationID, collection: "notes", id: id, baseVersion: nil, value: .sample(id: id, index: index))
    }
}

struct WirePush: Encodable {
    let clientID: String
    let mutations: [WireMutation]

    /// The JSON body of a push of `mutations` by `clientID`.
    static func body(clientID: String, mutations: [WireMutation]) throws -> ByteBuffer {
        ByteBuffer(bytes: try JSONEncoder().encode(WirePush(clientID: clientID, mutations: mutations)))
    }
}

struct WireResult: Decodable {
    let mutationID: Int64
    let status: String
    let version: Int64
}

struct WirePushResponse: Decodable {
    let results: [WireResult]

    /// The results of a push's answer `body`, one for each of `mutations`.
    static func results(from body: Data, of mutations: [WireMutation]) throws -> [WireResult] {
        let results = try JSONDecoder().decode(WirePushResponse.self, from: body).results
        guard results.count == mutations.count else {
            throw BenchmarkError("the push answered \(results.count) results")
        }
        return results
    }
}

struct WireChange: Decodable {
    let collection: String
    let id: String
    let version: Int64
}

struct WirePull: Decodable {
    let changes: [WireChange]
    let cursor: Int64
    let hasMore: Bool
}

extension WireValue {
    /// The record of `index`: about 200 bytes of JSON with its 36-character id.
    static func sample(id: String, index: Int) -> WireValue {
        WireValue(
            id: id,
            text: "Note \(index): a few lines someone typed on a phone, long enough to look like a real note.",
            tags: ["tag-\(index % 10)"],
            created: 1_780_000_000 + Double(index),
            modified: 1_780_000_000 + Double(index)
        )
    }
}

/// The value at `fraction` (0...1) of the sorted `values` (nearest rank).
func percentile(_ values: [Double], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

/// `values` as `a, b, c` with two decimals: the rounds a median was taken of.
func list(_ values: [Double]) -> String {
    values.map { format($0) }.joined(separator: ", ")
}

/// Seconds since `start`.
func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = start.duration(to: .now)
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func format(_ value: Double, _ digits: Int = 2) -> String {
    String(format: "%.\(digits)f", value)
}

/// Runs `body` for each of `count` indices, at most `width` at once.
func concurrently(_ count: Int, width: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        var next = 0
        while next < min(width, count) {
            let index = next
            group.addTask { try await body(index) }
            next += 1
        }
        while try await group.next() != nil {
            if next < count {
                let index = next
                group.addTask { try await body(index) }
                next += 1
            }
        }
    }
}
