/// A value that can be merged field by field against a common base.
///
/// ``Immutable()`` generates the conformance for types that declare `Equatable`
/// or `Hashable`. ``Editor`` uses it to rebase an edit in progress onto a newer
/// stored value.
public protocol Mergeable {
    /// Three-way merge, field by field.
    ///
    /// A field changed on one side only takes that side's value. A field changed
    /// on both sides to different values takes `mine` and is listed in
    /// ``MergeResult/conflicts``. A field changed on both sides to the same value
    /// is not a conflict.
    ///
    /// ```swift
    /// let result = Note.merge(base: opened, mine: edited, theirs: stored)
    /// result.value       // edited title, stored tags
    /// result.conflicts   // [] unless both changed the same field
    /// ```
    ///
    /// - Parameters:
    ///   - base: The common ancestor both sides started from.
    ///   - mine: The local value; it wins conflicting fields.
    ///   - theirs: The other value, such as the newest stored one.
    /// - Returns: The merged value and the names of conflicting fields in declaration order.
    static func merge(base: Self, mine: Self, theirs: Self) -> MergeResult<Self>
}

/// The outcome of a three-way ``Mergeable/merge(base:mine:theirs:)``.
public struct MergeResult<Value> {
    /// The merged value.
    public let value: Value
    /// Fields changed on both sides to different values, in declaration order; `mine` won them.
    public let conflicts: [String]

    /// Creates a merge result.
    public init(value: Value, conflicts: [String]) {
        self.value = value
        self.conflicts = conflicts
    }
}

extension MergeResult: Sendable where Value: Sendable {}
extension MergeResult: Equatable where Value: Equatable {}

/// Merges one field three ways; used by code that ``Immutable()`` generates.
///
/// - Returns: `theirs` when only `theirs` changed, otherwise `mine`; appends
///   `name` to `conflicts` when both changed to different values.
@inlinable
public func _mergeField<T: Equatable>(
    _ name: String, base: T, mine: T, theirs: T, conflicts: inout [String]
) -> T {
    if mine == base { return theirs }
    if theirs != base && theirs != mine { conflicts.append(name) }
    return mine
}
