import AmberLock
import AmberTestSupport
import Testing

@testable import Amber

@MainActor
@Suite(.boundedConcurrency) struct EditorSaveTests {
    @Test func anEditorOpenedWhileChangesAreQueuedSeesNoConflicts() async throws {
        let store = IdentityStore<Person>()
        try store.add(jack)
        let screen = Screen()
        store.addObserver(screen) { screen, change in screen.changes.append(change) }
        try writeInTheBackground {
            try store.update(id: jack.id) { $0.update(name: "B", age: 31) }
            try store.update(id: jack.id) { $0.update(name: "C", age: 32) }
        }
        let editor = try store.editor(id: jack.id)
        editor.update { $0.name = "D" }
        #expect(await eventually { await screen.changes.count == 2 })
        #expect(editor.conflicts.isEmpty, "the queued changes are older than the editor")
        #expect(editor.value == jack.update(name: "D", age: 32))
    }

    @Test func saveReportsTheConflictsOfAChangeItHadNotHeardOf() throws {
        let store = IdentityStore<Person>()
        try store.add(jack)
        let editor = try store.editor(id: jack.id)
        editor.update { $0.name = "Mine" }
        try writeInTheBackground { try store.update(id: jack.id) { $0.update(name: "Theirs", age: 40) } }
        let saved = try editor.save()
        #expect(saved == jack.update(name: "Mine", age: 40), "their other field is merged in")
        #expect(editor.conflicts == ["name"], "the save kept the local name over a change never shown")
        #expect(!editor.hasChanges)
    }

    @Test func aConflictSettledByTakingTheStoredValueIsNoLongerListed() throws {
        let store = IdentityStore<Person>()
        try store.add(jack)
        let editor = try store.editor(id: jack.id)
        editor.update { $0.name = "Mine" }
        try store.update(id: jack.id) { $0.update(name: "Theirs") }
        #expect(editor.conflicts == ["name"])
        editor.update { $0.name = "Theirs" }
        #expect(editor.conflicts.isEmpty)
        editor.update { $0.name = "Mine again" }
        #expect(editor.conflicts.isEmpty, "a new edit after settling is not a conflict with the store")
    }

    @Test func saveInsideATransactionThrowsAndSaveInJoinsIt() throws {
        let store = IdentityStore<Person>()
        try store.add(contentsOf: [jack, jill])
        let editor = try store.editor(id: jack.id)
        editor.update { $0.job = "Manager" }
        #expect(throws: StoreError.writeInsideTransaction) {
            try store.transaction { _ in try editor.save() }
        }
        #expect(store[id: jack.id] == jack, "nothing was written")
        #expect(editor.hasChanges)
        let events = LockedValue<[StoreChange<Person>]>([])
        let screen = Screen()
        store.addObserver(screen) { _, change in events.withLock { $0.append(change) } }
        try store.transaction { transaction in
            try editor.save(in: &transaction)
            transaction.remove(id: jill.id)
        }
        #expect(store[id: jack.id]?.job == "Manager")
        #expect(store[id: jill.id] == nil)
        #expect(events.withLock { $0.count } == 1, "one change for the editor's save and the other write")
        #expect(!editor.hasChanges)
        #expect(editor.base == store[id: jack.id])
    }

    @Test func aTransactionThatThrowsLeavesTheEditorsEdits() throws {
        struct Abort: Error {}
        let store = IdentityStore<Person>()
        try store.add(jack)
        let editor = try store.editor(id: jack.id)
        editor.update { $0.job = "Manager" }
        #expect(throws: Abort.self) {
            try store.transaction { transaction in
                try editor.save(in: &transaction)
                throw Abort()
            }
        }
        #expect(store[id: jack.id] == jack)
        #expect(editor.hasChanges)
        #expect(editor.value.job == "Manager")
    }

    @Test func nestedStoreWritesThrowInsteadOfCrashing() throws {
        let store = IdentityStore<Person>()
        try store.add(jack)
        #expect(throws: StoreError.writeInsideTransaction) {
            try store.update(id: jack.id) { value in
                try store.add(jill)
                return value
            }
        }
        #expect(store.count == 1)
    }
}
