/// `POST /v1/attachments/missing`: which of these attachments the user lacks, in one request
/// instead of a `HEAD` each.
///
/// ```json
/// {"sha256": ["9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"]}
/// ```
public struct MissingAttachmentsRequest: Sendable, Equatable, Codable {
    /// The SHA-256 of each attachment asked about: 1 to ``maximumCount`` of them.
    public var sha256: [String]

    /// The most hashes one request may ask about.
    public static let maximumCount = 1_000

    /// Creates a value with these members.
    public init(sha256: [String]) {
        self.sha256 = sha256
    }
}

/// The answer to ``MissingAttachmentsRequest``: the attachments asked about that the user lacks,
/// in the order asked.
///
/// ```json
/// {"missing": [{"sha256": "9f86d081…", "uploadOffset": 1048576}]}
/// ```
public struct MissingAttachmentsResponse: Sendable, Equatable, Codable {
    /// The attachments the user lacks.
    public var missing: [MissingAttachment]

    /// Creates a value with these members.
    public init(missing: [MissingAttachment]) {
        self.missing = missing
    }
}

/// An attachment the user lacks, and the bytes the server holds of an unfinished upload of it.
public struct MissingAttachment: Sendable, Equatable, Codable {
    /// The attachment's SHA-256.
    public var sha256: String
    /// The bytes held of an unfinished upload, where a `PUT` with `Content-Range` continues; `0`
    /// for none (as `Amber-Upload-Offset` on a `404` to `HEAD`).
    public var uploadOffset: Int64

    /// Creates a value with these members.
    public init(sha256: String, uploadOffset: Int64) {
        self.sha256 = sha256
        self.uploadOffset = uploadOffset
    }
}

extension MissingAttachmentsRequest: JSONWireEncodable, JSONWireDecodable {
    package func write(to writer: inout JSONWriter) {
        writer.raw(#"{"sha256":["#)
        for (index, hash) in sha256.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.write(hash)
        }
        writer.raw("]}")
    }

    package init(json: JSONValue, path: [JSONPathComponent]) throws(JSONWireError) {
        let fields = try JSONFields(json, path: path)
        let elements = try fields.array("sha256")
        guard (1...Self.maximumCount).contains(elements.count) else {
            throw fields.error("sha256", "must hold 1 to \(Self.maximumCount) hashes, not \(elements.count)")
        }
        var hashes: [String] = []
        hashes.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard case .string(let hash) = element, AttachmentReference.isHash(hash) else {
                throw .field(
                    path: path + [.key("sha256"), .index(index)],
                    problem: "must be a SHA-256: 64 lowercase hexadecimal digits")
            }
            hashes.append(hash)
        }
        self.init(sha256: hashes)
    }
}

extension MissingAttachmentsResponse: JSONWireEncodable, JSONWireDecodable {
    package func write(to writer: inout JSONWriter) {
        writer.raw(#"{"missing":["#)
        for (index, attachment) in missing.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.raw(#"{"sha256":"#)
            writer.write(attachment.sha256)
            writer.raw(#","uploadOffset":"#)
            writer.write(attachment.uploadOffset)
            writer.raw("}")
        }
        writer.raw("]}")
    }

    package init(json: JSONValue, path: [JSONPathComponent]) throws(JSONWireError) {
        let fields = try JSONFields(json, path: path)
        self.init(missing: try fields.array("missing", of: MissingAttachment.self))
    }
}

extension MissingAttachment: JSONWireDecodable {
    package init(json: JSONValue, path: [JSONPathComponent]) throws(JSONWireError) {
        let fields = try JSONFields(json, path: path)
        self.init(sha256: try fields.string("sha256"), uploadOffset: try fields.int64("uploadOffset"))
    }
}
