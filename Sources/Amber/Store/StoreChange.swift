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

    /// Creates a change.
    public init(inserted: [Value] = [], updated: [Update] = [], removed: [Value] = [], origin: Origin = .local) {
        self.inserted = inserted
        self.updated = updated
        self.removed = removed
        self.origin = origin
    }

    /// Whether the change inserts, updates and removes nothing.
    public var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && removed.isEmpty
    }
}

extension StoreChange {
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

extension StoreChange: Equatable where Value: Equatable {}
extension StoreChange.Update: Equatable where Value: Equatable {}
