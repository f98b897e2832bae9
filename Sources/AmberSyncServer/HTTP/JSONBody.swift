import Foundation

/// Decodes request bodies, turning every syntax or decoding failure into a `400` sentence that names the field.
enum JSONBody {
    /// Decodes `bytes` after a strict syntax check (``JSONSyntax``).
    ///
    /// - Throws: ``SyncServerError/invalidRequest(_:)`` naming the field or the syntax error.
    static func decode<Value: Decodable>(_ type: Value.Type, from bytes: some Collection<UInt8>) throws -> Value {
        let data = Data(bytes)
        try data.withUnsafeBytes { try JSONSyntax.validate($0) }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let error as DecodingError {
            throw SyncServerError.invalidRequest(sentence(for: error))
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
