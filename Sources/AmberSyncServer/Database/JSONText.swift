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
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    package static func decode<Value: Decodable>(_ type: Value.Type, from text: String) throws -> Value {
        if let wire = type as? any JSONWireDecodable.Type {
            var text = text
            return try text.withUTF8 { bytes in
                try wire.init(jsonBytes: bytes) as! Value  // the cast cannot fail: `wire` is `Value`
            }
        }
        return try JSONDecoder().decode(type, from: Data(text.utf8))
    }
}
