import AmberLock
import AmberTestSupport
import Foundation
import Observation
import Testing

@testable import Amber

/// The seed's note: the one model that is edited in place in Vesper's detail view.
@Immutable
fileprivate struct VesperNote: Identifiable, Hashable, Codable, Sendable {
    let id: String
    let title: String
    let text: String
    let tags: [String]
}

/// A hand-written model that is `Mergeable` but not `Equatable`.
fileprivate struct Counter: Identifiable, Sendable, Mergeable, ImmutableModel {
    struct Draft { var id: String; var count: Int }
    typealias Partial = Draft

    let id: String
    let count: Int

    init(id: String, count: Int) {
        self.id = id
        self.count = count
    }

    init(_ draft: Draft) {
        self.init(id: draft.id, count: draft.count)
    }

    func makeDraft() -> Draft { Draft(id: id, count: count) }

    static var fieldNames: [String] { ["id", "count"] }

    /// Adds both sides' increments.
    static func merge(base: Counter, mine: Counter, theirs: Counter) -> MergeResult<Counter> {
        MergeResult(value: Counter(id: base.id, count: mine.count + theirs.count - base.count), conflicts: [])
    }
}

@MainActor
@Suite(.boundedConcurrency) struct EditorTests {
    @Test(arguments: StoreFixture.all)
    func opensOnTheStoredValue(_ fixture: StoreFixture) throws {
        let store = try fixture.make().store
        try store.add(jack)
        let editor = try store.editor(id: jack.id)
        #expect(editor.base == jack)
        #expect(editor.value == jack)
        #expect(!editor.hasChanges)
        #expect(editor.conflicts.isEmpty)
        #expect(!editor.isDeleted)
        editor.update { $0.name = "Jack Jr." }
        #expect(editor.value == jack.update(name: "Jack Jr."))
        #expect(editor.base == jack)
        #expect(editor.hasChanges)
        #expect(store[id: jack.id] == jack, "nothing is written before save")
    }

    @Test(arguments: StoreFixture.all)
    func rebasesOntoAStoredChangeOfAnotherField(_ fixture: StoreFixture) throws {
        let store = try fixture.make().store
        try store.add(jack)
        let editor = try store.editor(id: jack.id)
        editor.update { $0.name = "Jack Jr." }
        try store.update(id: jack.id) { $0.update(age: 31) }
        // The main-actor write rebased the editor before it returned.
        #expect(editor.base == jack.update(age: 31))
        #expect(editor.value == jack.update(name: "Jack Jr.", age: 31))
        #expect(editor.conflicts.isEmpty)
        #expect(editor.hasChanges)
    }

    @Test(arguments: StoreFixture.all)
    func listsFieldsChangedOnBothSides(_ fixture: StoreFixture) throws {
        let store = try fixture.make().store
        try store.add(jack)
        let editor = try store.editor(id: jack.id)
        editor.update {
            $0.job = "Pilot"; $0.name = "Jack Jr."
        }
        try store.add(jack.with(job: "Manager"))
        #expect(editor.value == jack.update(name: "Jack Jr.").with(job: "Pilot"), "the local edit wins")
        #expect(editor.base == jack.with(job: "Manager"))
        #expect(editor.conflicts == ["job"])
        try store.add(jack.update(name: "John", age: 40).with(job: "Manager"))
        #expect(editor.value == Person(id: jack.id, name: "Jack Jr.", age: 40, job: "Pilot"))
        #expect(editor.conflicts == ["name", "job"], "accumulated, in declaration order")
    }

    @Test func storedChangeToTheSameValueIsNoConflict() throws {
        let store = IdentityStore<Person>()
        try store.add(jack)
        let editor = try store.editor(id: jack.id)
        editor.update { $0.age = 31 }
        try store.add(jack.update(age: 31))
        #expect(editor.conflicts.isEmpty)
        #expect(editor.value == jack.update(age: 31))
        #expect(!editor.hasChanges, "the store already holds the edit")
    }

    @Test func storedValueEqualToBaseChangesNothing() throws {
        let store = IdentityStore<Person>()
        try store.add(jack)
        let editor = try store.editor(id: jack.id)
        editor.update { $0.name = "Jack Jr." }
        try store.add(jack.update(age: 99))
        try store.add(jack)
        #expect(editor.base == jack)
        #expect(editor.value == jack.update(name: "Jack Jr."))
        #expect(editor.conflicts.isEmpty)
    }

    @Test(arguments: StoreFixture.all)
    func saveAfterARebaseWritesTheMergedValue(_ fixture: StoreFixture) throws {
        let (store, reopen) = try fixture.make()
        try store.add(jack)
        let editor = try store.editor(id: jack.id)
        editor.update {
            $0.name = "Jack Jr."; $0.job = "Pilot"
        }
        try store.add(jack.update(age: 31).with(job: "Manager"))
        #expect(editor.conflicts == ["job"])
        let merged = Person(id: jack.id, name: "Jack Jr.", age: 31, job: "Pilot")
        let saved = try editor.save()
        #expect(saved == merged)
        #expect(store[id: jack.id] == merged)
        #expect(editor.base == merged)
        #expect(editor.value == merged)
        #expect(editor.conflicts.isEmpty)
        #expect(!editor.hasChanges)
        if let reopen { #expect(try reopen()[id: jack.id] == merged, "the save went through to the storage") }
    }

    @Test func saveMergesAStoredChangeNotYetDelivered() async throws {
        let store = IdentityStore<Person>()
        try store.add(jack)
        let editor = try store.editor(id: jack.id)
        editor.update { $0.name = "Jack Jr." }
        // Its change reaches the main actor later, possibly after the save below.
        _ = try await Task.detached { try store.update(id: jack.id) { $0.update(age: 31) } }.value
        try editor.save()
        #expect(store[id: jack.id] == jack.update(name: "Jack Jr.", age: 31), "the stored change is not overwritten")
        #expect(editor.value == jack.update(name: "Jack Jr.", age: 31))
        #expect(!editor.hasChanges)
    }

    @Test func backgroundWritesRebaseSoonAfter() async throws {
        let store = IdentityStore<Person>()
        try store.add(jack)
        let editor = try store.editor(id: jack.id)
        editor.update { $0.name = "Jack Jr." }
        _ = try await Task.detached { try store.update(id: jack.id) { $0.update(age: 31) } }.value
        #expect(await eventually { await editor.base.age == 31 })
        #expect(editor.value == jack.update(name: "Jack Jr.", age: 31))
    }

    /// `UserDefaultsStorage` reports no changes made by other processes.
    @Test(arguments: StoreFixture.persistent.filter { $0.name != "userDefaults" })
    func otherProcessWritesRebase(_ fixture: StoreFixture) async throws {
        let (store, reopen) = try fixture.make()
        try store.add(jack)
        let reopenStore = try #require(reopen)
        let other = try reopenStore()
        let editor = try store.editor(id: jack.id)
        editor.update { $0.name = "Jack Jr." }
        try other.update(id: jack.id) { $0.update(age: 31) }
        #expect(await eventually { await editor.base.age == 31 })
        #expect(editor.value == jack.update(name: "Jack Jr.", age: 31))
        #expect(editor.conflicts.isEmpty)
    }

    @Test(arguments: StoreFixture.all)
    func discardGoesBackToTheBase(_ fixture: StoreFixture) throws {
        let store = try fixture.make().store
        try store.add(jack)
        let editor = try store.editor(id: jack.id)
        editor.update { $0.name = "Jack Jr." }
        try store.add(jack.update(name: "John", age: 31))
        #expect(editor.conflicts == ["name"])
        editor.discard()
        #expect(editor.value == jack.update(name: "John", age: 31))
        #expect(editor.value == editor.base)
        #expect(editor.conflicts.isEmpty)
        #expect(!editor.hasChanges)
        #expect(store[id: jack.id] == jack.update(name: "John", age: 31), "discard writes nothing")
    }

    @Test(arguments: StoreFixture.all)
    func deletionWhileEditing(_ fixture: StoreFixture) throws {
        let store = try fixture.make().store
        try store.add(jack)
        let editor = try store.editor(id: jack.id)
        editor.update { $0.name = "Jack Jr." }
        try store.remove(jack)
        #expect(editor.isDeleted)
        #expect(editor.value == jack.update(name: "Jack Jr."), "the edit is kept")
        #expect(throws: StoreError.identityDeleted(id: jack.id)) { try editor.save() }
        #expect(store[id: jack.id] == nil, "a failed save writes nothing")

        try store.add(jack.update(age: 31))
        #expect(!editor.isDeleted, "added again")
        #expect(editor.base == jack.update(age: 31))
        #expect(editor.value == jack.update(name: "Jack Jr.", age: 31), "rebased onto the new value")
        try editor.save()
        #expect(store[id: jack.id] == jack.update(name: "Jack Jr.", age: 31))
    }

    @Test func identityDeletedErrorNamesTheIdentity() {
        #expect(
            StoreError.identityDeleted(id: jack.id).description
                == "the value with id 123-45-6789 was removed from the store while it was being edited"
        )
    }

    @Test(arguments: StoreFixture.all)
    func editorOfAnAbsentIdentityThrows(_ fixture: StoreFixture) throws {
        let store = try fixture.make().store
        try store.add(jill)
        #expect(throws: StoreError.identityNotFound(id: jack.id)) { try store.editor(id: jack.id) }
    }

    @Test func releasedEditorStopsObserving() throws {
        let store = IdentityStore<Person>()
        try store.add(jack)
        var editor: Editor<Person>? = try store.editor(id: jack.id)
        weak let released = editor
        editor?.update { $0.name = "Jack Jr." }
        #expect(store.mainActorObserverCount == 1)
        editor = nil
        #expect(released == nil, "the store does not keep the editor alive")
        #expect(store.mainActorObserverCount == 0)
        try store.add(jack.update(age: 31))
        #expect(store[id: jack.id] == jack.update(age: 31))
        #expect(store.mainActorObserverCount == 0)
    }

    @Test func everyOpenEditorIsRebased() throws {
        let store = IdentityStore<Person>()
        try store.add(contentsOf: [jack, jill])
        let first = try store.editor(id: jack.id)
        let second = try store.editor(id: jack.id)
        let other = try store.editor(id: jill.id)
        first.update { $0.name = "Jack Jr." }
        second.update { $0.job = nil }
        try store.update(id: jack.id) { $0.update(age: 31) }
        #expect(first.value == jack.update(name: "Jack Jr.", age: 31))
        #expect(second.value == jack.update(age: 31).with(job: nil))
        #expect(other.base == jill, "other identities are not touched")
        try first.save()
        #expect(second.value == jack.update(name: "Jack Jr.", age: 31).with(job: nil), "a save is a stored change too")
        #expect(second.conflicts.isEmpty)
    }

    @Test func observationTrackingSeesARebase() throws {
        let store = IdentityStore<Person>()
        try store.add(jack)
        let editor = try store.editor(id: jack.id)
        let changed = LockedValue(false)
        withObservationTracking {
            _ = editor.value
            _ = editor.hasChanges
        } onChange: {
            changed.withLock { $0 = true }
        }
        try store.add(jack.update(age: 31))
        #expect(changed.withLock { $0 })
    }

    @Test func worksWithAMergeableModelThatIsNotEquatable() throws {
        let store = IdentityStore<Counter>()
        try store.add(Counter(id: "c", count: 1))
        let editor = try store.editor(id: "c")
        #expect(!editor.hasChanges)
        editor.update { $0.count += 10 }
        #expect(editor.hasChanges, "an edit was made since opening")
        try store.update(id: "c") { Counter(id: "c", count: $0.count + 100) }
        #expect(editor.base.count == 101)
        #expect(editor.value.count == 111)
        #expect(try editor.save().count == 111)
        #expect(store[id: "c"]?.count == 111)
        #expect(!editor.hasChanges)
    }

    @Test(arguments: StoreFixture.all)
    func vesperTagRenameReachesTheNoteBeingEdited(_ fixture: StoreFixture) throws {
        let notes = try fixture.make(VesperNote.self, key: "notes").store
        let groceries = VesperNote(id: "1", title: "Shopping", text: "Milk, eggs", tags: ["errands", "ice cream"])
        let recipe = VesperNote(id: "2", title: "Sundae", text: "Two scoops", tags: ["ice cream"])
        try notes.add(contentsOf: [groceries, recipe])

        // The detail view edits the note's title.
        let editor = try notes.editor(id: groceries.id)
        editor.update { $0.title = "Groceries" }

        // Sync reports the tag rename: every note carrying the tag gets a new value, in one transaction.
        try notes.transaction { transaction in
            for note in notes.all where note.tags.contains("ice cream") {
                transaction.add(note.with(tags: note.tags.map { $0 == "ice cream" ? "Ice Cream" : $0 }))
            }
        }

        #expect(editor.value.tags == ["errands", "Ice Cream"], "the new tag reached the open note")
        #expect(editor.value.title == "Groceries", "the user's title is kept")
        #expect(editor.value.text == "Milk, eggs")
        #expect(editor.conflicts.isEmpty)
        #expect(editor.hasChanges)

        try editor.save()
        #expect(
            notes[id: groceries.id]
                == VesperNote(id: "1", title: "Groceries", text: "Milk, eggs", tags: ["errands", "Ice Cream"]))
        #expect(notes[id: recipe.id]?.tags == ["Ice Cream"])
    }
}
