/// The error thrown by a generated `Partial.completed()` when required fields are missing.
///
/// ```swift
/// var partial = Person.Partial()
/// partial.id = "1"
/// try partial.completed()   // throws "Person is missing name, age"
/// ```
public struct IncompleteValueError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The name of the model type that could not be completed.
    public let typeName: String
    /// The non-optional fields still unset, in declaration order. Optional fields are never missing.
    public let missingFields: [String]

    /// Creates the error for a type and the fields it is missing.
    public init(typeName: String, missingFields: [String]) {
        self.typeName = typeName
        self.missingFields = missingFields
    }

    /// A sentence naming the type and its missing fields, such as `Person is missing name, age`.
    public var description: String {
        "\(typeName) is missing \(missingFields.joined(separator: ", "))"
    }
}
