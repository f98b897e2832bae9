/// Reads one stored property of a value by name, through reflection.
enum FieldValues {
    /// Whether the field `name` holds equal values in `first` and `second`; `nil` when that cannot
    /// be told (no such stored property, or a type that is not `Equatable`).
    static func isEqual<Value>(_ name: String, in first: Value, and second: Value) -> Bool? {
        guard let lhs = field(name, of: first), let rhs = field(name, of: second),
            let equatable = lhs as? any Equatable
        else { return nil }
        return equatable.isEqual(toAny: rhs)
    }

    private static func field(_ name: String, of value: Any) -> Any? {
        Mirror(reflecting: value).children.first { $0.label == name }?.value
    }
}

extension Equatable {
    /// `==` against a value of unknown type: `false` when it is not of this type.
    fileprivate func isEqual(toAny other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
