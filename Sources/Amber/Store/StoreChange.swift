/// One committed write or transaction of an ``IdentityStore``.
///
/// Every subscriber sees each change whole and in commit order:
///
/// ```swift
/// for await change in store.changes() {
///     for update in change.updated { print(update.old.salary, "->", update.new.salary) }
/// }
/// ```
public struct StoreChange<Value: Identifiable & Sendable>: Sendable {
    /// A value that replaced an earlier value of the same identity.
    public struct Update: Sendable {
        /// The value before the change.
        public let old: Value
        /// The value after the change.
        public let new: Value

        /// Creates an update from the value before and after.
        public init(old: Value, new: Value) {
            self.old = old
            self.new = new
        }
    }

    /// Where a change was made.
    public enum Origin: Sendable, Equatable {
        /// Through this store instance.
        case local
        /// Through another store on the same storage: another process, or another instance in this one.
        case otherProcess
        /// Applied by sync (`SyncClient` in the `AmberSync` module): what other devices wrote,
        /// or a merge of it with local edits.
        case sync
    }

    /// Identities that were not in the store before, in the order they were added.
    public let inserted: [Value]
    /// Identities whose value was replaced by an unequal one.
    public let updated: [Update]
    /// The last values of identities that were removed.
    public let removed: [Value]
    /// Where the change was made.
    public let origin: Origin
    /// How the change moved identities in the store's order, when it did more than drop the removed
    /// ones and place the inserted ones last; live queries keep ties in store order with it.
    @usableFromInline let reordering: Reordering?

    /// Creates a change.
    public init(inserted: [Value] = [], updated: [Update] = [], removed: [Value] = [], origin: Origin = .local) {
        self.init(inserted: inserted, updated: updated, removed: removed, origin: origin, reordering: nil)
    }

    /// Creates a change that also moved identities in the store's order.
    init(inserted: [Value], updated: [Update], removed: [Value], origin: Origin, reordering: Reordering?) {
        self.inserted = inserted
        self.updated = updated
        self.removed = removed
        self.origin = origin
        self.reordering = reordering
    }

    /// Whether the change inserts, updates and removes nothing.
    public var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && removed.isEmpty
    }
}

extension StoreChange {
    /// How a change moved identities in the store's order beyond appending ``StoreChange/inserted``
    /// and dropping ``StoreChange/removed``: only changes taken in from other writers do.
    @usableFromInline
    enum Reordering: Sendable {
        /// These values' identities are now last in the store, in this order: the inserted ones and
        /// those another writer removed and added again (listed here even when their value is equal).
        case placedLast([Value])
        /// The store's order was replaced as a whole, by a reload: every value, in the new order.
        case replaced([Value])
    }

    /// Whether main-actor observers that follow the store's order must be handed this change: it
    /// changes a value, or only the order.
    @inlinable var reachesOrderObservers: Bool {
        !isEmpty || reordering != nil
    }

    /// The part of this change that concerns one identity, or `nil` when it does not concern it.
    func restricted(to id: Value.ID) -> StoreChange? {
        let change = StoreChange(
            inserted: inserted.filter { $0.id == id },
            updated: updated.filter { $0.new.id == id },
            removed: removed.filter { $0.id == id },
            origin: origin
        )
        return change.isEmpty ? nil : change
    }

    /// The newest state of each identity the change touched: a value, or `nil` when removed.
    @usableFromInline
    var latestValues: [(id: Value.ID, value: Value?)] {
        inserted.map { ($0.id, $0) } + updated.map { ($0.new.id, $0.new) } + removed.map { ($0.id, nil) }
    }
}

extension StoreChange: Equatable where Value: Equatable {
    /// Whether two changes insert, update and remove equal values, and come from the same origin.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.inserted == rhs.inserted && lhs.updated == rhs.updated && lhs.removed == rhs.removed
            && lhs.origin == rhs.origin
    }
}
extension StoreChange.Update: Equatable where Value: Equatable {}
