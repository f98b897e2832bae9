import OrderedCollections

/// The writes of one ``IdentityStore/transaction(_:)`` in progress.
///
/// Reads see the transaction's own writes. Nothing reaches the store, its storage or its
/// subscribers until the transaction's body returns; if it throws, nothing does at all.
///
/// ```swift
/// try store.transaction { transaction in
///     guard let from = transaction[id: a], let to = transaction[id: b] else { return }
///     transaction.add(from.update(balance: from.balance - 10))
///     transaction.add(to.update(balance: to.balance + 10))
/// }
/// ```
public struct StoreTransaction<Value: Identifiable> {
    @usableFromInline let base: OrderedDictionary<Value.ID, Value>
    /// The newest write per identity, in the order identities were first written; `nil` removes.
    @usableFromInline private(set) var writes: OrderedDictionary<Value.ID, Value?> = [:]
    /// Record texts handed in with values by ``add(_:encodedAs:)``, by identity. An identity has
    /// one only while its newest write is the value handed in with it: ``add(_:)`` and
    /// ``remove(id:)`` drop it.
    @usableFromInline private(set) var encodings: [Value.ID: String] = [:]

    @inlinable
    init(base: OrderedDictionary<Value.ID, Value>) {
        self.base = base
    }

    /// Inserts `value`, or replaces the value of its identity.
    @inlinable
    public mutating func add(_ value: Value) {
        writes[value.id] = .some(value)
        if !encodings.isEmpty { encodings[value.id] = nil }
    }

    /// Inserts `value`, or replaces the value of its identity, with `text`: a JSON encoding of
    /// `value` that decodes back to it (the server's text sync decoded it from). The store writes
    /// `text` as the value's record instead of encoding it again, as long as the transaction
    /// writes nothing else to that identity afterwards.
    @inlinable
    package mutating func add(_ value: Value, encodedAs text: String) {
        writes[value.id] = .some(value)
        encodings[value.id] = text
    }

    /// Removes the value of an identity.
    ///
    /// - Returns: The value removed, or `nil` when the identity was absent.
    @discardableResult
    public mutating func remove(id: Value.ID) -> Value? {
        guard let old = self[id: id] else { return nil }
        writes[id] = .some(nil)
        if !encodings.isEmpty { encodings[id] = nil }
        return old
    }

    /// The value of an identity as this transaction sees it, its own writes included.
    public subscript(id id: Value.ID) -> Value? {
        if let written = writes[id] { return written }
        return base[id]
    }

}

extension StoreTransaction where Value: Sendable {
    /// The net effect of the writes on `base`: what a commit inserts, updates and removes.
    @inlinable
    func resolved(isEqual: ((Value, Value) -> Bool)?) -> ResolvedWrites<Value> {
        var resolved = ResolvedWrites<Value>()
        // Each text handed in is that of its identity's newest write: the value inserted or
        // updated, when the commit writes it at all.
        resolved.encodings = encodings
        for (id, write) in writes {
            switch (base[id], write) {
            case (nil, let new?):
                resolved.inserted.append(new)
            case (let old?, let new?):
                if isEqual?(old, new) != true { resolved.updated.append(.init(old: old, new: new)) }
            case (let old?, nil):
                resolved.removed.append(old)
            case (nil, nil):
                break
            }
        }
        return resolved
    }
}

/// What a transaction changes, relative to the state it started from.
@usableFromInline
struct ResolvedWrites<Value: Identifiable & Sendable> {
    @usableFromInline var inserted: [Value] = []
    @usableFromInline var updated: [StoreChange<Value>.Update] = []
    @usableFromInline var removed: [Value] = []
    /// Stored records to delete that hold no value of the store (recovered undecodable records).
    @usableFromInline var recordDeletions: [String] = []
    /// Texts to write as the records of inserted or updated values, in place of encoding them
    /// (see ``StoreTransaction/add(_:encodedAs:)``); one of an identity the commit does not write
    /// (an update to an equal value) goes unused.
    @usableFromInline var encodings: [Value.ID: String] = [:]

    @inlinable init() {}

    /// Whether the commit changes no value.
    @inlinable var changesNoValue: Bool { inserted.isEmpty && updated.isEmpty && removed.isEmpty }

    /// Whether the commit writes nothing at all.
    @inlinable var isEmpty: Bool { changesNoValue && recordDeletions.isEmpty }

    /// Applies the writes to a state, keeping the position of updated identities.
    @inlinable
    func apply(to values: inout OrderedDictionary<Value.ID, Value>) {
        for update in updated { values[update.new.id] = update.new }
        for value in inserted { values[value.id] = value }
        if removed.count > 16 {
            let ids = Set(removed.map(\.id))
            values.removeAll { ids.contains($0.key) }
        } else {
            for value in removed { values.removeValue(forKey: value.id) }
        }
    }
}
