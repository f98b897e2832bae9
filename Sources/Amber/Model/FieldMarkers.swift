/// Declares how the `merge` that ``Immutable()`` generates settles a field changed on both sides.
///
/// ```swift
/// @Immutable
/// struct Note: Identifiable, Hashable, Sendable {
///     let id: UUID
///     let text: String
///     @Merge(.union) let tagIDs: [String]          // both phones' new tags are kept
///     @Merge(.counter) let views: Int               // both phones' views add up
///     @Merge(.latest(by: "modifiedAt")) let title: String
///     let modifiedAt: Date
/// }
/// ```
///
/// A field settled by its strategy is never listed in ``MergeResult/conflicts``. A field
/// changed on one side only takes that side, whatever the strategy.
///
/// - Parameter strategy: How to combine the two sides.
@attached(peer)
public macro Merge(_ strategy: MergeStrategy) = #externalMacro(module: "AmberMacros", type: "FieldMarkerMacro")

/// How a field changed on both sides of a three-way merge is settled; see ``Merge(_:)``.
public enum MergeStrategy: Sendable, Equatable {
    /// A three-way set merge for arrays and sets: the base's elements, plus those added on
    /// either side, minus those removed on either side. An array keeps `mine`'s order, then
    /// the elements only `theirs` added, in `theirs`' order.
    case union
    /// For numbers: the base plus both sides' changes, as a counter that both sides incremented.
    case counter
    /// The local value wins.
    case mine
    /// The other value wins.
    case theirs
    /// The side whose `field` (a `Comparable` field of the same model, named as a string) is
    /// greater wins; `mine` on a tie.
    case latest(by: String)
}

/// Leaves a stored property out of everything ``Immutable()`` generates: the memberwise `init`,
/// `with`, `update`, `Draft`, `Partial`, `fieldNames` and `merge`.
///
/// For a value derived from the fields, such as a cache: an initializer that you write with the
/// other fields' labels computes it, and every copy the macro makes goes through that initializer,
/// so it never goes stale.
///
/// ```swift
/// @Immutable
/// struct Document: Equatable {
///     let text: String
///     @ImmutableIgnored let wordCount: Int
///
///     init(text: String) {
///         self.text = text
///         self.wordCount = text.split(separator: " ").count
///     }
/// }
///
/// Document(text: "a b").with(text: "a b c").wordCount   // 3
/// ```
///
/// Without an initial value or such an initializer, the property could not be set: that is a
/// compile-time error naming the initializer to write. That initializer must take each field as
/// declared and neither fail nor throw.
@attached(peer)
public macro ImmutableIgnored() = #externalMacro(module: "AmberMacros", type: "FieldMarkerMacro")

/// The default of a field in the memberwise `init` that ``Immutable()`` generates.
///
/// A `let` with an initial value is a constant, not a field; this keeps the field settable and
/// lets callers leave it out:
///
/// ```swift
/// @Immutable
/// struct Counter: Equatable {
///     let name: String
///     @ImmutableDefault(0) let count: Int
/// }
///
/// Counter(name: "taps").count   // 0
/// ```
///
/// - Parameter value: The default, an expression of the field's type.
@attached(peer)
public macro ImmutableDefault<Value>(_ value: Value) =
    #externalMacro(module: "AmberMacros", type: "FieldMarkerMacro")
