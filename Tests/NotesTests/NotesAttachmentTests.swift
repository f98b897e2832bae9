import AmberTestSupport
import Foundation
import Testing

/// The README's two phones sending a photo: `notes attach`, `notes sync`, `notes attachments`,
/// `notes save-attachment`, through an `amber-sync` server.
@Suite(.boundedConcurrency) struct NotesAttachmentTests {
    let day = NotesRunner()
    let night = NotesRunner()
    let directory = temporaryDirectory()

    private func amberSync(_ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = builtExecutable(named: "amber-sync")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        return process
    }

    @Test func aPhotoTravelsWithItsNote() async throws {
        let added = try await runToEndOnItsOwnThread(amberSync(["user", "add", "ann"]))
        let token = try #require(added.output.split(separator: "\n").last.map(String.init))
        let serve = amberSync(["serve", "--port", "0"])
        let output = Pipe()
        serve.standardOutput = output
        try serve.run()
        defer { if serve.isRunning { serve.terminate() } }
        let lines = LinesReader(output.fileHandleForReading)
        #expect(await lines.wait(within: 30) { $0.hasPrefix("listening on http://127.0.0.1:") })
        let server = String(
            try #require(lines.first { $0.hasPrefix("listening on ") }).dropFirst("listening on ".count))

        let photo = directory.appendingPathComponent("cone.jpg")
        let bytes = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 17) })
        try bytes.write(to: photo)
        let note = try await runToEndOnItsOwnThread(day.process(["add", "ice cream is great"]))
        let id = String(note.output.prefix(8))
        let attached = try await runToEndOnItsOwnThread(day.process(["attach", id, photo.path]))
        #expect(attached.status == 0, "\(attached.error)")
        #expect(attached.output.contains("attached cone.jpg (200000 bytes, image/jpeg)"))
        let list = try await runToEndOnItsOwnThread(day.process(["attachments", id]))
        #expect(list.output == "cone.jpg\t200000 bytes\timage/jpeg\there\n")
        #expect(
            try await runToEndOnItsOwnThread(day.process(["sync", "--server", server, "--token=\(token)"])).status == 0)

        let synced = try await runToEndOnItsOwnThread(night.process(["sync", "--server", server, "--token=\(token)"]))
        #expect(synced.status == 0, "\(synced.error)")
        #expect(try await runToEndOnItsOwnThread(night.process(["attachments", id])).output.hasSuffix("\there\n"))
        let saved = directory.appendingPathComponent("saved.jpg")
        let save = try await runToEndOnItsOwnThread(
            night.process(["save-attachment", id, "cone.jpg", "--to", saved.path]))
        #expect(save.status == 0, "\(save.error)")
        #expect(bytesDiffer(try Data(contentsOf: saved), bytes) == nil)

        // Bad input: one line, status 1.
        let unknown = try await runToEndOnItsOwnThread(
            night.process(["save-attachment", id, "nope.jpg", "--to", saved.path]))
        #expect(unknown.status == 1 && unknown.error.contains("no attachment named nope.jpg"))
        let missing = try await runToEndOnItsOwnThread(
            day.process(["attach", id, directory.appendingPathComponent("absent").path]))
        #expect(missing.status == 1 && missing.error.contains("cannot read"))
    }
}
