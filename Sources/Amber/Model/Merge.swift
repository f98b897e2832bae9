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
public macro Merge(_ strategy: MergeStrategy) = #externalMacro(module: "AmberMacros", type: "MergeMacro")

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
