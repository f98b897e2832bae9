import AmberSyncProtocol
import Crypto
import Foundation
import Hummingbird
import NIOCore

extension SyncServer {
    /// `PUT`, `HEAD` and `GET /v1/attachments/{sha256}`: each user's attachments, by the SHA-256
    /// of their bytes, streamed both ways.
    func addAttachmentRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.put("attachments/:sha256") { request, context in
            try await putAttachment(request, hash: try Self.attachmentHash(context), user: context.user)
        }
        group.head("attachments/:sha256") { _, context in
            try await headAttachment(hash: try Self.attachmentHash(context), user: context.user)
        }
        group.get("attachments/:sha256") { request, context in
            try await getAttachment(request, hash: try Self.attachmentHash(context), user: context.user)
        }
    }

    /// The storage of attachments: the database, when its backend keeps them.
    var attachmentStorage: (any AttachmentStorage)? {
        database as? any AttachmentStorage
    }

    private static func attachmentHash(_ context: AuthenticatedRequestContext) throws -> String {
        let hash = context.parameters.get("sha256") ?? ""
        guard AttachmentReference.isHash(hash) else {
            throw SyncServerError.invalidRequest(
                "The path's hash \(hash.prefix(80)) is not a SHA-256: use 64 lowercase hexadecimal digits.")
        }
        return hash
    }

    private func storage() throws -> any AttachmentStorage {
        guard let storage = attachmentStorage else {
            throw HTTPError(.notImplemented, message: "This server's database does not keep attachments.")
        }
        return storage
    }

    private static func notFound(_ hash: String) -> HTTPError {
        HTTPError(.notFound, message: "There is no attachment \(hash) for this user; upload it with PUT first.")
    }

    /// Keeps the body as the attachment `hash` when its bytes have that hash; nothing is kept otherwise.
    private func putAttachment(_ request: Request, hash: String, user: SyncUser) async throws -> Response {
        let storage = try storage()
        let maximum = limits.maximumAttachmentSize
        let declared = request.headers[.contentLength].flatMap { Int64($0) }
        if let declared, declared > maximum {
            throw Self.tooLarge(maximum)
        }
        if try await storage.attachmentSize(hash, for: user) != nil {
            // The user has these bytes already: nothing to read, nothing uploaded twice.
            return Response(status: .ok, headers: [.contentLength: "0"])
        }
        var room = Int64.max
        if let quota = limits.attachmentQuota {
            room = quota - (try await storage.attachmentBytes(for: user))
            if let declared, declared > room { throw Self.overQuota(quota) }
        }
        let upload = try await storage.beginAttachment(hash, for: user)
        var hasher = SHA256()
        var received: Int64 = 0
        do {
            for try await bytes in request.body {
                received += Int64(bytes.readableBytes)
                if received > maximum { throw Self.tooLarge(maximum) }
                if received > room { throw Self.overQuota(limits.attachmentQuota ?? 0) }
                bytes.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
                try await upload.write(bytes)
            }
            let found = hasher.finalize().map { String(format: "%02x", $0) }.joined()
            guard found == hash else {
                throw SyncServerError.invalidRequest(
                    "The body's SHA-256 is \(found) (\(received) bytes), not the path's \(hash); nothing was kept.")
            }
        } catch {
            await upload.cancel()
            throw error
        }
        let created = try await upload.finish()
        return Response(status: created ? .created : .ok, headers: [.contentLength: "0"])
    }

    private static func tooLarge(_ maximum: Int64) -> HTTPError {
        HTTPError(
            .contentTooLarge,
            message: "The attachment is larger than the server's limit of \(maximum) bytes; nothing was kept.")
    }

    private static func overQuota(_ quota: Int64) -> HTTPError {
        HTTPError(
            .contentTooLarge,
            message:
                "The attachment would take this user's attachments past their quota of \(quota) bytes; nothing was kept."
        )
    }

    /// Whether the user has the attachment, and its size (`Content-Length`); no body.
    private func headAttachment(hash: String, user: SyncUser) async throws -> Response {
        guard let size = try await storage().attachmentSize(hash, for: user) else {
            return Response(status: .notFound, headers: [.contentLength: "0"])
        }
        return Response(
            status: .ok,
            headers: [.contentLength: String(size), .contentType: "application/octet-stream", .acceptRanges: "bytes"])
    }

    /// The attachment's bytes, all or the one range `Range` asks for, read as the client takes them.
    private func getAttachment(_ request: Request, hash: String, user: SyncUser) async throws -> Response {
        let storage = try storage()
        guard let size = try await storage.attachmentSize(hash, for: user) else { throw Self.notFound(hash) }
        var status = HTTPResponse.Status.ok
        var range: Range<Int64> = 0..<size
        var headers: HTTPFields = [.contentType: "application/octet-stream", .acceptRanges: "bytes"]
        if let header = request.headers[.range] {
            switch ByteRange.parse(header, size: size) {
            case .whole:
                break
            case .unsatisfiable:
                var response = try Response.json(
                    ErrorResponse(error: "The range \(header) is not within the attachment's \(size) bytes."),
                    status: .rangeNotSatisfiable)
                response.headers[.contentRange] = "bytes */\(size)"
                return response
            case .bytes(let asked):
                status = .partialContent
                range = asked
                headers[.contentRange] = "bytes \(asked.lowerBound)-\(asked.upperBound - 1)/\(size)"
            }
        }
        let body = ResponseBody(contentLength: Int(range.count)) { [range] writer in
            let sink = WriterBox(writer)
            try await storage.readAttachment(hash, for: user, range: range) { bytes in
                try await sink.write(bytes)
            }
            try await writer.finish(nil)
        }
        return Response(status: status, headers: headers, body: body)
    }
}

/// A response body's writer, handed to a storage's reads one chunk at a time.
private final class WriterBox: @unchecked Sendable {
    // @unchecked: the storage calls `write` once at a time, awaiting each call, from the body's task.
    private var writer: any ResponseBodyWriter

    init(_ writer: any ResponseBodyWriter) {
        self.writer = writer
    }

    func write(_ bytes: ByteBuffer) async throws {
        try await writer.write(bytes)
    }
}

/// One byte range of a `Range` header (RFC 9110): `bytes=FIRST-`, `bytes=FIRST-LAST` or `bytes=-SUFFIX`.
enum ByteRange: Equatable {
    /// The range asked for, clamped to the size.
    case bytes(Range<Int64>)
    /// A range that starts past the end: `416`.
    case unsatisfiable
    /// No single byte range the server honours (several ranges, another unit, bad syntax): the whole file.
    case whole

    static func parse(_ header: String, size: Int64) -> ByteRange {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .whole }
        let (first, last) = (Int64(parts[0]), Int64(parts[1]))
        switch (parts[0].isEmpty, parts[1].isEmpty) {
        case (true, false):
            guard let suffix = last else { return .whole }
            guard suffix > 0 else { return .unsatisfiable }
            return size == 0 ? .unsatisfiable : .bytes(max(0, size - suffix)..<size)
        case (false, _):
            guard let first, first >= 0 else { return .whole }
            if parts[1].isEmpty {
                return first < size ? .bytes(first..<size) : .unsatisfiable
            }
            guard let last, last >= first else { return .whole }
            return first < size ? .bytes(first..<min(last + 1, size)) : .unsatisfiable
        default:
            return .whole
        }
    }
}
