import Hummingbird

extension Request {
    /// The whole body, refused with ``SyncServerError/bodyTooLarge(limit:)`` past `limit` bytes:
    /// at once when `Content-Length` says so, otherwise as soon as the bytes read pass it.
    func collectBody(limit: Int) async throws -> ByteBuffer {
        if let declared = headers[.contentLength].flatMap({ Int($0) }), declared > limit {
            throw SyncServerError.bodyTooLarge(limit: limit)
        }
        var collected = ByteBuffer()
        for try await var chunk in body {
            guard collected.readableBytes + chunk.readableBytes <= limit else {
                throw SyncServerError.bodyTooLarge(limit: limit)
            }
            collected.writeBuffer(&chunk)
        }
        return collected
    }
}
