import Amber
import AmberSync
import ArgumentParser
import Foundation

struct Attach: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Attach a file to a note; `notes sync` uploads it before the note.")
    @OptionGroup var note: NoteID
    @Argument(help: "The file to attach.") var file: String
    @Option(help: "Its media type; guessed from the file's extension unless given.") var type: String?

    func run() throws {
        let library = try Library.open()
        let note = try library.note(self.note.id)
        let url = URL(fileURLWithPath: file)
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw NotesError("cannot read \(file)")
        }
        let attachment = try AttachmentStore(storage: library.storage)
            .add(contentsOf: url, mediaType: type ?? Self.mediaType(of: url))
        _ = try library.notes.update(id: note.id) { note in
            let current = note.attachments ?? []
            guard !current.contains(attachment) else { return note }
            return note.with(attachments: current + [attachment]).update(modified: Date())
        }
        print(
            "attached \(attachment.fileName ?? file) (\(attachment.size) bytes, \(attachment.mediaType)) to \(note.id.short)"
        )
    }

    /// A media type by file extension, for the common kinds; `application/octet-stream` otherwise.
    static func mediaType(of url: URL) -> String {
        let types = [
            "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "heic": "image/heic",
            "webp": "image/webp", "pdf": "application/pdf", "txt": "text/plain", "md": "text/markdown",
            "json": "application/json", "mp4": "video/mp4", "mov": "video/quicktime", "m4a": "audio/mp4",
            "mp3": "audio/mpeg", "zip": "application/zip",
        ]
        return types[url.pathExtension.lowercased()] ?? "application/octet-stream"
    }
}

struct Attachments: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List a note's attachments: file name, size, media type, and whether the bytes are here.")
    @OptionGroup var note: NoteID

    func run() throws {
        let library = try Library.open()
        let note = try library.note(self.note.id)
        let store = AttachmentStore(storage: library.storage)
        for attachment in note.attachments ?? [] {
            let here = store.contains(attachment) ? "here" : "not here"
            print(
                "\(attachment.fileName ?? attachment.sha256)\t\(attachment.size) bytes\t\(attachment.mediaType)\t\(here)"
            )
        }
    }
}

struct SaveAttachment: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Save a note's attachment to a file, fetching it from the server when it is not here.")
    @OptionGroup var note: NoteID
    @Argument(help: "The attachment's file name (or the start of its SHA-256).") var name: String
    @Option(help: "Where to write the file.") var to: String

    func run() async throws {
        let library = try Library.open()
        let note = try library.note(self.note.id)
        let matches = (note.attachments ?? []).filter { $0.fileName == name || $0.sha256.hasPrefix(name.lowercased()) }
        guard let attachment = matches.first, matches.count == 1 else {
            throw NotesError(
                matches.isEmpty
                    ? "note \(note.id.short) has no attachment named \(name)"
                    : "\(name) names \(matches.count) attachments of note \(note.id.short); give the start of a SHA-256"
            )
        }
        let store = AttachmentStore(storage: library.storage)
        var source = store.fileURL(for: attachment)
        if source == nil {
            guard let settings = try SyncSettings.load() else {
                throw NotesError("the bytes of \(name) are not here and no server is set up; run notes sync first")
            }
            source = try await library.syncClient(settings).fileURL(for: attachment)
        }
        guard let source else { return }
        let destination = URL(fileURLWithPath: to)
        try? FileManager.default.removeItem(at: destination)
        try FileManager.default.copyItem(at: source, to: destination)
        print("saved \(attachment.fileName ?? attachment.sha256) (\(attachment.size) bytes) to \(to)")
    }
}
