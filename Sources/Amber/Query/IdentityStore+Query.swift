import AmberLock
import Foundation

extension IdentityStore {
    /// A ``LiveQuery`` of the values that pass `filter`, sorted by `sort`: kept current as the store
    /// changes, in time proportional to each change.
    ///
    /// ```swift
    /// let timeline = notes.query(sort: [KeyPathComparator(\.created, order: .reverse)])
    /// let dessert = notes.query(
    ///     filter: { $0.tagIDs.contains(dessertTag.id) },
    ///     sort: [KeyPathComparator(\.created, order: .reverse), KeyPathComparator(\.text)]
    /// )
    /// ```
    ///
    /// As with Foundation's `sorted(using:)`, the comparators are applied in turn: the second breaks
    /// the ties of the first, and so on. Values that all of them find equal keep the store's order.
    /// The filter and the comparators must depend on the value alone: a value is tested and placed
    /// again only when its identity changes.
    ///
    /// - Parameters:
    ///   - filter: Whether a value is shown; `nil` (the default) shows every value.
    ///   - sort: The sort order; empty (the default) keeps the store's order.
    /// - Returns: A live query holding the current values; the store follows it until it is released.
    /// - Complexity: O(*n* + *m* log *m*) to start, for *n* values in the store and *m* that pass the
    ///   filter; then, for a change touching *k* identities, O(*k* log *m*) comparisons plus moving the
    ///   values between the old and new places of those that moved.
    @MainActor
    public func query(filter: ((Value) -> Bool)? = nil, sort: [KeyPathComparator<Value>] = []) -> LiveQuery<Value> {
        guard !sort.isEmpty else { return LiveQuery(store: self, filter: filter, compare: nil) }
        if sort.count == 1, let comparator = sort.first {
            return LiveQuery(store: self, filter: filter, compare: comparator.compare)
        }
        return LiveQuery(store: self, filter: filter) { a, b in
            for comparator in sort {
                let order = comparator.compare(a, b)
                if order != .orderedSame { return order }
            }
            return .orderedSame
        }
    }

    /// A ``LiveQuery`` of the values that pass `filter`, in the order of any sort comparator, such as
    /// a `SortDescriptor` or a comparator of your own.
    ///
    /// ```swift
    /// let byTitle = notes.query(sort: SortDescriptor(\.title, comparator: .localizedStandard))
    /// ```
    ///
    /// Values the comparator finds equal keep the store's order.
    ///
    /// - Parameters:
    ///   - filter: Whether a value is shown; `nil` (the default) shows every value.
    ///   - comparator: The sort order.
    /// - Returns: A live query holding the current values; the store follows it until it is released.
    /// - Complexity: As ``query(filter:sort:)-(_,[KeyPathComparator<Value>])``.
    @MainActor
    public func query<Comparator: SortComparator>(
        filter: ((Value) -> Bool)? = nil, sort comparator: Comparator
    ) -> LiveQuery<Value> where Comparator.Compared == Value {
        LiveQuery(store: self, filter: filter, compare: comparator.compare)
    }

    /// A ``LiveQuery`` of the values that pass `filter`, sorted by one property, as SwiftData's
    /// `@Query(sort:order:)` is.
    ///
    /// ```swift
    /// let timeline = notes.query(sort: \.created, order: .reverse)
    /// ```
    ///
    /// Values with equal properties keep the store's order.
    ///
    /// - Parameters:
    ///   - filter: Whether a value is shown; `nil` (the default) shows every value.
    ///   - keyPath: The property to sort by.
    ///   - order: `.forward` (the default) for ascending values, `.reverse` for descending ones.
    /// - Returns: A live query holding the current values; the store follows it until it is released.
    /// - Complexity: As ``query(filter:sort:)-(_,[KeyPathComparator<Value>])``.
    @MainActor
    public func query<Property: Comparable>(
        filter: ((Value) -> Bool)? = nil, sort keyPath: KeyPath<Value, Property> & Sendable, order: SortOrder = .forward
    ) -> LiveQuery<Value> {
        query(filter: filter, sort: [KeyPathComparator(keyPath, order: order)])
    }

    /// Starts a main-actor observation of every identity, and reads the commit stamp and every
    /// value at that same moment: a query starts from these values and is handed the changes
    /// committed after the stamp.
    ///
    /// - Complexity: O(*n*): the values are copied under the store's lock, so that no write has to
    ///   copy the store because a query still shares its storage.
    @MainActor
    func beginObservingAll() -> (stamp: UInt64, values: [Value]) {
        state.withLock { state in
            state.mainActorObserverCount += 1
            return (state.commitStamp, state.values.values.withUnsafeBufferPointer { Array($0) })
        }
    }
}
