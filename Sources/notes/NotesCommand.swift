import Amber
import ArgumentParser
import Foundation

/// `notes`: the Vesper notes app on the command line, on an SQLite store in `$NOTES_HOME`.
@main
struct NotesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notes",
        abstract: "A notes timeline with tags, kept in $NOTES_HOME/notes.sqlite (default ~/.amber-notes).",
        subcommands: [
            Add.self, List.self, Show.self, Edit.self, TagNote.self, Untag.self, Tags.self,
            RenameTag.self, Delete.self, Watch.self, Export.self, Import.self, Sync.self, Status.self,
            Attach.self, Attachments.self, SaveAttachment.self,
        ]
    )
}

struct NoteID: ParsableArguments {
    @Argument(help: "The note's id, or a unique prefix of it.")
    var id: String
}

struct Add: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Add a note.")
    @Argument(help: "The text of the note.") var text: String
    @Option(name: .customLong("tag"), help: "A tag for the note; created when new. Repeatable.") var tags: [String] = []

    func run() throws {
        let text = try Library.validText(text)
        let names = try tags.map(Library.validTagName)
        let library = try Library.open()
        let tagIDs = try names.map { try library.tagCreatingIfNeeded($0).id }
        let now = Date()
        var uniqueTagIDs: [UUID] = []
        for id in tagIDs where !uniqueTagIDs.contains(id) { uniqueTagIDs.append(id) }
        let note = Note(id: UUID(), text: text, tagIDs: uniqueTagIDs, created: now, modified: now)
        try library.notes.add(note)
        print(library.line(for: note))
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the timeline, newest first.")
    @Option(help: "Only notes with this tag.") var tag: String?
    @Flag(help: "Keep the timeline open and print how other processes change it, until interrupted.")
    var follow = false

    func run() async throws {
        try await Self.show(tagged: tag, follow: follow)
    }

    /// Prints the timeline a live query holds and, when following, each update it reports.
    @MainActor
    private static func show(tagged tag: String?, follow: Bool) async throws {
        let library = try Library.open()
        let timeline = try library.timeline(tagged: tag)
        let tags = library.tags.identified
        // Written at once rather than printed: `print` is buffered when standard output is a pipe,
        // and a follower's reader must see the timeline before its updates.
        let lines = timeline.values.map { library.line(for: $0, in: tags) }
        if !lines.isEmpty { emit(lines.joined(separator: "\n")) }
        guard follow else { return }
        emit("following \(Library.home.path) (Ctrl-C to stop)")
        var shown = timeline.values
        // The first update is the timeline just printed.
        for await update in timeline.updates.dropFirst() {
            let tags = library.tags.identified
            let diff = update.diff
            for offset in diff.removed { emit("removed  \(shown[offset].id.short)") }
            for offset in diff.inserted {
                emit("added    #\(offset + 1)  \(library.line(for: update.values[offset], in: tags))")
            }
            for move in diff.moved {
                emit(
                    "moved    #\(move.from + 1) -> #\(move.to + 1)  \(library.line(for: update.values[move.to], in: tags))"
                )
            }
            for offset in diff.updated {
                emit("changed  #\(offset + 1)  \(library.line(for: update.values[offset], in: tags))")
            }
            shown = update.values
        }
        // The updates end when the query is released: it must outlive the loop.
        withExtendedLifetime(timeline) {}
    }
}

struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show one note in full.")
    @OptionGroup var note: NoteID

    func run() throws {
        let library = try Library.open()
        let note = try library.note(self.note.id)
        print("id:       \(note.id.uuidString.lowercased())")
        print("created:  \(Library.dateFormatter.string(from: note.created))")
        print("modified: \(Library.dateFormatter.string(from: note.modified))")
        print("tags:     \(library.tagNames(of: note).map { "#\($0)" }.joined(separator: " "))")
        print("")
        print(note.text)
    }
}

struct Edit: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Replace a note's text.")
    @OptionGroup var note: NoteID
    @Option(help: "The new text.") var text: String

    func run() throws {
        let text = try Library.validText(text)
        let library = try Library.open()
        let note = try library.note(self.note.id)
        let edited = try library.notes.update(id: note.id) { $0.update(text: text, modified: Date()) }
        print(library.line(for: edited ?? note))
    }
}

struct TagNote: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tag", abstract: "Tag a note; the tag is created when new.")
    @OptionGroup var note: NoteID
    @Argument(help: "The tag's name.") var name: String

    func run() throws {
        let name = try Library.validTagName(name)
        let library = try Library.open()
        let note = try library.note(self.note.id)
        let tag = try library.tagCreatingIfNeeded(name)
        let tagged = try library.notes.update(id: note.id) { note in
            note.tagIDs.contains(tag.id) ? note : note.update(tagIDs: note.tagIDs + [tag.id], modified: Date())
        }
        print(library.line(for: tagged ?? note))
    }
}

struct Untag: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove a tag from a note.")
    @OptionGroup var note: NoteID
    @Argument(help: "The tag's name.") var name: String

    func run() throws {
        let library = try Library.open()
        let note = try library.note(self.note.id)
        guard let tag = library.tag(named: name) else { throw NotesError("no tag named \(name)") }
        guard note.tagIDs.contains(tag.id) else { throw NotesError("note \(note.id.short) is not tagged \(name)") }
        let untagged = try library.notes.update(id: note.id) {
            $0.update(tagIDs: $0.tagIDs.filter { $0 != tag.id }, modified: Date())
        }
        print(library.line(for: untagged ?? note))
    }
}

struct Tags: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the tags and how many notes carry each.")

    func run() throws {
        let library = try Library.open()
        var counts: [UUID: Int] = [:]
        for note in library.notes.all { for id in note.tagIDs { counts[id, default: 0] += 1 } }
        for tag in library.tags.all.sorted(by: { $0.name < $1.name }) {
            print("#\(tag.name)  \(counts[tag.id] ?? 0)")
        }
    }
}

struct RenameTag: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename-tag", abstract: "Rename a tag; every note carrying it shows the new name.")
    @Argument(help: "The current name.") var old: String
    @Argument(help: "The new name.") var new: String

    func run() throws {
        let new = try Library.validTagName(new)
        let library = try Library.open()
        guard let tag = library.tag(named: old) else { throw NotesError("no tag named \(old)") }
        if let existing = library.tag(named: new), existing.id != tag.id {
            throw NotesError("a tag named \(new) already exists")
        }
        try library.tags.add(tag.with(name: new))
        print("#\(old) -> #\(new)")
    }
}

struct Delete: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete a note.")
    @OptionGroup var note: NoteID

    func run() throws {
        let library = try Library.open()
        let note = try library.note(self.note.id)
        try library.notes.remove(note)
        print("deleted \(note.id.short)")
    }
}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write every note and tag as JSON to standard output.")

    func run() throws {
        let library = try Library.open()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(NotesArchive(notes: library.notes.all, tags: library.tags.all))
        FileHandle.standardOutput.write(data)
        FileHandle.standardOutput.write(Data("\n".utf8))
    }
}

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add the notes and tags of a JSON file written by export; same ids are replaced.")
    @Argument(help: "The JSON file.") var file: String

    func run() throws {
        let archive: NotesArchive
        do {
            archive = try JSONDecoder().decode(NotesArchive.self, from: Data(contentsOf: URL(fileURLWithPath: file)))
        } catch {
            throw NotesError("cannot import \(file): not a notes export (\(Self.reason(error)))")
        }
        let known = Set(archive.tags.map(\.id))
        if let orphan = archive.notes.first(where: { !$0.tagIDs.allSatisfy(known.contains) }) {
            throw NotesError("cannot import \(file): note \(orphan.id.short) refers to a tag the file lacks")
        }
        let library = try Library.open()
        try library.tags.add(contentsOf: archive.tags)
        try library.notes.add(contentsOf: archive.notes)
        print("imported \(archive.notes.count) notes and \(archive.tags.count) tags")
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context), DecodingError.keyNotFound(_, let context),
            DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            context.debugDescription
        default:
            (error as NSError).localizedDescription
        }
    }
}

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the changes other processes make, as they happen, until interrupted.")

    func run() async throws {
        let library = try Library.open()
        emit("watching \(Library.home.path) (Ctrl-C to stop)")
        await library.printChanges(bySync: false, added: "added   ")
    }
}

extension Library {
    /// Prints the changes other processes make, or sync applies, as they happen, until the task
    /// is cancelled.
    ///
    /// - Parameter added: How a note new to the timeline is introduced ("added", "arrived").
    func printChanges(bySync: Bool, added: String) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await change in notes.changes() where change.origin == (bySync ? .sync : .otherProcess) {
                    for note in change.inserted { emit("\(added) \(line(for: note))") }
                    for update in change.updated { emit("changed  \(line(for: update.new))") }
                    for note in change.removed { emit("deleted  \(note.id.short)") }
                }
            }
            group.addTask {
                for await change in tags.changes() where change.origin == (bySync ? .sync : .otherProcess) {
                    for tag in change.inserted { emit("new tag  #\(tag.name)") }
                    for update in change.updated where update.old.name != update.new.name {
                        emit("renamed  #\(update.old.name) -> #\(update.new.name)")
                    }
                }
            }
        }
    }
}

/// Writes a line straight to standard output, so a pipe reader sees it as it happens.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
