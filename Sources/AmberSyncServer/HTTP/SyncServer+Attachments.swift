import AmberLock
import AmberSyncProtocol
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension SyncServer {
    /// `PUT`, `HEAD` and `GET /v1/attachments/{sha256}`: each user's attachments, by the SHA-256
    /// of their bytes, streamed both ways; `POST /v1/attachments/missing`: which of many the user lacks.
    func addAttachmentRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.post("attachments/missing") { request, context in
            try await missingAttachments(request, user: context.user)
        }
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

    /// The attachments of the body's list that the user lacks, each with the bytes held of its upload.
    private func missingAttachments(_ request: Request, user: SyncUser) async throws -> Response {
        let storage = try storage()
        let body = try await request.collectBody(limit: maximumBodySize)
        let asked = try await Self.decode(MissingAttachmentsRequest.self, from: body)
        let missing = try await storage.missingAttachments(asked.sha256, for: user)
        return try Response.json(MissingAttachmentsResponse(missing: missing))
    }

    /// Keeps the body as the attachment `hash` when its bytes have that hash; nothing is kept otherwise.
    ///
    /// Without `Content-Range` the body is the whole file, and any bytes held of an earlier upload
    /// are dropped. With `Content-Range: bytes FIRST-LAST/SIZE` it continues the user's upload,
    /// which must hold exactly `FIRST` bytes (`409` otherwise, with the bytes held; `0` starts over). The bytes of
    /// a cut request stay held for the next one; the SHA-256 is checked over the whole file by the
    /// request that ends it, the held bytes read again once, before it becomes visible.
    private func putAttachment(_ request: Request, hash: String, user: SyncUser) async throws -> Response {
        let storage = try storage()
        let maximum = limits.maximumAttachmentSize
        let declared = request.headers[.contentLength].flatMap { Int64($0) }
        let range = try request.headers[.contentRange].map { try UploadRange(parsing: $0) }
        if let range, let declared, declared != range.count {
            throw SyncServerError.invalidRequest(
                "The body has \(declared) bytes but Content-Range bytes \(range.first)-\(range.last)/\(range.size) names \(range.count)."
            )
        }
        let size = range?.size ?? declared
        if let size, size > maximum {
            throw Self.tooLarge(maximum)
        }
        if try await storage.attachmentSize(hash, for: user) != nil {
            // The user has these bytes already: nothing to read, nothing uploaded twice.
            return Response(status: .ok, headers: [.contentLength: "0"])
        }
        var room = Int64.max
        if let quota = limits.attachmentQuota {
            room = quota - (try await storage.attachmentBytes(for: user))
            if let size, size > room { throw Self.overQuota(quota) }
        }
        let first = range?.first ?? 0
        let end = range.map { $0.last + 1 }
        let upload = try await storage.beginAttachment(hash, for: user, at: first)
        let key = upload.heldBytesIdentity.map { UploadHashes.key(user: user, hash: hash, identity: $0) }
        // The hash of the bytes held before this part: carried on from the request of this
        // process that wrote them, when it is remembered; otherwise only the request that ends
        // the file hashes it, the held bytes read again once (a part that leaves the file
        // unfinished has nothing to be checked against yet).
        let hasher = LockedValue<SHA256?>(first == 0 ? SHA256() : key.flatMap { uploadHashes.take($0, at: first) })
        let completes = range.map { $0.last + 1 == $0.size } ?? true
        if completes && hasher.withLock({ $0 == nil }) {
            hasher.withLock { $0 = SHA256() }
            let hashes = uploadHashes
            do {
                try await upload.readHeld { bytes in
                    bytes.withUnsafeReadableBytes { pointer in hasher.withLock { $0?.update(bufferPointer: pointer) } }
                    hashes.countHeldBytesRead(bytes.readableBytes)
                }
            } catch {
                // Held bytes that cannot be read again cannot be checked: the upload starts over.
                await upload.cancel()
                throw error
            }
        }
        let hashing = hasher.withLock { $0 != nil }
        var received = first
        /// Ends this request's part, keeping the bytes written, and remembers their hash for the
        /// request that continues them.
        func suspend() async -> Int64 {
            let held = await upload.suspend()
            // The identity as the upload leaves it: one that started over is named by `suspend()`.
            if hashing, held == received, let identity = upload.heldBytesIdentity, let state = hasher.withLock({ $0 }) {
                uploadHashes.keep(
                    UploadHashes.key(user: user, hash: hash, identity: identity), hasher: state, bytes: held)
            }
            return held
        }
        do {
            for try await bytes in request.body {
                received += Int64(bytes.readableBytes)
                if received > maximum { throw Refusal(Self.tooLarge(maximum)) }
                if received > room { throw Refusal(Self.overQuota(limits.attachmentQuota ?? 0)) }
                if let end, received > end {
                    throw Refusal(
                        SyncServerError.invalidRequest(
                            "The body runs past byte \(end - 1), the last its Content-Range names; nothing was kept."))
                }
                if hashing {
                    bytes.withUnsafeReadableBytes { pointer in hasher.withLock { $0?.update(bufferPointer: pointer) } }
                }
                try await upload.write(bytes)
                metrics.countAttachmentBytes(bytes.readableBytes)
            }
        } catch let refusal as Refusal {
            await upload.cancel()
            throw refusal.error
        } catch {
            // A cut connection: what was written stays for the next request to resume.
            _ = await suspend()
            throw error
        }
        if let range, received < range.size {
            let held = await suspend()
            guard received == range.last + 1 else {
                throw SyncServerError.invalidRequest(
                    "The body ended at byte \(received), before the last byte its Content-Range names (\(range.last)); \(held) bytes are held."
                )
            }
            return Response(status: .accepted, headers: [.contentLength: "0", .amberUploadOffset: String(held)])
        }
        let found = Self.hex(hasher.withLock { $0 ?? SHA256() }.finalize())
        guard found == hash else {
            await upload.cancel()
            throw SyncServerError.invalidRequest(
                "The file's SHA-256 is \(found) (\(received) bytes), not the path's \(hash); nothing was kept.")
        }
        let created = try await upload.finish()
        return Response(status: created ? .created : .ok, headers: [.contentLength: "0"])
    }

    private static func hex(_ digest: SHA256.Digest) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
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

    /// Whether the user has the attachment, and its size (`Content-Length`); no body. A `404`
    /// tells the bytes held of the user's unfinished upload of it (`Amber-Upload-Offset`).
    private func headAttachment(hash: String, user: SyncUser) async throws -> Response {
        let storage = try storage()
        guard let size = try await storage.attachmentSize(hash, for: user) else {
            let held = try await storage.heldUploadBytes(hash, for: user)
            return Response(status: .notFound, headers: [.contentLength: "0", .amberUploadOffset: String(held)])
        }
        return Response(
            status: .ok,
            headers: [.contentLength: String(size), .contentType: "application/octet-stream", .acceptRanges: "bytes"])
    }

    /// The attachment's bytes, all or the one range `Range` asks for, read as the client takes them.
    private func getAttachment(_ request: Request, hash: String, user: SyncUser) async throws -> Response {
        let storage = try storage()
        guard let size = try await storage.readableAttachmentSize(hash, for: user) else { throw Self.notFound(hash) }
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

/// An error that refuses an upload's bytes: the upload is dropped, not kept for resuming.
private struct Refusal: Error {
    let error: any Error
    init(_ error: any Error) { self.error = error }
}

extension HTTPField.Name {
    /// `Amber-Upload-Offset` (``SyncHeader/uploadOffset``).
    static let amberUploadOffset = HTTPField.Name(SyncHeader.uploadOffset)!
}

/// The `Content-Range` of a `PUT` that continues an upload: `bytes FIRST-LAST/SIZE`.
struct UploadRange: Equatable {
    /// The first byte the body holds.
    let first: Int64
    /// The last byte the body holds.
    let last: Int64
    /// The size of the whole file.
    let size: Int64

    /// The bytes the body holds.
    var count: Int64 { last - first + 1 }

    /// Parses `header`, throwing a `400` sentence for anything but one satisfiable range.
    init(parsing header: String) throws {
        let invalid = SyncServerError.invalidRequest(
            "The Content-Range \(header.prefix(80)) is not bytes FIRST-LAST/SIZE with FIRST <= LAST < SIZE.")
        guard header.hasPrefix("bytes ") else { throw invalid }
        let spec = header.dropFirst("bytes ".count)
        let halves = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2 else { throw invalid }
        let bounds = halves[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Self.number(bounds[0]), let last = Self.number(bounds[1]),
            let size = Self.number(halves[1]), first <= last, last < size
        else { throw invalid }
        (self.first, self.last, self.size) = (first, last, size)
    }

    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int64(text)
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
