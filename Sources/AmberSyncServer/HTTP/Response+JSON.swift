import AmberSyncProtocol
import Foundation
import Hummingbird

extension Response {
    /// A response whose body is `value` as JSON, with sorted keys: written exactly
    /// (``JSONWriter``) for the protocol's types, with `JSONEncoder` for any other.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let buffer: ByteBuffer
        if let wire = value as? any JSONWireEncodable {
            buffer = ByteBuffer(bytes: JSONWriter.bytes(of: wire))
        } else {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            buffer = ByteBuffer(bytes: try encoder.encode(value))
        }
        return Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: buffer)
        )
    }
}
