import Amber
import AmberSQLite
import Foundation
import IdentifiedCollections

/// A mistake in what the user typed, told in one line.
struct NotesError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The notes and tags stores of one `$NOTES_HOME`, and the look-ups the commands share.
struct Library {
    let storage: SQLiteStorage
    let notes: IdentityStore<Note>
    let tags: IdentityStore<Tag>

    /// `$NOTES_HOME`, or `~/.amber-notes`.
    static var home: URL {
        if let home = ProcessInfo.processInfo.environment["NOTES_HOME"], !home.isEmpty {
            return URL(fileURLWithPath: home)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".amber-notes")
    }

    static func open() throws -> Library {
        let storage = try SQLiteStorage(path: home.appendingPathComponent("notes.sqlite").path)
        return Library(
            storage: storage,
            notes: try IdentityStore(key: "notes", storage: storage),
            tags: try IdentityStore(key: "tags", storage: storage)
        )
    }

    /// The note whose id starts with `prefix` (case-insensitive), when exactly one does.
    func note(_ prefix: String) throws -> Note {
        let wanted = prefix.uppercased()
        guard !wanted.isEmpty else { throw NotesError("a note id is needed") }
        let matches = notes.all.filter { $0.id.uuidString.hasPrefix(wanted) }
        switch matches.count {
        case 1: return matches[0]
        case 0: throw NotesError("no note with id \(prefix)")
        default: throw NotesError("id \(prefix) is ambiguous: \(matches.count) notes start with it; type more of it")
        }
    }

    /// The timeline, newest first, or only the notes carrying the tag named `name`: a live query that
    /// keeps itself current as this process and others change the notes.
    ///
    /// - Throws: ``NotesError`` when there is no tag named `name`.
    @MainActor
    func timeline(tagged name: String? = nil) throws -> LiveQuery<Note> {
        var filter: ((Note) -> Bool)?
        if let name {
            guard let tag = tag(named: name) else { throw NotesError("no tag named \(name)") }
            filter = { $0.tagIDs.contains(tag.id) }
        }
        return notes.query(filter: filter, sort: [KeyPathComparator(\.created, order: .reverse)])
    }

    /// The tag named `name` (case-sensitive), if any.
    func tag(named name: String) -> Tag? {
        tags.all.first { $0.name == name }
    }

    /// The tag named `name`, created when absent.
    func tagCreatingIfNeeded(_ name: String) throws -> Tag {
        let name = try Self.validTagName(name)
        if let tag = tag(named: name) { return tag }
        let tag = Tag(id: UUID(), name: name)
        try tags.add(tag)
        return tag
    }

    static func validText(_ text: String) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw NotesError("the note text is empty") }
        return trimmed
    }

    static func validTagName(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw NotesError("the tag name is empty") }
        return trimmed
    }

    /// The name of each of the note's tags, in the note's order.
    func tagNames(of note: Note, in tags: IdentifiedArrayOf<Tag>? = nil) -> [String] {
        let tags = tags ?? self.tags.identified
        return note.tagIDs.compactMap { tags[id: $0]?.name }
    }

    /// One line of the timeline: short id, date, first line of text, tags.
    func line(for note: Note, in tags: IdentifiedArrayOf<Tag>? = nil) -> String {
        let firstLine = note.text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let tags = tagNames(of: note, in: tags).map { "#\($0)" }.joined(separator: " ")
        return [note.id.short, Self.dateFormatter.string(from: note.created), firstLine, tags]
            .filter { !$0.isEmpty }.joined(separator: "  ")
    }

    static let dateFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        formatter.locale = Locale(identifier: "en_US_POSIX")
        return formatter
    }()
}
