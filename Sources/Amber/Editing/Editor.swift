import Observation
import OrderedCollections

/// An edit in progress of one stored value: the one mutable thing among immutable models.
///
/// Open an editor with ``IdentityStore/editor(id:)``, change its ``value`` with ``update(_:)``,
/// then ``save()`` or ``discard()``:
///
/// ```swift
/// let editor = try notes.editor(id: note.id)
/// editor.update { $0.title = "Groceries" }
/// // Meanwhile sync renames a tag of this note in the store: the editor rebases,
/// // so `editor.value` has the user's title and the new tag.
/// try editor.save()
/// ```
///
/// While the edit is open, the editor follows its identity in the store. When the stored value
/// changes, the editor rebases onto it by three-way merge,
/// `Value.merge(base: base, mine: value, theirs: stored)`: a field changed only in the store
/// takes the stored value, a field changed only here keeps the edit, and a field changed on both
/// sides keeps the edit and is listed in ``conflicts``. A remote change is never lost and the
/// user's edit is never overwritten. A write made on the main actor has rebased every open
/// editor before it returns; other writes rebase it soon after.
///
/// It is `@Observable`, so SwiftUI views and `withObservationTracking` see its properties change.
/// The store holds the editor weakly: an editor that is no longer referenced stops observing.
@MainActor @Observable
public final class Editor<Value: Identifiable & Sendable & Mergeable & ImmutableModel> where Value.ID: Sendable {
    /// The stored value the edit started from, or was last rebased onto.
    public private(set) var base: Value

    /// The value being edited: ``base`` with the local edits applied.
    public private(set) var value: Value

    /// The fields edited here that also changed in the store, in declaration order.
    ///
    /// The local edit kept its value in each of them. ``save()`` and ``discard()`` clear the list.
    public private(set) var conflicts: [String] = []

    /// Whether the identity was removed from the store while it was being edited.
    ///
    /// ``value`` is kept, but ``save()`` throws. When the identity is added to the store again,
    /// this becomes `false` and the editor rebases onto the new value.
    public private(set) var isDeleted = false

    /// Whether ``update(_:)`` was called since the last save or discard; stands in for
    /// ``hasChanges`` when `Value` is not `Equatable`.
    private var hasEdits = false

    @ObservationIgnored let store: IdentityStore<Value>
    @ObservationIgnored let id: Value.ID
    @ObservationIgnored private let isEqual = Equality.function(for: Value.self)
    @ObservationIgnored private var observation: ObservationToken?

    /// A save staged in a transaction by ``save(in:)``, finished when its commit arrives.
    @ObservationIgnored private var stagedSave: (value: Value, conflicts: [String])?

    /// Opens an edit of `value`, which `store` held at commit `stamp`, and follows its identity
    /// from there: the observation was counted by `IdentityStore.beginObserving(_:)`.
    init(store: IdentityStore<Value>, value: Value, since stamp: UInt64) {
        self.store = store
        self.id = value.id
        self.base = value
        self.value = value
        observation = store.insertObserver(self, id: id, since: stamp) { editor, change in
            editor.storeChanged(change)
        }
    }

    deinit {
        observation?.cancel()
    }

    /// Whether ``value`` differs from ``base``: there is something to save.
    ///
    /// Values are compared with `==` when `Value` is `Equatable`, as models that ``Immutable()``
    /// makes ``Mergeable`` are. Otherwise this tells whether ``update(_:)`` was called since the
    /// last ``save()`` or ``discard()``.
    public var hasChanges: Bool {
        guard let isEqual else { return hasEdits }
        return !isEqual(base, value)
    }

    /// Edits several fields of ``value`` at once through its mutable `Draft`.
    ///
    /// ```swift
    /// editor.update { draft in
    ///     draft.title = "Groceries"
    ///     draft.tags.append("ice cream")
    /// }
    /// ```
    ///
    /// Nothing is written to the store until ``save()``. The edit must keep the identity (`id`).
    ///
    /// - Parameter edit: Changes the draft of the current value.
    public func update(_ edit: (inout Value.Draft) -> Void) {
        var draft = value.draft
        edit(&draft)
        let edited = Value(draft)
        precondition(edited.id == id, "Editor.update(_:) must keep the identity (id) of the value being edited")
        value = edited
        hasEdits = true
        stagedSave = nil
        dropSettledConflicts()
    }

    /// Writes ``value`` to the store; it becomes the new ``base``.
    ///
    /// ```swift
    /// editor.update { $0.title = "Groceries" }
    /// let saved = try editor.save()
    /// editor.hasChanges   // false
    /// ```
    ///
    /// After a rebase this writes the merged value. A stored change that the editor has not
    /// seen yet (one written off the main actor or by another process a moment ago) is merged in
    /// the same way rather than overwritten; fields where that change and the local edit differ
    /// are left in ``conflicts``, since the save kept the local edit there. Otherwise
    /// ``conflicts`` is cleared.
    ///
    /// To save as part of a larger write, use ``save(in:)`` inside `store.transaction`; calling
    /// this method there throws ``StoreError/writeInsideTransaction``.
    ///
    /// - Returns: The value written, which is now both ``base`` and ``value``.
    /// - Throws: ``StoreError/identityDeleted(id:)`` when the identity was removed from the store
    ///   (see ``isDeleted``), or ``StoreError`` when persisting fails; then nothing changed.
    @discardableResult
    public func save() throws -> Value {
        guard !isDeleted else { throw StoreError.identityDeleted(id: "\(id)") }
        let saved: MergeResult<Value>
        do {
            saved = try store.transaction { transaction in try staged(in: &transaction) }
        } catch StoreError.identityDeleted(let id) {
            // Removed by a write whose change has not reached the main actor yet.
            isDeleted = true
            throw StoreError.identityDeleted(id: id)
        }
        finishSave(saved.value, conflicts: saved.conflicts)
        return saved.value
    }

    /// Stages the save in a store transaction, so it commits with the transaction's other writes.
    ///
    /// ```swift
    /// try notes.transaction { transaction in
    ///     try editor.save(in: &transaction)
    ///     transaction.add(otherNote)
    /// }
    /// ```
    ///
    /// The value is merged onto the transaction's view of the stored value, as ``save()`` does.
    /// Once the transaction commits, ``base`` and ``value`` are the saved value (before
    /// `transaction` returns, on the main actor); if it throws, the editor keeps its edits.
    ///
    /// - Parameter transaction: A transaction of the store this editor edits.
    /// - Returns: The value staged.
    /// - Throws: ``StoreError/identityDeleted(id:)`` when the transaction does not hold the identity.
    @discardableResult
    public func save(in transaction: inout StoreTransaction<Value>) throws -> Value {
        guard !isDeleted else { throw StoreError.identityDeleted(id: "\(id)") }
        let result = try staged(in: &transaction)
        stagedSave = (result.value, result.conflicts)
        return result.value
    }

    /// Writes the merged value into a transaction.
    private func staged(in transaction: inout StoreTransaction<Value>) throws -> MergeResult<Value> {
        guard let stored = transaction[id: id] else { throw StoreError.identityDeleted(id: "\(id)") }
        let result = merge(onto: stored)
        transaction.add(result.value)
        // Only a stored change the editor has not shown yet can conflict here.
        return result
    }

    private func finishSave(_ saved: Value, conflicts: [String]) {
        base = saved
        value = saved
        self.conflicts = conflicts
        hasEdits = false
        stagedSave = nil
    }

    /// Drops the local edits: ``value`` goes back to ``base`` and ``conflicts`` is cleared.
    ///
    /// ```swift
    /// editor.update { $0.title = "Oops" }
    /// editor.discard()
    /// editor.value == editor.base   // true
    /// ```
    public func discard() {
        value = base
        conflicts = []
        hasEdits = false
        stagedSave = nil
    }

    /// Follows the store's change of this identity.
    private func storeChanged(_ change: StoreChange<Value>) {
        if let staged = stagedSave, let saved = change.updated.last?.new, isEqual?(saved, staged.value) ?? true {
            finishSave(saved, conflicts: staged.conflicts)
        } else if let inserted = change.inserted.last {
            isDeleted = false
            rebase(onto: inserted)
        } else if let update = change.updated.last {
            rebase(onto: update.new)
        } else if !change.removed.isEmpty {
            isDeleted = true
        }
    }

    /// Makes `stored` the new base, keeping the local edits on top of it.
    private func rebase(onto stored: Value) {
        guard isEqual?(base, stored) != true else { return }
        let result = merge(onto: stored)
        base = stored
        value = result.value
        if !result.conflicts.isEmpty { conflicts = Self.union(conflicts, result.conflicts) }
        dropSettledConflicts()
    }

    /// Drops the conflicts the user settled by giving the field the stored value.
    private func dropSettledConflicts() {
        guard !conflicts.isEmpty else { return }
        let settled = conflicts.filter { FieldValues.isEqual($0, in: value, and: base) == true }
        if !settled.isEmpty { conflicts.removeAll(where: settled.contains) }
    }

    /// The local edits applied on top of `stored`.
    private func merge(onto stored: Value) -> MergeResult<Value> {
        Value.merge(base: base, mine: value, theirs: stored)
    }

    /// Both lists of field names, each name once, in declaration order; names that are not
    /// fields of `Value` (a hand-written merge may report them) come last.
    private static func union(_ first: [String], _ second: [String]) -> [String] {
        let names = OrderedSet(first + second)
        let fields = Value.fieldNames
        return fields.filter(names.contains) + names.filter { !fields.contains($0) }
    }
}
