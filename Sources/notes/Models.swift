import Amber
import Foundation

/// A note of the timeline. It refers to its tags by identity, so renaming a tag shows everywhere.
@Immutable
struct Note: Identifiable, Hashable, Codable, Sendable {
    let id: UUID
    let text: String
    let tagIDs: [UUID]
    let created: Date
    let modified: Date
    /// Files attached with `notes attach`; `nil` in notes written before attachments existed.
    let attachments: [Attachment]?
}

/// A tag, shared by the notes that carry it.
@Immutable
struct Tag: Identifiable, Hashable, Codable, Sendable {
    let id: UUID
    let name: String
}

/// What `export` writes and `import` reads.
struct NotesArchive: Codable {
    let notes: [Note]
    let tags: [Tag]
}

extension UUID {
    /// The short form users type: the first eight hex digits.
    var short: String { String(uuidString.prefix(8)).lowercased() }
}
