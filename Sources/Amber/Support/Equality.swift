/// Value equality for types that may or may not be `Equatable`, decided once per type.
enum Equality {
    /// `==` for `Value` when it is `Equatable`, otherwise `nil`.
    static func function<Value>(for type: Value.Type) -> (@Sendable (Value, Value) -> Bool)? {
        guard let equatable = type as? any Equatable.Type else { return nil }
        let checker = checker(equatable, as: type)
        return { checker.isEqual($0, $1) }
    }

    private static func checker<E: Equatable, Value>(_ equatable: E.Type, as type: Value.Type) -> some ValueEquality<
        Value
    > {
        EquatableEquality<Value, E>()
    }
}

protocol ValueEquality<Value>: Sendable {
    associatedtype Value
    func isEqual(_ lhs: Value, _ rhs: Value) -> Bool
}

/// `==` of `E`, for a `Value` that is `E` at run time.
private struct EquatableEquality<Value, E: Equatable>: ValueEquality {
    init() {
        precondition(Value.self == E.self, "EquatableEquality needs Value and E to be one type")
    }

    func isEqual(_ lhs: Value, _ rhs: Value) -> Bool {
        // `Value` is `E` (checked once, in `init`): reading the values as `E` in place avoids
        // two dynamic casts on every comparison, which cost more than most `==`.
        withUnsafePointer(to: lhs) { lhs in
            withUnsafePointer(to: rhs) { rhs in
                lhs.withMemoryRebound(to: E.self, capacity: 1) { lhs in
                    rhs.withMemoryRebound(to: E.self, capacity: 1) { rhs in lhs.pointee == rhs.pointee }
                }
            }
        }
    }
}
