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

    /// Opens an edit of `value`, which `store` holds, and starts following its identity.
    init(store: IdentityStore<Value>, value: Value) {
        self.store = store
        self.id = value.id
        self.base = value
        self.value = value
        observation = store.addObserver(self, id: id) { editor, change in
            editor.storeChanged(change)
        }
        // A write committed between reading `value` and registering the observer is not delivered.
        if let stored = store[id: id] {
            rebase(onto: stored)
        } else {
            isDeleted = true
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
    /// seen yet (one written off the main actor a moment ago) is merged in the same way rather
    /// than overwritten. ``conflicts`` is cleared.
    ///
    /// - Returns: The value written, which is now both ``base`` and ``value``.
    /// - Throws: ``StoreError/identityDeleted(id:)`` when the identity was removed from the store
    ///   (see ``isDeleted``), or ``StoreError`` when persisting fails; then nothing changed.
    @discardableResult
    public func save() throws -> Value {
        guard !isDeleted else { throw StoreError.identityDeleted(id: "\(id)") }
        let saved: Value
        do {
            saved = try store.transaction { transaction in
                guard let stored = transaction[id: id] else { throw StoreError.identityDeleted(id: "\(id)") }
                let merged = merge(onto: stored).value
                transaction.add(merged)
                return merged
            }
        } catch StoreError.identityDeleted(let id) {
            // Removed by a write whose change has not reached the main actor yet.
            isDeleted = true
            throw StoreError.identityDeleted(id: id)
        }
        base = saved
        value = saved
        conflicts = []
        hasEdits = false
        return saved
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
    }

    /// Follows the store's change of this identity.
    private func storeChanged(_ change: StoreChange<Value>) {
        if let inserted = change.inserted.last {
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
