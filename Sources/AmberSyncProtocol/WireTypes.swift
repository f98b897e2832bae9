import Foundation

/// The version of the wire protocol these types speak; every path starts with `/v1/`.
public let syncProtocolVersion = 1

/// A JSON value, kept as parsed: records travel as opaque JSON objects.
///
/// Client and server read and write these exactly: a number keeps its digits as written
/// (``JSONNumber``), a string or object key its bytes. Object keys that differ only in Unicode
/// normalization (`"\u00e9"` and `"e\u0301"`) count as one key, as they do for Swift's
/// `String`: the sync protocol refuses an object that holds both.
///
/// The `Codable` conformance serves apps and tools that use `JSONEncoder` or `JSONDecoder`;
/// those read and write numbers through `Int64`, `UInt64` or `Double`.
public enum JSONValue: Sendable, Hashable, Codable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without fraction or exponent that fits `Int64` (but `-0`, which is a ``number(_:)``).
    case integer(Int64)
    /// Any other number, as written: `1.0`, `-0.0`, `18446744073709551615`, `1e400`.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Decodes the JSON form; a member of the wrong type is an error.
    ///
    /// A number that fits neither `Int64` nor `UInt64` comes through `Double`: to keep its
    /// digits, read the text with the sync client or server rather than a `Decoder`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(UInt64.self) {
            self = .number(JSONNumber(unchecked: String(value)))
        } else if let value = try? container.decode(Double.self), let number = JSONNumber(value) {
            self = .number(number)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a JSON value")
        }
    }

    /// Encodes the JSON form of the protocol; a ``number(_:)`` goes through `Int64`, `UInt64`
    /// or `Double`, whichever holds it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value):
            if let integer = value.int64Value {
                try container.encode(integer)
            } else if let integer = value.uint64Value {
                try container.encode(integer)
            } else {
                try container.encode(value.doubleValue)
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// Whether two values are the same JSON text: strings and object keys compare by their
    /// UTF-8 bytes, not by Swift's canonical equivalence, so `"\u00e9"` and `"e\u0301"` differ;
    /// numbers compare by their literal text, so `1.0` and `1` differ.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let left), .bool(let right)): return left == right
        case (.integer(let left), .integer(let right)): return left == right
        case (.number(let left), .number(let right)): return left.text.hasSameUTF8(as: right.text)
        case (.string(let left), .string(let right)): return sameBytes(left, right)
        case (.array(let left), .array(let right)): return left == right
        case (.object(let left), .object(let right)): return exactlyEqual(left, right)
        default: return false
        }
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case .bool(let value): hasher.combine(value)
        case .integer(let value): hasher.combine(value)
        case .number(let value):
            hasher.combine(3 as UInt8)
            Self.combineBytes(value.text, into: &hasher)
        case .string(let value):
            hasher.combine(4 as UInt8)
            Self.combineBytes(value, into: &hasher)
        case .array(let value): hasher.combine(value)
        case .object(let value): hasher.combine(value)
        }
    }

    /// Whether two objects are the same JSON text: the same keys, byte for byte, with equal values.
    public static func exactlyEqual(_ lhs: [String: JSONValue]?, _ rhs: [String: JSONValue]?) -> Bool {
        guard let lhs, let rhs else { return lhs == nil && rhs == nil }
        guard lhs.count == rhs.count else { return false }
        for (key, value) in lhs {
            guard let index = rhs.index(forKey: key), sameBytes(rhs[index].key, key), rhs[index].value == value else {
                return false
            }
        }
        return true
    }

    private static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.hasSameUTF8(as: rhs)
    }

    private static func combineBytes(_ text: String, into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(text.utf8.count)
    }

    /// The members of an object, or `nil` for any other value.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }
}

/// A record's JSON object: what the server stores for a user's record.
public typealias JSONObject = [String: JSONValue]

/// `POST /v1/push`: local changes of one client, in the order they were made.
public struct PushRequest: Sendable, Equatable, Codable {
    /// The client that sends them; ``Mutation/mutationID``s increase per client.
    public var clientID: String
    /// The mutations, with increasing ``Mutation/mutationID``s.
    public var mutations: [Mutation]
    /// The client's pull cursor, optionally: when the server's history at it is the one the
    /// client followed (``cursorTag``) and the versions this request's mutations got are exactly
    /// the ones after it, the answer says how far the cursor may move (``PushResponse/cursor``),
    /// so the client does not pull its own changes back.
    public var cursor: Int64?
    /// The tag the server gave with ``cursor`` (a pull's `cursorTag`). Without it the answer
    /// moves a cursor above 0 nowhere: a server restored from a backup may have reached the
    /// same version along another history, which only the tag tells.
    public var cursorTag: String?

    /// Creates a value with these members.
    public init(clientID: String, mutations: [Mutation], cursor: Int64? = nil, cursorTag: String? = nil) {
        self.clientID = clientID
        self.mutations = mutations
        self.cursor = cursor
        self.cursorTag = cursorTag
    }
}

/// One change of one record, as a client pushes it.
public struct Mutation: Sendable, Equatable, Codable {
    /// Increases per client; a mutation sent again with the same id is answered as the first time.
    public var mutationID: Int64
    /// The record's collection (an `IdentityStore`'s key), matching `[A-Za-z0-9_.-]{1,64}`.
    public var collection: String
    /// The record's id, 1 to 256 bytes of UTF-8 without U+0000.
    public var id: String
    /// The server version the client last saw of this record, or `nil` when it never saw it.
    public var baseVersion: Int64?
    /// The record as its JSON text, or `nil` to delete it: a client sends the text its store
    /// wrote without reading it.
    public var record: JSONRecord?
    /// The top-level keys this mutation changes; `nil` replaces the record whole.
    public var fields: [String]?

    /// The record's JSON object, or `nil` to delete it.
    public var value: JSONObject? {
        get { record?.object }
        set { record = newValue.map(JSONRecord.init) }
    }

    /// Creates a value with these members.
    public init(
        mutationID: Int64, collection: String, id: String, baseVersion: Int64?, value: JSONObject?,
        fields: [String]? = nil
    ) {
        self.init(
            mutationID: mutationID, collection: collection, id: id, baseVersion: baseVersion,
            record: value.map(JSONRecord.init), fields: fields)
    }

    /// Creates a value with these members, the record as its text.
    public init(
        mutationID: Int64, collection: String, id: String, baseVersion: Int64?, record: JSONRecord?,
        fields: [String]? = nil
    ) {
        self.mutationID = mutationID
        self.collection = collection
        self.id = id
        self.baseVersion = baseVersion
        self.record = record
        self.fields = fields
    }

    enum CodingKeys: String, CodingKey { case mutationID, collection, id, baseVersion, value, fields }

    /// Decodes the JSON form; a member of the wrong type is an error.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        mutationID = try container.decode(Int64.self, forKey: .mutationID)
        collection = try container.decode(String.self, forKey: .collection)
        id = try container.decode(String.self, forKey: .id)
        // Present and null, or absent: both mean "never seen" / "delete"; a wrong type is an error.
        baseVersion = try container.decodeIfPresent(Int64.self, forKey: .baseVersion)
        record = try container.decodeIfPresent(JSONObject.self, forKey: .value).map(JSONRecord.init)
        fields = try container.decodeIfPresent([String].self, forKey: .fields)
    }

    /// Encodes the JSON form of the protocol.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(mutationID, forKey: .mutationID)
        try container.encode(collection, forKey: .collection)
        try container.encode(id, forKey: .id)
        try container.encode(baseVersion, forKey: .baseVersion)  // explicit null
        try container.encode(value, forKey: .value)  // explicit null deletes
        try container.encodeIfPresent(fields, forKey: .fields)
    }
}

/// The answer to a ``PushRequest``: one result per mutation, in the same order.
public struct PushResponse: Sendable, Equatable, Codable {
    /// One result per mutation of the request, in the same order.
    public var results: [MutationResult]
    /// Where the client's pull cursor may move, when the request sent ``PushRequest/cursor``
    /// and the versions its mutations got are exactly the ones after it: the last of them.
    /// Pulling up to it would only bring back this request's own changes.
    public var cursor: Int64?
    /// The tag of the server's history at ``cursor``, to send with it as a pull's `cursorTag`.
    public var cursorTag: String?

    /// Creates a value with these members.
    public init(results: [MutationResult], cursor: Int64? = nil, cursorTag: String? = nil) {
        self.results = results
        self.cursor = cursor
        self.cursorTag = cursorTag
    }

    /// The last of the versions `results` applied, when they are exactly the versions after
    /// `cursor`: `cursor + 1`, `cursor + 2`, … in some order, and no other result applied.
    ///
    /// - Parameters:
    ///   - results: A push's results.
    ///   - cursor: The pushing client's pull cursor.
    /// - Returns: The version the cursor may move to, or `nil`.
    public static func cursor(after cursor: Int64, applying results: [MutationResult]) -> Int64? {
        let versions = results.filter { $0.status == .applied }.map(\.version).sorted()
        guard let last = versions.last else { return nil }
        for (offset, version) in versions.enumerated() {
            // A cursor near the largest version has no versions after it to move over.
            let (expected, overflow) = cursor.addingReportingOverflow(Int64(offset) + 1)
            if overflow || version != expected { return nil }
        }
        return last
    }
}

/// What became of one mutation.
public struct MutationResult: Sendable, Equatable, Codable {
    /// What became of a mutation.
    public enum Status: String, Sendable, Equatable, Codable {
        /// Written; ``MutationResult/version`` is the record's new version.
        case applied
        /// Not written: the record changed on the server since the mutation's base version.
        case conflict
    }

    /// The id of the mutation this result answers.
    public var mutationID: Int64
    /// Whether the mutation was written.
    public var status: Status
    /// The record's version on the server after this mutation (new when applied, current on conflict).
    public var version: Int64
    /// The server's record: on `applied`, only when it differs from what was sent (merged with
    /// other fields); on `conflict`, always (`nil` when deleted).
    public var value: JSONObject?
    /// On a conflict of a mutation with fields: which of them changed on the server.
    public var fields: [String]?

    /// Creates a value with these members.
    public init(mutationID: Int64, status: Status, version: Int64, value: JSONObject? = nil, fields: [String]? = nil) {
        self.mutationID = mutationID
        self.status = status
        self.version = version
        self.value = value
        self.fields = fields
    }

    enum CodingKeys: String, CodingKey { case mutationID, status, version, value, fields }

    /// Decodes the JSON form; a member of the wrong type is an error.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        mutationID = try container.decode(Int64.self, forKey: .mutationID)
        status = try container.decode(Status.self, forKey: .status)
        version = try container.decode(Int64.self, forKey: .version)
        value = try container.decodeIfPresent(JSONObject.self, forKey: .value)
        fields = try container.decodeIfPresent([String].self, forKey: .fields)
    }

    /// Encodes the JSON form of the protocol.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(mutationID, forKey: .mutationID)
        try container.encode(status, forKey: .status)
        try container.encode(version, forKey: .version)
        // A conflict always says what the server has, `null` for a deleted record.
        if status == .conflict {
            try container.encode(value, forKey: .value)
        } else {
            try container.encodeIfPresent(value, forKey: .value)
        }
        try container.encodeIfPresent(fields, forKey: .fields)
    }
}

/// `GET /v1/pull`: the changes after a cursor, in version order.
public struct PullResponse: Sendable, Equatable, Codable {
    /// The changed records, in version order, each at most once.
    public var changes: [RecordChange]
    /// The version to pass as `cursor` next time.
    public var cursor: Int64
    /// Whether more changes wait after these (pull again at once).
    public var hasMore: Bool
    /// Names the server's history at ``cursor``: pass it back as `cursorTag` with that cursor, so
    /// the server can tell a cursor of its own history from one it no longer has (a database
    /// restored from a backup). `nil` for cursor 0.
    public var cursorTag: String?
    /// On a pull from cursor 0: how many records the whole pull lists (deleted ones included),
    /// for a client to show its progress. `nil` for other cursors.
    public var total: Int64?

    /// Creates a value with these members.
    public init(changes: [RecordChange], cursor: Int64, hasMore: Bool, cursorTag: String? = nil, total: Int64? = nil) {
        self.changes = changes
        self.cursor = cursor
        self.hasMore = hasMore
        self.cursorTag = cursorTag
        self.total = total
    }
}

/// The latest state of one record, as a pull reports it.
public struct RecordChange: Sendable, Equatable, Codable {
    /// The record's collection.
    public var collection: String
    /// The record's id.
    public var id: String
    /// The version of the record's latest change.
    public var version: Int64
    /// The record as its JSON text, or `nil` when it was deleted: what the server stored,
    /// carried without being read.
    public var record: JSONRecord?

    /// The record's JSON object, or `nil` when it was deleted.
    public var value: JSONObject? {
        get { record?.object }
        set { record = newValue.map(JSONRecord.init) }
    }

    /// Creates a value with these members.
    public init(collection: String, id: String, version: Int64, value: JSONObject?) {
        self.init(collection: collection, id: id, version: version, record: value.map(JSONRecord.init))
    }

    /// Creates a value with these members, the record as its text.
    public init(collection: String, id: String, version: Int64, record: JSONRecord?) {
        self.collection = collection
        self.id = id
        self.version = version
        self.record = record
    }

    enum CodingKeys: String, CodingKey { case collection, id, version, value }

    /// Decodes the JSON form; a member of the wrong type is an error.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        collection = try container.decode(String.self, forKey: .collection)
        id = try container.decode(String.self, forKey: .id)
        version = try container.decode(Int64.self, forKey: .version)
        record = try container.decodeIfPresent(JSONObject.self, forKey: .value).map(JSONRecord.init)
    }

    /// Encodes the JSON form of the protocol.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(collection, forKey: .collection)
        try container.encode(id, forKey: .id)
        try container.encode(version, forKey: .version)
        try container.encode(value, forKey: .value)  // explicit null for a deletion
    }
}

/// The body of every error response: `{"error": "..."}`, plus `"reset": true` on `410` and a
/// ``code`` where a client is expected to act on the error.
public struct ErrorResponse: Sendable, Equatable, Codable {
    /// One readable sentence.
    public var error: String
    /// Set on `410 Gone`: the cursor is not one the server can continue from; pull again from 0.
    public var reset: Bool?
    /// What a client should do, for the errors it is expected to recover from by itself:
    /// see ``SyncErrorCode``.
    public var code: String?

    /// Creates a value with these members.
    public init(error: String, reset: Bool? = nil, code: String? = nil) {
        self.error = error
        self.reset = reset
        self.code = code
    }
}

/// The `code` of the error answers a client recovers from by itself.
public enum SyncErrorCode {
    /// `410`: the server forgot deletions newer than the cursor. Pull again from 0, keep pending
    /// changes, and remove the local records the server no longer lists.
    public static let cursorExpired = "cursor_expired"
    /// `410`: the server's history does not hold the cursor (its database was restored from a
    /// backup, or replaced). Pull again from 0, keep pending changes, and push back every local
    /// record the server no longer lists.
    public static let historyChanged = "history_changed"
    /// `409`: another client already used this client id for a different mutation with the same
    /// id (a copied device). Nothing was applied: take a new client id and push again.
    public static let clientIDReused = "client_id_reused"
}

/// HTTP headers of the protocol.
public enum SyncHeader {
    /// `Amber-Database-ID`: names the server's database on every answer. A client that sees it
    /// change resets as for ``SyncErrorCode/historyChanged``: the database was replaced.
    public static let databaseID = "Amber-Database-ID"
    /// `Amber-Upload-Offset`: on a `404` to `HEAD /v1/attachments/{sha256}` and a `409` to its
    /// `PUT`, the bytes the server holds of the user's unfinished upload of that attachment (`0`
    /// for none): a client resumes by sending the rest with `Content-Range: bytes OFFSET-LAST/SIZE`.
    /// On a `202` to a `PUT` of a part of a file, the bytes held once that part was kept.
    public static let uploadOffset = "Amber-Upload-Offset"
}

/// `GET /v1/health`.
public struct HealthResponse: Sendable, Equatable, Codable {
    /// Whether the mutation was written.
    public var status: String
    /// The wire protocol version the server speaks.
    public var protocolVersion: Int

    /// Creates a value with these members.
    public init(status: String = "ok", protocolVersion: Int = syncProtocolVersion) {
        self.status = status
        self.protocolVersion = protocolVersion
    }
}

/// The limits of the protocol that both sides check.
public enum SyncLimits {
    /// Longest collection name, in bytes.
    public static let collectionNameLength = 64
    /// Longest record id, in bytes of UTF-8.
    public static let idLength = 256
    /// Default and largest `limit` of a pull.
    public static let defaultPullLimit = 1_000
    /// Largest `limit` of a pull; larger ones count as this.
    public static let maximumPullLimit = 1_000
    /// Longest `wait` of a pull, in seconds.
    public static let maximumWait = 60
    /// Default request body limit of the server, in bytes.
    public static let defaultMaximumBody = 8 * 1_024 * 1_024

    /// Whether `name` is a valid collection name: `[A-Za-z0-9_.-]{1,64}`.
    public static func isValidCollection(_ name: String) -> Bool {
        let utf8 = name.utf8
        guard !utf8.isEmpty, utf8.count <= collectionNameLength else { return false }
        return utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x5F || byte == 0x2E || byte == 0x2D
        }
    }

    /// Whether `id` is a valid record id: 1 to 256 bytes of UTF-8, without U+0000 (which
    /// databases cut text at).
    public static func isValidID(_ id: String) -> Bool {
        !id.utf8.isEmpty && id.utf8.count <= idLength && !id.utf8.contains(0)
    }
}
