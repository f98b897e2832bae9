import Amber
import AmberSQLite
import AmberTestSupport
import Foundation
import Testing

// The code samples of the DocC articles (Sources/Amber/Documentation.docc), kept compiling and true.
// Model names carry a `Doc` prefix so they do not clash with the other tests' fixtures.

@Immutable
fileprivate struct DocPerson: Identifiable, Hashable, Codable, Sendable {
    let id: String
    let name: String
    let salary: Int
    let job: String?
}

@Immutable
fileprivate struct DocNote: Identifiable, Hashable, Codable, Sendable {
    let id: UUID
    let text: String
    let tagIDs: [UUID]
    let pinned: Bool
    let archivedAt: Date?
    var isArchived: Bool { archivedAt != nil }
    static let maximumLength = 10_000
}

@Immutable
fileprivate struct DocPost: Identifiable, Hashable, Sendable {
    let id: UUID
    @Merge(.union) let tagIDs: [UUID]
    @Merge(.counter) let views: Int
    @Merge(.latest(by: "modifiedAt")) let title: String
    @Merge(.theirs) let serverScore: Double
    let modifiedAt: Date
}

@Immutable
fileprivate struct DocDocument: Equatable {
    let text: String
    @ImmutableIgnored let wordCount: Int

    init(text: String) {
        self.text = text
        self.wordCount = text.split(separator: " ").count
    }
}

fileprivate struct DocNoteV1: Identifiable, Codable, Sendable {
    let id: UUID
    let body: String
}

fileprivate enum DocSession: Equatable, Sendable {
    case loggedOut
    case loggedIn(name: String)
}

@MainActor
fileprivate final class DocRenderer {
    var rendered: [DocSession] = []
    func render(_ session: DocSession) { rendered.append(session) }
}

@Suite(.boundedConcurrency) struct DocumentationExampleTests {
    /// GettingStarted.md
    @Test func gettingStarted() throws {
        let jack = DocPerson(id: "123-45-6789", name: "Jack", salary: 50_000)
        let raised = jack.update(salary: jack.salary + 10_000)
        #expect(raised != jack)
        #expect(raised.hasSameIdentity(as: jack))
        #expect(isSameIdentity(raised, jack))

        let people = IdentityStore<DocPerson>()
        try people.add(jack)
        try people.add(raised)
        #expect(people.count == 1)
        #expect(people.latest(jack)?.salary == 60_000)
        #expect(people[id: "123-45-6789"]?.name == "Jack")

        let databasePath = temporaryDirectory().appendingPathComponent("people.sqlite").path
        let storage = try SQLiteStorage(path: databasePath)
        let stored = try IdentityStore<DocPerson>(key: "people", storage: storage)
        let alumni = try IdentityStore<DocPerson>(key: "alumni", storage: storage)
        try stored.add(raised)
        #expect(alumni.count == 0)
        let again = try IdentityStore<DocPerson>(key: "people", storage: try SQLiteStorage(path: databasePath))
        #expect(again.latest(jack)?.salary == 60_000)
    }

    /// ImmutableModels.md
    @Test func models() throws {
        let note = DocNote(id: UUID(), text: "ice cream is great", tagIDs: [], pinned: false)
        #expect(note.with(pinned: true).pinned)
        #expect(note.with(archivedAt: nil).archivedAt == nil)
        #expect(note.update(text: "sorbet", pinned: true).text == "sorbet")

        let archived = note.updating { draft in
            draft.archivedAt = .now
            draft.pinned = false
        }
        #expect(archived.isArchived)
        let dessert = UUID()
        var draft = note.draft
        draft.tagIDs.append(dessert)
        #expect(DocNote(draft).tagIDs == [dessert])

        var partial = DocNote.Partial()
        partial.id = UUID()
        partial.text = "groceries"
        #expect(throws: IncompleteValueError.self) { try partial.completed() }
        do {
            _ = try partial.completed()
        } catch {
            #expect("\(error)" == "DocNote is missing tagIDs, pinned")
        }
        #expect(try DocNote.Partial(note).completed() == note)

        let opened = note
        let mine = opened.with(text: "lemon sorbet")
        let theirs = opened.with(pinned: true)
        let result = DocNote.merge(base: opened, mine: mine, theirs: theirs)
        #expect(result.value.text == "lemon sorbet")
        #expect(result.value.pinned)
        #expect(result.conflicts.isEmpty)

        let post = DocPost(id: UUID(), tagIDs: [], views: 1, title: "a", serverScore: 0, modifiedAt: .distantPast)
        let merged = DocPost.merge(
            base: post,
            mine: post.update(views: 3),
            theirs: post.update(views: 2)
        )
        #expect(merged.value.views == 4)
        #expect(merged.conflicts.isEmpty)

        #expect(DocDocument(text: "a b").with(text: "a b c").wordCount == 3)
    }

    /// StoresAndStorages.md: recover
    @Test func recoverOldRecords() throws {
        let directory = temporaryDirectory()
        let storage = FileStorage(directory: directory)
        let old = try IdentityStore<DocNoteV1>(key: "notes", storage: storage)
        let id = UUID()
        try old.add(DocNoteV1(id: id, body: "from version 1"))

        let notes = try IdentityStore<DocNote>(key: "notes", storage: FileStorage(directory: directory))
        #expect(notes.undecodable.map(\.id) == [id.uuidString])
        try notes.recover { record in
            guard let old = try? JSONDecoder().decode(DocNoteV1.self, from: record.data) else {
                return nil
            }
            return DocNote(id: old.id, text: old.body, tagIDs: [], pinned: false)
        }
        #expect(notes.undecodable.isEmpty)
        #expect(notes[id: id]?.text == "from version 1")
    }

    /// EditingWithEditor.md
    @MainActor @Test func editor() throws {
        let notes = IdentityStore<DocNote>()
        let note = DocNote(id: UUID(), text: "Sundae", tagIDs: [], pinned: false)
        try notes.add(note)
        let iceCream = UUID()

        let editor = try notes.editor(id: note.id)
        editor.update { draft in
            draft.text = "Hot fudge sundae"
        }
        try notes.update(id: note.id) { $0.with(tagIDs: [iceCream]) }
        #expect(editor.value.tagIDs == [iceCream])
        #expect(editor.value.text == "Hot fudge sundae")
        #expect(editor.hasChanges)

        let followUp = DocNote(id: UUID(), text: "Buy fudge", tagIDs: [], pinned: false)
        try notes.transaction { transaction in
            try editor.save(in: &transaction)
            transaction.add(followUp)
        }
        #expect(notes[id: note.id]?.text == "Hot fudge sundae")
        #expect(notes.count == 2)
        #expect(!editor.hasChanges)
    }

    /// ObservingChanges.md
    @MainActor @Test func observing() throws {
        let notes = IdentityStore<DocNote>()
        let first = DocNote(id: UUID(), text: "one", tagIDs: [], pinned: false)
        try notes.add(first)
        var timeline = notes.all
        let old = timeline
        try notes.update(id: first.id) { $0.with(text: "uno") }
        timeline = notes.refreshed(timeline)
        let diff = IdentityDiff(from: old, to: timeline)
        let batch = diff.batchUpdates(inSection: 0)
        #expect(batch.reloads.count == 1)

        let renderer = DocRenderer()
        let session = ObservableValue(DocSession.loggedOut, historyLimit: 20)
        session.addObserver(renderer) { renderer, session in renderer.render(session) }
        session.update(with: .loggedIn(name: "Ann"))
        session.update { _ in .loggedOut }
        session.undo()
        #expect(session.value == .loggedIn(name: "Ann"))
        #expect(session.canRedo)
        #expect(renderer.rendered == [.loggedOut, .loggedIn(name: "Ann"), .loggedOut, .loggedIn(name: "Ann")])
    }
}
