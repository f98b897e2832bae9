import AmberSyncProtocol
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import AmberSyncServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Answers of 1 KiB or more are compressed with gzip for clients that accept it.
@Suite(.boundedConcurrency) struct CompressionTests {
    /// Records enough for a pull answer of several KiB.
    static func records() -> [Mutation] {
        (0..<40).map { index in
            Mutation(
                mutationID: Int64(index + 1), collection: "notes", id: "\(index)", baseVersion: nil,
                value: ["text": .string("note number \(index), with some text to fill the answer")])
        }
    }

    @Test func aLargeAnswerIsGzippedWhenTheClientAcceptsItAndDecompressesToTheSameJSON() async throws {
        try await withHarness(.sqlite) { harness in
            let token = try await harness.addUser("ann")
            _ = try await harness.push(Self.records(), token: token)

            let plain = try await harness.send(.get, "/v1/pull?cursor=0", token: token)
            #expect(plain.status == .ok)
            #expect(plain.headers[.contentEncoding] == nil)
            #expect(plain.headers[.vary] == "Accept-Encoding", "a cache keeps the two answers apart")
            #expect(plain.body.readableBytes > 1_024)

            let zipped = try await harness.send(
                .get, "/v1/pull?cursor=0", token: token, headers: [.acceptEncoding: "deflate, gzip, br"])
            #expect(zipped.status == .ok)
            #expect(zipped.headers[.contentEncoding] == "gzip")
            #expect(zipped.headers[.vary] == "Accept-Encoding")
            #expect(zipped.headers[.contentType] == "application/json")
            #expect(zipped.headers[.contentLength] == "\(zipped.body.readableBytes)")
            #expect(zipped.body.readableBytes < plain.body.readableBytes / 2)
            // Decompressed by another gzip than the server's.
            let unzipped = try await gunzip(Data(zipped.body.readableBytesView))
            #expect(unzipped == Data(plain.body.readableBytesView))
            #expect(try JSONDecoder().decode(PullResponse.self, from: unzipped).changes.count == 40)
        }
    }

    @Test func smallAnswersAndAnswersToClientsThatDoNotAcceptGzipAreSentAsTheyAre() async throws {
        try await withHarness(.sqlite) { harness in
            let token = try await harness.addUser("ann")
            let health = try await harness.send(.get, "/v1/health", token: nil, headers: [.acceptEncoding: "gzip"])
            #expect(health.status == .ok)
            #expect(health.headers[.contentEncoding] == nil)
            #expect(health.headers[.vary] == nil)
            #expect(try JSONSerialization.jsonObject(with: Data(health.body.readableBytesView)) is [String: Any])

            // An empty pull is small too.
            let empty = try await harness.send(
                .get, "/v1/pull?cursor=0", token: token, headers: [.acceptEncoding: "gzip"])
            #expect(empty.headers[.contentEncoding] == nil)

            _ = try await harness.push(Self.records(), token: token)
            for refused in ["identity", "gzip;q=0", "br", "*;q=0", "gzip; q=0, *"] {
                let answer = try await harness.send(
                    .get, "/v1/pull?cursor=0", token: token, headers: [.acceptEncoding: refused])
                #expect(answer.headers[.contentEncoding] == nil, "Accept-Encoding: \(refused)")
                #expect(try answer.decode(PullResponse.self).changes.count == 40)
            }
        }
    }

    @Test func theOpenAPIDocumentIsGzippedToo() async throws {
        try await withHarness(.sqlite) { harness in
            let answer = try await harness.send(
                .get, "/v1/openapi.json", token: nil, headers: [.acceptEncoding: "gzip"])
            #expect(answer.headers[.contentEncoding] == "gzip")
            #expect(try await gunzip(Data(answer.body.readableBytesView)) == Data(SyncServer.openAPIDocument.utf8))
        }
    }

    @Test(arguments: [
        ("gzip", true), ("GZIP", true), ("x-gzip", true), ("deflate, gzip;q=0.5", true), ("*", true),
        ("gzip;q=1.0, identity; q=0.5, *;q=0", true), ("", false), ("identity", false), ("gzip;q=0", false),
        ("gzip;q=0.000", false), ("*;q=0", false), ("br, *;q=0", false), ("gzip;q=0, *", false),
    ])
    func acceptEncodingIsReadWithItsQualities(header: String, accepted: Bool) {
        #expect(GzipCompression.acceptsGzip([header]) == accepted)
    }

    /// Answers are compressed at zlib's fastest level: the gzip header says so (`XFL`, its ninth
    /// byte, is 4 for the fastest algorithm, 0 for zlib's default level).
    @Test func answersAreCompressedAtTheFastestLevel() throws {
        let page = String(repeating: #"{"id":"note","text":"some words in a note"},"#, count: 1_000)
        let compressed = try GzipCompression.gzip(ByteBuffer(string: page))
        let bytes = Array(compressed.readableBytesView)
        #expect(bytes.prefix(3) == [0x1F, 0x8B, 0x08], "a gzip member, deflated")
        #expect(bytes[8] == 4)
    }

    /// `URLSession` asks for gzip on its own (on Linux, libcurl sends `Accept-Encoding: deflate,
    /// gzip, br, zstd`) and hands over the body decompressed: the sync client needs nothing more.
    @Test func urlSessionAsksForGzipAndDecompressesTheAnswer() async throws {
        try await Backend.sqlite.withDatabase { test in
            let logger = Logger.quietTests
            let token = try await test.database.addUser(named: "ann")
            let ann = try #require(try await test.database.user(forToken: token))
            _ = try await test.database.push(Self.records(), clientID: "c", for: ann)
            let running = try await SyncServer(database: test.database, port: 0, logger: logger).start()
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(running.port)/v1/pull?cursor=0")!)
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            let (data, response) = try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<(Data, HTTPURLResponse), any Error>) in
                URLSession.shared.dataTask(with: request) { data, response, error in
                    if let data, let response = response as? HTTPURLResponse {
                        continuation.resume(returning: (data, response))
                    } else {
                        continuation.resume(throwing: error ?? URLError(.badServerResponse))
                    }
                }.resume()
            }
            await running.stop()
            #expect(response.statusCode == 200)
            #expect(response.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
            #expect(try JSONDecoder().decode(PullResponse.self, from: data).changes.count == 40)
        }
    }
}

/// `data` decompressed by Python's `gzip` module, in a child process.
private func gunzip(_ data: Data) async throws -> Data {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let input = directory.appendingPathComponent("body.gz")
    let output = directory.appendingPathComponent("body")
    try data.write(to: input)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
        "python3", "-c",
        "import gzip, sys; open(sys.argv[2], 'wb').write(gzip.decompress(open(sys.argv[1], 'rb').read()))",
        input.path, output.path,
    ]
    let result = try await runToEndOnItsOwnThread(process)
    try #require(result.status == 0, "python3 could not decompress: \(result.error)")
    return try Data(contentsOf: output)
}
