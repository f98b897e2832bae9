import Amber
import Foundation
import Testing

// This target is built with `defaultIsolation(MainActor.self)`: every declaration without
// an isolation of its own is main-actor isolated, as in a new Xcode 26 app target.

/// Explicitly `nonisolated`, as app models that leave the main actor are written.
@Immutable
nonisolated struct Note: Identifiable, Hashable, Codable, Sendable {
    let id: UUID
    let text: String
    @Merge(.union) let tagIDs: [String]
}

/// Main-actor isolated by default: its generated members and conformances are still `nonisolated`.
/// (Its own `Identifiable` conformance is main-actor isolated, so it cannot go in an `IdentityStore`.)
@Immutable
struct Tag: Identifiable, Hashable, Codable, Sendable {
    let id: String
    let name: String
}

/// Merges and edits off the main actor: these compile only if the conformances are nonisolated.
nonisolated func mergeOffMainActor<Model: Mergeable & ImmutableModel & Sendable>(
    base: Model, mine: Model, theirs: Model
) async -> MergeResult<Model> {
    await Task.detached { Model.merge(base: base, mine: mine, theirs: theirs) }.value
}

@Suite struct DefaultIsolationTests {
    let note = Note(id: UUID(), text: "hello", tagIDs: ["a"])

    @Test func nonisolatedModelMergesOffTheMainActor() async {
        let result = await mergeOffMainActor(
            base: note, mine: note.with(text: "hello!"), theirs: note.update(tagIDs: ["a", "b"])
        )
        #expect(result.value == note.with(text: "hello!").with(tagIDs: ["a", "b"]))
        #expect(result.conflicts.isEmpty)
    }

    @Test func mainActorModelMergesOffTheMainActor() async throws {
        let tag = Tag(id: "t", name: "ice cream")
        let result = await mergeOffMainActor(base: tag, mine: tag, theirs: tag.with(name: "Ice Cream"))
        #expect(result.value.name == "Ice Cream")
        let partial = await Task.detached { Tag.Partial(tag).completed }.value
        #expect(try partial() == tag)
    }

    @Test func editorOpensOnANonisolatedModel() throws {
        let notes = IdentityStore<Note>()
        try notes.add(note)
        let editor = try notes.editor(id: note.id)
        editor.update { $0.text = "edited" }
        try notes.update(id: note.id) { $0.with(tagIDs: ["a", "c"]) }
        #expect(editor.value.text == "edited")
        #expect(editor.value.tagIDs == ["a", "c"])
        #expect(editor.conflicts.isEmpty)
        #expect(try editor.save() == note.with(text: "edited").with(tagIDs: ["a", "c"]))
    }

    @Test func generatedMembersRunOffTheMainActor() async throws {
        let json = try JSONEncoder().encode(note)
        let decoded = try await Task.detached { [note] in
            (try JSONDecoder().decode(Note.Draft.self, from: json), note.updating { $0.text = "x" }, Note.fieldNames)
        }.value
        #expect(Note(decoded.0) == note)
        #expect(decoded.1.text == "x")
        #expect(decoded.2 == ["id", "text", "tagIDs"])
    }
}
