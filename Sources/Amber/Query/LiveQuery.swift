import Foundation
import Observation

/// The values of a store that pass a filter, in sort order, kept current as the store changes.
///
/// Make one with ``IdentityStore/query(filter:sort:)-(_,[KeyPathComparator<Value>])``:
///
/// ```swift
/// let timeline = notes.query(
///     filter: { $0.tagIDs.contains(dessert.id) },
///     sort: [KeyPathComparator(\.created, order: .reverse)]
/// )
/// timeline.values       // the notes tagged dessert, newest first
/// try notes.add(note.with(text: "sorbet"))
/// timeline.values       // already shows the new text: updated before `add` returned
/// timeline.diff         // what that write changed in `values`: updated [offset]
/// ```
///
/// ``values`` are always the store's current values that pass the filter, in sort order; values
/// the sort order finds equal keep the store's order. The query is `@Observable`, so a SwiftUI view
/// that reads ``values`` is redrawn when they change, and ``diff`` tells a table or collection view
/// which rows to animate. Code off the main actor follows it through ``updates``.
///
/// Each store change updates the values in time proportional to the change, not to the store: only
/// the identities it touched are tested against the filter and placed by binary search, and a
/// value is reported moved only when its sort key changed. Re-running the filter and the sort on
/// every change, as `ValueObservation` or `@Query` do, costs the whole store each time.
///
/// Like ``IdentityStore/observable(id:)``, a query sees the changes committed after it was made; a
/// write made on the main actor has updated it before it returns, and other writes update it soon
/// after, in commit order. The store holds it weakly: when the query is released, it stops
/// following the store and its ``updates`` sequences end.
///
/// The filter and the sort order must be functions of the value alone: a value is tested again only
/// when its identity changes.
@MainActor @Observable
public final class LiveQuery<Value: Identifiable & Sendable> where Value.ID: Sendable {
    /// The store's values that pass the filter, in sort order; ties in the store's order.
    ///
    /// ```swift
    /// List(query.values) { note in Text(note.text) }
    /// ```
    ///
    /// - Complexity: O(1) to read; an update costs O(*k* log *m*) comparisons for *k* identities
    ///   touched among *m* values, plus moving the values between a moved value's two places.
    public private(set) var values: [Value]

    /// What the last update changed in ``values``: offsets removed from the values before it,
    /// offsets inserted, moved and updated in the values after it.
    ///
    /// Empty until the first update. Replaying it on the values before the update, as a table view's
    /// batch update does, gives ``values``:
    ///
    /// ```swift
    /// let updates = query.diff.batchUpdates(inSection: 0)
    /// ```
    ///
    /// A value is listed in ``IdentityDiff/moved`` only when its sort key (or its place in the
    /// store's order) changed and it left its place among the others.
    ///
    /// - Complexity: O(1) to read; built from the touched identities alone, in O(*k* log *k*).
    public private(set) var diff = IdentityDiff.insertingAll(0)

    /// Kept, so the store lives and keeps this query current for as long as the query does.
    @ObservationIgnored let store: IdentityStore<Value>
    @ObservationIgnored private var result: QueryResult<Value>
    /// The continuations of the ``updates`` sequences being iterated.
    @ObservationIgnored var subscribers: [Int: AsyncStream<Update>.Continuation] = [:]
    @ObservationIgnored var nextSubscriberKey = 0
    /// Ends the store observation and the ``updates`` sequences when the query goes away.
    @ObservationIgnored let lifetime = Lifetime()

    /// Starts following `store` from its current values.
    ///
    /// - Parameters:
    ///   - filter: Whether a value is shown; `nil` shows every value.
    ///   - compare: The sort order; `nil` keeps the store's order.
    init(store: IdentityStore<Value>, filter: ((Value) -> Bool)?, compare: QueryResult<Value>.Comparison?) {
        self.store = store
        let (stamp, all) = store.beginObservingAll()
        var result = QueryResult(filter: filter, compare: compare)
        values = result.start(with: all)
        self.result = result
        let token = store.insertObserver(self, id: nil, since: stamp, followsOrder: true) { query, change in
            query.storeChanged(change)
        }
        lifetime.onEnd { token.cancel() }
    }

    /// Brings the values up to date with a committed change, and tells the ``updates`` sequences.
    private func storeChanged(_ change: StoreChange<Value>) {
        guard let plan = result.plan(change, in: values) else { return }
        diff = result.perform(plan, on: &values)
        guard !subscribers.isEmpty else { return }
        let update = Update(values: values, diff: diff)
        for continuation in subscribers.values { continuation.yield(update) }
    }
}
