import AmberSyncProtocol
import Foundation

/// JSON as text in a database column, written with sorted keys so equal values are equal text.
///
/// Records and answers (the protocol's types) are written and read exactly (``JSONWriter``,
/// ``JSONReader``), so a number keeps its digits and a key its bytes; other values go through
/// `JSONEncoder` and `JSONDecoder`.
package enum JSONText {
    package static func encode<Value: Encodable>(_ value: Value) throws -> String {
        if let wire = value as? any JSONWireEncodable {
            return JSONWriter.text(of: wire)
        }
        if let versions = value as? [String: Int64] { return encode(versions) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// A record's field versions, written with every record a push stores: without the dynamic
    /// casts of ``encode(_:)-(Value)`` when the type is known.
    package static func encode(_ versions: [String: Int64]) -> String {
        // Those of a record created by the push: all its keys changed at its creation.
        if versions.isEmpty { return "{}" }
        return JSONWriter.text(of: versions.mapValues(JSONValue.integer))
    }

    package static func decode<Value: Decodable>(_ type: Value.Type, from text: String) throws -> Value {
        if let wire = type as? any JSONWireDecodable.Type {
            var text = text
            return try text.withUTF8 { bytes in
                try wire.init(jsonBytes: bytes) as! Value  // the cast cannot fail: `wire` is `Value`
            }
        }
        if type == [String: Int64].self, case .object(let members)? = try? JSONReader.value(from: text.utf8) {
            var versions: [String: Int64] = [:]
            versions.reserveCapacity(members.count)
            for (key, value) in members {
                guard case .integer(let version) = value else { break }
                versions[key] = version
            }
            if versions.count == members.count { return versions as! Value }  // `Value` is `[String: Int64]`
        }
        return try JSONDecoder().decode(type, from: Data(text.utf8))
    }
}
