import Amber
import AmberSQLite
import AmberSync
import AmberTestSupport
import Foundation
import Testing

/// Amber's attachment, not Swift Testing's `Attachment` (files a test attaches to its report).
typealias Attachment = Amber.Attachment

/// A note with attachments, as an app would declare it.
@Immutable
struct AttachedNote: Identifiable, Hashable, Codable, Sendable {
    let id: UUID
    let text: String
    let photo: Attachment?
    let files: [Attachment]
}

@Suite("Attachment store", .boundedConcurrency)
struct AttachmentStoreTests {
    /// The SHA-256 of "hello\n".
    static let helloHash = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"

    @Test func addingBytesStoresOneFileNamedByItsHash() throws {
        let store = AttachmentStore(folder: temporaryDirectory().appendingPathComponent("files"))
        let attachment = try store.add(Data("hello\n".utf8), mediaType: "text/plain", fileName: "hello.txt")
        #expect(
            attachment == Attachment(sha256: Self.helloHash, size: 6, mediaType: "text/plain", fileName: "hello.txt"))
        let url = try #require(store.fileURL(for: attachment))
        #expect(url.lastPathComponent == Self.helloHash)
        #expect(try Data(contentsOf: url) == Data("hello\n".utf8))
        // The same bytes again: one copy.
        let again = try store.add(Data("hello\n".utf8), mediaType: "text/plain")
        #expect(again.sha256 == attachment.sha256)
        #expect(store.storedHashes == [Self.helloHash])
        // Nothing left halfway in the incoming folder.
        let incoming = store.folder.appendingPathComponent("incoming").path
        #expect(try FileManager.default.contentsOfDirectory(atPath: incoming).isEmpty)
    }

    @Test func addingAFileCopiesAndHashesItInChunks() throws {
        let directory = temporaryDirectory()
        let source = directory.appendingPathComponent("big.bin")
        // Three and a half chunks, so the hash spans chunk boundaries.
        let bytes = Data((0..<(3 * (1 << 20) + 512_000)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try bytes.write(to: source)
        let store = AttachmentStore(folder: directory.appendingPathComponent("files"))
        let attachment = try store.add(contentsOf: source, mediaType: "application/octet-stream")
        #expect(attachment.size == Int64(bytes.count))
        #expect(attachment.fileName == "big.bin")
        let fromData = try AttachmentStore(folder: directory.appendingPathComponent("other"))
            .add(bytes, mediaType: "application/octet-stream")
        #expect(fromData.sha256 == attachment.sha256)
        #expect(bytesDiffer(try Data(contentsOf: #require(store.fileURL(for: attachment))), bytes) == nil)
    }

    @Test func aMissingSourceFileIsAStorageError() throws {
        let directory = temporaryDirectory()
        let store = AttachmentStore(folder: directory.appendingPathComponent("files"))
        #expect {
            _ = try store.add(contentsOf: directory.appendingPathComponent("absent"), mediaType: "text/plain")
        } throws: { ($0 as? SyncError)?.kind == .storage }
        #expect(store.storedHashes.isEmpty)
    }

    @Test func theStoreOfAStorageIsBesideItsFile() throws {
        let path = temporaryDirectory().appendingPathComponent("app.sqlite").path
        let storage = try SQLiteStorage(path: path)
        #expect(AttachmentStore(storage: storage).folder.path == path + ".attachments")
    }

    @Test func anAttachmentEncodesAsARecognizableObject() throws {
        let attachment = Attachment(sha256: Self.helloHash.uppercased(), size: 6, mediaType: "text/plain")
        #expect(attachment.sha256 == Self.helloHash)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(attachment), as: UTF8.self)
        #expect(text == #"{"mediaType":"text\/plain","sha256":"\#(Self.helloHash)","size":6}"#)
        #expect(try JSONDecoder().decode(Attachment.self, from: Data(text.utf8)) == attachment)
        // A malformed hash or a negative size does not decode.
        for bad in [
            #"{"mediaType":"a","sha256":"abc","size":6}"#,
            #"{"mediaType":"a","sha256":"\#(Self.helloHash)","size":-1}"#,
            #"{"mediaType":"a","sha256":"\#(String(repeating: "g", count: 64))","size":1}"#,
        ] {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(Attachment.self, from: Data(bad.utf8)) }
        }
    }

    @Test func attachmentsAreFieldsOfImmutableModelsAndMerge() throws {
        let one = Attachment(sha256: Self.helloHash, size: 6, mediaType: "text/plain")
        let two = Attachment(sha256: String(repeating: "a", count: 64), size: 1, mediaType: "image/png")
        let base = AttachedNote(id: UUID(), text: "hi", photo: nil, files: [])
        let mine = base.with(text: "hello")
        let theirs = base.with(photo: one).update(files: [two])
        let merged = AttachedNote.merge(base: base, mine: mine, theirs: theirs)
        #expect(merged.value == AttachedNote(id: base.id, text: "hello", photo: one, files: [two]))
        #expect(merged.conflicts.isEmpty)
    }
}
