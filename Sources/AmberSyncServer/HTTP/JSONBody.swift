import Foundation

/// Decodes request bodies, turning every decoding failure into a `400` sentence that names the field.
enum JSONBody {
    /// Deepest nesting of arrays and objects a body may have; deeper bodies are refused before
    /// parsing, so no body can exhaust the stack.
    static let maximumDepth = 100

    static func decode<Value: Decodable>(_ type: Value.Type, from bytes: some Collection<UInt8>) throws -> Value {
        try checkDepth(of: bytes)
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch let error as DecodingError {
            throw SyncServerError.invalidRequest(sentence(for: error))
        }
    }

    /// Refuses JSON nested deeper than ``maximumDepth`` (brackets inside strings do not count).
    static func checkDepth(of bytes: some Collection<UInt8>) throws {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                guard depth <= maximumDepth else {
                    throw SyncServerError.invalidRequest(
                        "The request body nests arrays and objects deeper than \(maximumDepth) levels."
                    )
                }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
            default:
                break
            }
        }
    }

    static func sentence(for error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let context):
            return "The field `\(path(context.codingPath + [key]))` is missing."
        case .valueNotFound(_, let context):
            return "The field `\(path(context.codingPath))` must not be null."
        case .typeMismatch(let type, let context):
            if context.codingPath.isEmpty {
                return "The request body must be a JSON object."
            }
            return "The field `\(path(context.codingPath))` must be \(expectation(for: type, at: context.codingPath))."
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return "The request body is not valid JSON."
            }
            return "The field `\(path(context.codingPath))` holds an invalid value: \(context.debugDescription)"
        @unknown default:
            return "The request body does not match the protocol."
        }
    }

    private static func expectation(for type: Any.Type, at codingPath: [any CodingKey]) -> String {
        if codingPath.last?.stringValue == "value" {
            return "a JSON object or null"
        }
        switch type {
        case is String.Type: return "a string"
        case is Int64.Type, is Int.Type: return "an integer"
        case is Bool.Type: return "true or false"
        case is [String].Type: return "an array of strings"
        case is [Any].Type: return "an array"
        case is [String: Any].Type: return "a JSON object"
        default: return "of type \(type)"
        }
    }

    /// `mutations[2].value`, from a decoder's coding path.
    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text.isEmpty ? "(body)" : text
    }
}
