import AmberTestSupport
import Foundation
import Testing

/// The README's "two phones" section, run as written: an `amber-sync` server on its embedded
/// SQLite file, and two `NOTES_HOME`s syncing through it.
@Suite(.boundedConcurrency) struct NotesSyncTests {
    let day = NotesRunner()
    let night = NotesRunner()
    let serverDirectory = temporaryDirectory()

    private func amberSync(_ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = builtExecutable(named: "amber-sync")
        process.arguments = arguments
        process.currentDirectoryURL = serverDirectory
        return process
    }

    /// Adds the user ann and starts `amber-sync serve` on a free port.
    private func startServer() async throws -> (serve: Process, server: String, token: String) {
        let added = try runToEnd(amberSync(["user", "add", "ann"]))
        #expect(added.status == 0, "\(added.error)")
        let token = try #require(added.output.split(separator: "\n").last.map(String.init))
        let serve = amberSync(["serve", "--port", "0"])
        let output = Pipe()
        serve.standardOutput = output
        try serve.run()
        let lines = LinesReader(output.fileHandleForReading)
        #expect(await lines.wait(within: 30) { $0.hasPrefix("listening on http://127.0.0.1:") })
        let address = try #require(lines.first { $0.hasPrefix("listening on ") }).dropFirst("listening on ".count)
        return (serve, String(address), token)
    }

    @Test func twoPhonesSyncARenameAndAnUnreachableServerKeepsTheChangePending() async throws {
        let (serve, server, token) = try await startServer()
        defer { if serve.isRunning { serve.terminate() } }

        try day.run("add", "ice cream is great", "--tag", "ice cream")
        let first = try day.run("sync", "--server", server, "--token", token)
        #expect(first.status == 0, "\(first.error)")
        #expect(first.output.contains("pushed 2"), "a note and its tag")
        #expect(try night.run("sync", "--server", server, "--token", token).status == 0)
        #expect(try night.run("list").output.contains("#ice cream"))

        #expect(try day.run("rename-tag", "ice cream", "Ice Cream").status == 0)
        #expect(try day.run("sync").status == 0, "the server and token are remembered")
        #expect(try night.run("sync").status == 0)
        #expect(try night.run("list").output.contains("ice cream is great  #Ice Cream"))
        let status = try night.run("status").output
        #expect(status.contains("server:   \(server)") && status.contains("pending:  0"))

        serve.terminate()
        serve.waitUntilExit()
        #expect(serve.terminationStatus == 0, "SIGTERM shuts the server down cleanly")
        try day.run("add", "written on the train")
        let offline = try day.run("sync")
        #expect(offline.status == 1)
        #expect(offline.error.split(separator: "\n").count == 1, "one line: \(offline.error)")
        #expect(offline.error.contains("unreachable") && offline.error.contains("1 local changes kept pending"))
        #expect(try day.run("status").output.contains("pending:  1"))
        #expect(try day.run("list").output.contains("written on the train"))
    }

    /// A long sync shows its progress on standard error: plain lines when it is not a terminal
    /// (here a pipe), the answer line on standard output as ever.
    @Test func aLongSyncPrintsItsProgressAsLines() async throws {
        let (serve, server, token) = try await startServer()
        defer { if serve.isRunning { serve.terminate() } }

        let tag = UUID().uuidString
        let notes = (0..<4_500).map { index in
            #"{"id": "\#(UUID().uuidString)", "text": "note \#(index)", "tagIDs": ["\#(tag)"], "created": \#(780_000_000 + index), "modified": \#(780_000_000 + index)}"#
        }
        let archive = serverDirectory.appendingPathComponent("notes.json")
        try Data(#"{"notes": [\#(notes.joined(separator: ","))], "tags": [{"id": "\#(tag)", "name": "bulk"}]}"#.utf8)
            .write(to: archive)
        #expect(try day.run("import", archive.path).status == 0)

        let push = try day.run("sync", "--server", server, "--token", token)
        #expect(push.status == 0, "\(push.error)")
        #expect(push.output.contains("synced: pushed 4501"))
        // Push batches of up to 4,000 records, the first and last of 500; pull pages of 1,000.
        #expect(push.error.contains("pushed 500 of 4501 records"), "\(push.error)")
        #expect(push.error.contains("pushed 4001 of 4501 records"), "\(push.error)")
        #expect(push.error.contains("pushed 4501 of 4501 records"))
        #expect(!push.error.contains("\r"), "no bar redrawn in place off a terminal")
        let pull = try night.run("sync", "--server", server, "--token", token)
        #expect(pull.status == 0, "\(pull.error)")
        #expect(pull.error.contains("pulled 1000 of 4501 records"), "\(pull.error)")
        #expect(pull.error.contains("pulled 4501 of 4501 records"))
        // A short sync prints nothing there.
        try day.run("add", "one more")
        let short = try day.run("sync")
        #expect(short.status == 0 && short.error.isEmpty, "\(short.error)")
    }

    @Test func syncWithoutAServerOrWithABadAddressIsAOneLineError() throws {
        for (arguments, message) in [
            (["sync"], "no sync server yet"),
            (["sync", "--server", "not a url", "--token", "t"], "is not a server address"),
            (["sync", "--server", "ftp://127.0.0.1:1", "--token", "t"], "is not a server address"),
            (["sync", "--server", "http://127.0.0.1:1"], "no token"),
        ] {
            let result = try day.runArguments(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.error.contains(message) && result.error.split(separator: "\n").count == 1, "\(result.error)")
        }
        #expect(try day.run("status").output.contains("not set up"))
    }
}
