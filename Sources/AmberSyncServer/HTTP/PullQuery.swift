import AmberSyncProtocol
import Hummingbird

/// The query of `GET /v1/pull`: `cursor` (default 0), `limit` (default and cap 1,000) and
/// `wait` (seconds, default 0, cap 60), and `cursorTag`, the tag the client got with its cursor.
struct PullQuery: Equatable {
    var cursor: Int64 = 0
    var cursorTag: String?
    var limit = SyncLimits.defaultPullLimit
    var wait = 0

    /// Whether `tag` has the form of a cursor tag the server gives: 1 to 64 printable ASCII characters.
    static func isCursorTag(_ tag: String) -> Bool {
        (1...64).contains(tag.utf8.count) && tag.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// Reads the query, refusing negative, empty and non-integer values with a `400` sentence.
    init(_ parameters: Parameters) throws {
        if let cursor = try Self.integer("cursor", in: parameters) {
            self.cursor = cursor
        }
        if let tag = parameters.get("cursorTag") {
            guard Self.isCursorTag(tag) else {
                throw SyncServerError.invalidRequest(
                    "The query parameter `cursorTag` must be 1 to 64 printable ASCII characters, as a pull answered it."
                )
            }
            cursorTag = tag
        }
        if let limit = try Self.integer("limit", in: parameters) {
            guard limit >= 1 else {
                throw SyncServerError.invalidRequest("The query parameter `limit` must be at least 1.")
            }
            self.limit = Int(min(limit, Int64(SyncLimits.maximumPullLimit)))
        }
        if let wait = try Self.integer("wait", in: parameters) {
            self.wait = Int(min(wait, Int64(SyncLimits.maximumWait)))
        }
    }

    private static func integer(_ name: String, in parameters: Parameters) throws -> Int64? {
        guard let text = parameters.get(name) else { return nil }
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let value = Int64(text)
        else {
            throw SyncServerError.invalidRequest(
                "The query parameter `\(name)` must be a non-negative integer, not \"\(text.prefix(40))\"."
            )
        }
        return value
    }
}
