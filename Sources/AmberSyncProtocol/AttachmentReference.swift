import Foundation

/// An attachment a record names: found in its JSON by the shape `Attachment` encodes to,
/// `{"sha256": "<64 hex digits>", "size": <bytes>, "mediaType": "…", "fileName": "…"}`.
///
/// Client and server read records the same way: the client to upload a pending record's
/// attachments before the record and to fetch those of pulled records, the server to keep the
/// attachments live records name when it prunes.
///
/// ```swift
/// let references = AttachmentReference.all(in: record.object)
/// ```
public struct AttachmentReference: Sendable, Hashable {
    /// The SHA-256 of the bytes, 64 lowercase hexadecimal digits.
    public let sha256: String
    /// How many bytes the file has.
    public let size: Int64
    /// The bytes' media type.
    public let mediaType: String
    /// The file's name, if the record gives one.
    public let fileName: String?

    /// Creates a reference.
    public init(sha256: String, size: Int64, mediaType: String, fileName: String?) {
        self.sha256 = sha256
        self.size = size
        self.mediaType = mediaType
        self.fileName = fileName
    }

    /// Whether `text` is a hash as the protocol writes it in a path: 64 lowercase hexadecimal digits.
    ///
    /// - Parameter text: The text to check.
    /// - Returns: `true` for 64 digits `0-9` and `a-f`.
    public static func isHash(_ text: some StringProtocol) -> Bool {
        text.utf8.count == 64
            && text.utf8.allSatisfy { byte in
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            }
    }

    /// Whether a record's text may name an attachment: a cheap look before reading it.
    ///
    /// - Parameter text: A record's JSON text.
    /// - Returns: `false` when the text cannot name one.
    public static func mayOccur(in text: some StringProtocol) -> Bool {
        // A byte search: Foundation's `contains` on strings compares characters, and every
        // record a client pushes or pulls passes through here.
        let found = text.utf8.withContiguousStorageIfAvailable { bytes in
            containsKey(in: UnsafeRawBufferPointer(bytes))
        }
        return found ?? Array(text.utf8).withUnsafeBytes(containsKey(in:))
    }

    /// Whether `bytes` hold `"sha256"`, quotes included.
    private static func containsKey(in bytes: UnsafeRawBufferPointer) -> Bool {
        let key: StaticString = "\"sha256\""
        let length = key.utf8CodeUnitCount
        guard bytes.count >= length, let base = bytes.baseAddress else { return false }
        var offset = 0
        // Each quote that leaves room for the key, compared with it.
        while let quote = memchr(base + offset, Int32(UInt8(ascii: "\"")), bytes.count - length - offset + 1) {
            if memcmp(quote, key.utf8Start, length) == 0 { return true }
            offset = UnsafeRawPointer(quote) - base + 1
            guard offset <= bytes.count - length else { return false }
        }
        return false
    }

    /// The attachments `object` names, at any depth, each once, in the order first found.
    ///
    /// - Parameter object: A record's value.
    /// - Returns: The references; a hash given in upper case counts in lower case.
    public static func all(in object: JSONObject) -> [AttachmentReference] {
        var found: [AttachmentReference] = []
        var seen: Set<String> = []
        collect(.object(object), into: &found, seen: &seen)
        return found
    }

    /// The attachments `value` names, at any depth, each once, in the order first found.
    ///
    /// - Parameter value: Any JSON value.
    /// - Returns: The references.
    public static func all(in value: JSONValue) -> [AttachmentReference] {
        var found: [AttachmentReference] = []
        var seen: Set<String> = []
        collect(value, into: &found, seen: &seen)
        return found
    }

    private static func collect(_ value: JSONValue, into found: inout [AttachmentReference], seen: inout Set<String>) {
        switch value {
        case .array(let elements):
            for element in elements { collect(element, into: &found, seen: &seen) }
        case .object(let members):
            if let reference = reference(in: members) {
                if seen.insert(reference.sha256).inserted { found.append(reference) }
                return
            }
            for member in members.values { collect(member, into: &found, seen: &seen) }
        default:
            return
        }
    }

    /// The reference an object is, when it has an attachment's shape.
    private static func reference(in members: JSONObject) -> AttachmentReference? {
        guard case .string(let hash) = members["sha256"], case .integer(let size) = members["size"], size >= 0,
            case .string(let mediaType) = members["mediaType"]
        else { return nil }
        let lowercased = hash.lowercased()
        guard isHash(lowercased) else { return nil }
        var fileName: String?
        if case .string(let name) = members["fileName"] { fileName = name }
        return AttachmentReference(sha256: lowercased, size: size, mediaType: mediaType, fileName: fileName)
    }
}
