import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Compresses answers with gzip for clients that accept it (`Accept-Encoding: gzip`), with
/// `Content-Encoding: gzip`.
///
/// Only answers of at least `minimumSize` bytes are compressed: below that, gzip's header and
/// the work cost more than they save. Those answers carry `Vary: Accept-Encoding` whether they
/// were compressed or not, so that a cache between client and server keeps the two apart. An
/// answer that would not get smaller is sent as it is. Large answers are compressed on
/// `SyncServer.decodingQueues`, not on the executor that runs every request.
struct GzipCompression: Sendable {
    /// The smallest body compressed, in bytes.
    let minimumSize: Int

    init(minimumSize: Int = 1_024) {
        self.minimumSize = minimumSize
    }

    /// `response` compressed when `request` accepts gzip and the body is worth it.
    func compressed(_ response: Response, for request: Request) async throws -> Response {
        var response = response
        guard request.method != .head, let length = response.body.contentLength, length >= minimumSize,
            response.status != .noContent, response.status != .notModified,
            !response.headers.contains(.contentEncoding),
            // Attachments offer byte ranges and stream: gzip would collect them and change what ranges count.
            !response.headers.contains(.acceptRanges)
        else { return response }
        response.headers.append(HTTPField(name: .vary, value: "Accept-Encoding"))
        guard Self.acceptsGzip(request.headers[values: .acceptEncoding]) else { return response }

        let body = try await Self.collect(response.body, length: length)
        let compressed: ByteBuffer
        if length > SyncServer.largeBody {
            compressed = try await withCheckedThrowingContinuation { continuation in
                SyncServer.decodingQueues.randomElement()!.async {
                    continuation.resume(with: Result { try Self.gzip(body) })
                }
            }
        } else {
            compressed = try Self.gzip(body)
        }
        guard compressed.readableBytes < length else {
            // The body was written out above: send the bytes it wrote.
            response.body = ResponseBody(byteBuffer: body)
            return response
        }
        response.headers[.contentEncoding] = "gzip"
        response.body = ResponseBody(byteBuffer: compressed)
        return response
    }

    /// `body` compressed with gzip, at zlib's fastest level (as nginx's default `gzip_comp_level`).
    ///
    /// A pull page of 1,000 records (258 KB of JSON) took 2.0 ms at level 1 and 4.6 ms at zlib's
    /// default, 6, for 72 KB against 65 KB: at the default, compressing the pages of an initial
    /// sync cost the server about as much as reading them.
    static func gzip(_ body: ByteBuffer) throws -> ByteBuffer {
        var body = body
        return try body.compress(with: .gzip(configuration: fastest))
    }

    private static let fastest = ZlibConfiguration(compressionLevel: 1)

    /// Whether an `Accept-Encoding` header (each of its fields) accepts gzip: `gzip`, `x-gzip` or `*`
    /// with a quality above 0, the named coding deciding over `*`.
    static func acceptsGzip(_ fields: [String]) -> Bool {
        var gzip: Double?
        var any: Double?
        for field in fields {
            for item in field.split(separator: ",") {
                var parameters = item.split(separator: ";").makeIterator()
                guard let coding = parameters.next()?.trimmingCharacters(in: .whitespaces).lowercased() else {
                    continue
                }
                var quality = 1.0
                while let parameter = parameters.next() {
                    let pair = parameter.split(separator: "=", maxSplits: 1)
                    if pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "q" {
                        quality = Double(pair[1].trimmingCharacters(in: .whitespaces)) ?? 0
                    }
                }
                switch coding {
                case "gzip", "x-gzip": gzip = max(gzip ?? 0, quality)
                case "*": any = max(any ?? 0, quality)
                default: break
                }
            }
        }
        return (gzip ?? any ?? 0) > 0
    }

    /// The bytes a body writes.
    private static func collect(_ body: ResponseBody, length: Int) async throws -> ByteBuffer {
        let collected = CollectedBody(capacity: length)
        try await body.write(CollectingWriter(collected: collected))
        return collected.buffer
    }
}

/// The bytes a `CollectingWriter` was given.
private final class CollectedBody {
    var buffer: ByteBuffer

    init(capacity: Int) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
    }
}

/// A body writer that keeps what it is given, to compress it.
private struct CollectingWriter: ResponseBodyWriter {
    let collected: CollectedBody

    mutating func write(_ buffer: ByteBuffer) async throws {
        collected.buffer.writeImmutableBuffer(buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
