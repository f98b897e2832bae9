/// Why JSON text could not be read as a protocol value.
package enum JSONWireError: Error, Equatable, Sendable {
    /// Not JSON: the text has `problem` (such as "has a malformed number") at byte `offset`.
    case syntax(String, offset: Int)
    /// Arrays and objects nested deeper than ``JSONSyntax/maximumDepth``.
    case tooDeep
    /// Valid JSON that breaks the protocol at `path` (empty for the whole text): it `problem`,
    /// such as "must be an integer".
    case field(path: [JSONPathComponent], problem: String)

    /// One sentence, with `subject` (such as "The request body") naming the whole text.
    package func sentence(subject: String) -> String {
        switch self {
        case .syntax(let problem, let offset):
            return "\(subject) is not valid JSON: it \(problem) at byte \(offset)."
        case .tooDeep:
            return "\(subject) nests arrays and objects deeper than \(JSONSyntax.maximumDepth) levels."
        case .field(let path, let problem):
            if path.isEmpty { return "\(subject) \(problem)." }
            return "The field `\(JSONPathComponent.text(path))` \(problem)."
        }
    }

    /// The same error, one level further in: `component` is prepended to a field's path.
    func inside(_ component: JSONPathComponent) -> JSONWireError {
        guard case .field(let path, let problem) = self else { return self }
        return .field(path: [component] + path, problem: problem)
    }
}

/// One step of the path to a field: an object key or an array index.
package enum JSONPathComponent: Equatable, Sendable {
    /// A member of an object.
    case key(String)
    /// An element of an array.
    case index(Int)

    /// `mutations[2].value`.
    package static func text(_ path: [JSONPathComponent]) -> String {
        var text = ""
        for component in path {
            switch component {
            case .index(let index): text += "[\(index)]"
            case .key(let key): text += text.isEmpty ? key : ".\(key)"
            }
        }
        return text
    }
}
