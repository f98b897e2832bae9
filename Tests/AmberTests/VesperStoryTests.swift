import Amber
import AmberSQLite
import AmberTestSupport
import Testing

/// Seed 002's story end to end: a tag renamed elsewhere reaches the note being edited and the timeline.
@Immutable
fileprivate struct TimelineNote: Identifiable, Hashable, Codable, Sendable {
    let id: String
    let title: String
    let tags: [String]
}

@MainActor
@Test(.boundedConcurrency, arguments: StoreFixture.all)
func vesperTagRename(_ fixture: StoreFixture) throws {
    let notes = try fixture.make(TimelineNote.self, key: "notes").store
    let dessert = TimelineNote(id: "1", title: "Sundae", tags: ["ice cream"])
    let errands = TimelineNote(id: "2", title: "Errands", tags: ["shopping"])
    let walk = TimelineNote(id: "3", title: "Walk", tags: [])
    try notes.add(contentsOf: [dessert, errands, walk])
    let timeline = notes.all

    let editor = try notes.editor(id: dessert.id)
    editor.update { $0.title = "Hot fudge sundae" }

    // The rename arrives: every note with the tag gets a new value.
    try notes.transaction { transaction in
        for note in notes.all where note.tags.contains("ice cream") {
            transaction.add(note.with(tags: note.tags.map { $0 == "ice cream" ? "Ice Cream" : $0 }))
        }
    }

    #expect(editor.value == TimelineNote(id: "1", title: "Hot fudge sundae", tags: ["Ice Cream"]))
    #expect(editor.conflicts.isEmpty)

    let refreshed = notes.refreshed(timeline)
    #expect(refreshed.map(\.tags) == [["Ice Cream"], ["shopping"], []])
    let diff = IdentityDiff(from: timeline, to: refreshed)
    #expect(diff.updated == [0], "exactly the renamed note is updated")
    #expect(diff.inserted.isEmpty && diff.removed.isEmpty && diff.moved.isEmpty)

    try editor.save()
    #expect(notes[id: dessert.id] == editor.value)
}
