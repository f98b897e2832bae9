/// A file that travels with a record: the SHA-256 of its bytes, their count, a media type and
/// an optional file name.
///
/// An attachment is a plain value, usable as a field of an `@Immutable` model and merged like any
/// other field. The bytes live apart, in a content-addressed folder beside the store's SQLite
/// file (`AttachmentStore` of module `AmberSync`), and sync moves them before the records that
/// name them.
///
/// ```swift
/// @Immutable
/// struct Note: Identifiable, Hashable, Codable, Sendable {
///     let id: UUID
///     let text: String
///     let photo: Attachment?
///     let files: [Attachment]
/// }
///
/// let photo = try attachments.add(jpegData, mediaType: "image/jpeg", fileName: "ice-cream.jpg")
/// try notes.add(note.with(photo: photo))
/// ```
///
/// Its JSON form is the object `{"sha256": …, "size": …, "mediaType": …, "fileName": …}`
/// (`fileName` left out when `nil`): sync finds a record's attachments by that shape.
public struct Attachment: Codable, Hashable, Sendable {
    /// The SHA-256 of the bytes: 64 lowercase hexadecimal digits. Equal bytes have equal hashes,
    /// and one copy of them is kept.
    public let sha256: String
    /// How many bytes the file has.
    public let size: Int64
    /// The media type of the bytes, such as `image/jpeg`.
    public let mediaType: String
    /// The name the file had when it was added, for saving it again; `nil` when it had none.
    public let fileName: String?

    /// Describes bytes already hashed; `AttachmentStore.add` hashes and stores them for you.
    ///
    /// - Parameters:
    ///   - sha256: The SHA-256 of the bytes, as 64 hexadecimal digits (kept lowercase).
    ///   - size: How many bytes the file has, 0 or more.
    ///   - mediaType: The media type of the bytes, such as `image/jpeg`.
    ///   - fileName: The file's name, if it has one.
    public init(sha256: String, size: Int64, mediaType: String, fileName: String? = nil) {
        precondition(Self.isValidHash(sha256), "An attachment's sha256 must be 64 hexadecimal digits.")
        precondition(size >= 0, "An attachment's size must be 0 or more bytes.")
        self.sha256 = sha256.lowercased()
        self.size = size
        self.mediaType = mediaType
        self.fileName = fileName
    }

    /// Decodes the JSON form, refusing a hash that is not 64 hexadecimal digits or a negative size.
    ///
    /// - Throws: `DecodingError.dataCorrupted` naming the field that breaks the rule.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let sha256 = try container.decode(String.self, forKey: .sha256)
        guard Self.isValidHash(sha256) else {
            throw DecodingError.dataCorruptedError(
                forKey: .sha256, in: container, debugDescription: "an attachment's sha256 must be 64 hexadecimal digits"
            )
        }
        let size = try container.decode(Int64.self, forKey: .size)
        guard size >= 0 else {
            throw DecodingError.dataCorruptedError(
                forKey: .size, in: container, debugDescription: "an attachment's size must be 0 or more bytes")
        }
        self.sha256 = sha256.lowercased()
        self.size = size
        mediaType = try container.decode(String.self, forKey: .mediaType)
        fileName = try container.decodeIfPresent(String.self, forKey: .fileName)
    }

    private enum CodingKeys: String, CodingKey {
        case sha256, size, mediaType, fileName
    }

    /// Whether `text` is a SHA-256 in hexadecimal: 64 digits `0-9`, `a-f` (or `A-F`).
    ///
    /// - Parameter text: The text to check.
    /// - Returns: `true` for 64 hexadecimal digits.
    public static func isValidHash(_ text: String) -> Bool {
        text.utf8.count == 64
            && text.utf8.allSatisfy { byte in
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
            }
    }
}
