/// A value that can be merged field by field against a common base.
///
/// ``Immutable()`` generates the conformance for types that declare `Equatable`,
/// `Hashable` or `Comparable`, and ``Immutable(mergeable:)`` on request; ``Merge(_:)``
/// chooses how a field is settled. ``Editor`` uses it to rebase an edit in progress onto a
/// newer stored value.
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

/// Merges a field that is not `Equatable` as far as the generated code can tell; used by code
/// that ``Immutable(mergeable:)`` generates.
///
/// Values that are `Equatable` at run time merge as in the `Equatable` overload (values of
/// different types are different); any other value (a closure) cannot be compared, so it
/// keeps `mine`, without a conflict.
@inlinable
public func _mergeField<T>(
    _ name: String, base: T, mine: T, theirs: T, conflicts: inout [String]
) -> T {
    guard let mineChanged = _differ(mine, base), let theirsChanged = _differ(theirs, base) else { return mine }
    if !mineChanged { return theirs }
    if theirsChanged && _differ(theirs, mine) != false { conflicts.append(name) }
    return mine
}

/// Whether two values differ: `nil` when `first` is not `Equatable`, `true` when `second` is of another type.
@usableFromInline
func _differ(_ first: Any, _ second: Any) -> Bool? {
    guard let first = first as? any Equatable else { return nil }
    return !_isEqual(first, second)
}

@usableFromInline
func _isEqual<E: Equatable>(_ first: E, _ second: Any) -> Bool {
    (second as? E) == first
}

/// Merges a field whose conflicts have a known winner; used by `@Merge(.mine)`, `.theirs` and `.latest(by:)`.
///
/// - Returns: The side that changed; when both changed, `mine` if `mineWins`, otherwise `theirs`.
@inlinable
public func _mergePreferring<T: Equatable>(base: T, mine: T, theirs: T, mineWins: @autoclosure () -> Bool) -> T {
    if mine == base { return theirs }
    if theirs == base { return mine }
    return mineWins() ? mine : theirs
}

/// Merges a counter: the base plus both sides' changes; used by `@Merge(.counter)`.
@inlinable
public func _mergeCounter<T: AdditiveArithmetic>(base: T, mine: T, theirs: T) -> T {
    base + (mine - base) + (theirs - base)
}

/// A three-way set merge of an array; used by `@Merge(.union)`.
///
/// - Returns: The side that changed, when only one did; otherwise `mine`'s elements that
///   `theirs` did not remove, in `mine`'s order, then the elements `theirs` added that `mine`
///   does not hold, in `theirs`' order.
/// - Complexity: O(*n*) in the total number of elements.
@inlinable
public func _mergeUnion<C: RangeReplaceableCollection>(base: C, mine: C, theirs: C) -> C where C.Element: Hashable {
    // A side that did not change keeps the other side's order and duplicates exactly.
    if mine.elementsEqual(base) { return theirs }
    if theirs.elementsEqual(base) { return mine }
    let baseElements = Set(base)
    let theirElements = Set(theirs)
    let mineElements = Set(mine)
    var merged = C()
    for element in mine where !baseElements.contains(element) || theirElements.contains(element) {
        merged.append(element)
    }
    for element in theirs where !baseElements.contains(element) && !mineElements.contains(element) {
        merged.append(element)
    }
    return merged
}

/// A three-way set merge of a set; used by `@Merge(.union)`.
///
/// - Returns: `base`, plus what either side added, minus what either side removed.
@inlinable
public func _mergeUnion<T: Hashable>(base: Set<T>, mine: Set<T>, theirs: Set<T>) -> Set<T> {
    base.intersection(mine).intersection(theirs)
        .union(mine.subtracting(base))
        .union(theirs.subtracting(base))
}
