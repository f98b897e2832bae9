import AmberLock
import AmberTestSupport
import Foundation
import Testing

/// Runs the `notes` executable built beside the tests, in a temporary `$NOTES_HOME`.
struct NotesRunner {
    let home = temporaryDirectory().appendingPathComponent("notes")

    typealias Result = ProcessResult

    static let executable = builtExecutable(named: "notes")

    func process(_ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["NOTES_HOME"] = home.path
        process.environment = environment
        return process
    }

    @discardableResult
    func run(_ arguments: String...) throws -> Result {
        try runToEnd(process(arguments))
    }

    func runArguments(_ arguments: [String]) throws -> Result {
        try runToEnd(process(arguments))
    }

    var database: URL { home.appendingPathComponent("notes.sqlite") }

    /// The database's bytes, with its write-ahead log folded in by reading through `export`.
    func snapshot() throws -> String {
        try run("export").output
    }
}

@Suite(.boundedConcurrency) struct NotesCommandTests {
    let notes = NotesRunner()

    private func id(in line: String) -> String {
        String(line.prefix(8))
    }

    @Test func addTagRenameEditDelete() throws {
        let added = try notes.run("add", "ice cream is great", "--tag", "ice cream", "--tag", "food")
        #expect(added.status == 0, "\(added.error)")
        let note = id(in: added.output)
        try notes.run("add", "hello", "--tag", "demo")

        var list = try notes.run("list").output.split(separator: "\n")
        #expect(list.count == 2)
        #expect(list[0].contains("hello") && list[0].contains("#demo"), "newest first")
        #expect(list[1].contains("#ice cream #food"))

        #expect(try notes.run("rename-tag", "ice cream", "Ice Cream").status == 0)
        list = try notes.run("list").output.split(separator: "\n")
        #expect(list[1].contains("#Ice Cream #food"), "the rename shows on every note")

        #expect(try notes.run("edit", note, "--text", "sorbet is great").status == 0)
        #expect(try notes.run("show", note).output.contains("sorbet is great"))

        #expect(try notes.run("tag", note, "dessert").output.contains("#dessert"))
        #expect(try notes.run("untag", note, "food").output.contains("#Ice Cream #dessert"))
        #expect(try notes.run("tags").output.contains("#dessert  1"))

        #expect(try notes.run("delete", note).status == 0)
        list = try notes.run("list").output.split(separator: "\n")
        #expect(list.count == 1)
    }

    @Test func exportImportRoundTrip() throws {
        try notes.run("add", "one", "--tag", "a")
        try notes.run("add", "two", "--tag", "b")
        let exported = try notes.run("export")
        let file = notes.home.appendingPathComponent("export.json")
        try Data(exported.output.utf8).write(to: file)

        let other = NotesRunner()
        let imported = try other.run("import", file.path)
        #expect(imported.status == 0, "\(imported.error)")
        #expect(try other.run("export").output == exported.output)
        #expect(try other.run("list").output == notes.run("list").output)
    }

    @Test func badInputFailsWithOneLineAndChangesNothing() throws {
        let first = id(in: try notes.run("add", "first", "--tag", "t").output)
        try notes.run("add", "second")
        let before = try notes.snapshot()
        let file = notes.home.appendingPathComponent("garbage.json")
        try Data("{ not json".utf8).write(to: file)

        var ambiguous = ""
        // Two UUIDs share at least an empty prefix; find the longest shared one, if any.
        let ids = try notes.run("list").output.split(separator: "\n").map { id(in: String($0)) }
        if let shared = ids.dropFirst().first.map({ String(zip(ids[0], $0).prefix { $0 == $1 }.map(\.0)) }),
            !shared.isEmpty
        {
            ambiguous = shared
        }
        var cases: [([String], String)] = [
            (["show", "ffffffff0"], "no note with id"),
            (["edit", first, "--text", "   "], "empty"),
            (["add", ""], "empty"),
            (["untag", first, "nope"], "no tag named nope"),
            (["rename-tag", "nope", "x"], "no tag named nope"),
            (["list", "--tag", "nope"], "no tag named nope"),
            (["delete", "zzzz"], "no note with id"),
            (["import", file.path], "not a notes export"),
            (["import", "/nonexistent/file.json"], "cannot import"),
        ]
        if !ambiguous.isEmpty { cases.append((["delete", ambiguous], "ambiguous")) }
        for (arguments, message) in cases {
            let process = notes.process(arguments)
            let error = Pipe()
            process.standardError = error
            process.standardOutput = Pipe()
            try process.run()
            let text = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 1, "\(arguments)")
            #expect(text.contains(message), "\(arguments): \(text)")
            #expect(text.split(separator: "\n").count == 1, "one line: \(text)")
        }
        #expect(try notes.snapshot() == before, "nothing changed on disk")
    }

    @Test func ambiguousPrefixIsRefused() throws {
        // Adding notes until two share a first hex digit is quick: 17 notes guarantee it.
        var ids: [String] = []
        for index in 0..<17 { ids.append(id(in: try notes.run("add", "note \(index)").output)) }
        let byFirst = Dictionary(grouping: ids, by: { $0.prefix(1) })
        let shared = try #require(byFirst.first { $0.value.count > 1 }?.key)
        let result = try notes.run("delete", String(shared))
        #expect(result.status == 1)
        #expect(result.error.contains("ambiguous"))
        #expect(try notes.run("list").output.split(separator: "\n").count == 17)
    }

    @Test func unreadableDatabaseIsAOneLineError() throws {
        try FileManager.default.createDirectory(at: notes.home, withIntermediateDirectories: true)
        let garbage = Data(repeating: 0x42, count: 4_096)
        try garbage.write(to: notes.database)
        let result = try notes.run("list")
        #expect(result.status == 1)
        #expect(result.error.contains("cannot read the store"))
        #expect(result.error.split(separator: "\n").count == 1)
        #expect(try Data(contentsOf: notes.database) == garbage, "the file is left as it was")
    }

    @Test func listByTagShowsThatTagsNotesNewestFirst() throws {
        try notes.run("add", "vanilla", "--tag", "dessert")
        try notes.run("add", "groceries", "--tag", "errands")
        try notes.run("add", "sorbet", "--tag", "dessert", "--tag", "summer")
        let list = try notes.run("list", "--tag", "dessert")
        #expect(list.status == 0, "\(list.error)")
        let lines = list.output.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.contains("sorbet") == true && lines.last?.contains("vanilla") == true, "newest first")
        #expect(try notes.run("list", "--tag", "errands").output.contains("groceries"))
    }

    @Test func listFollowPrintsHowOtherProcessesChangeTheTimeline() async throws {
        let kept = id(in: try notes.run("add", "tagged before", "--tag", "remote").output)
        let follow = notes.process(["list", "--tag", "remote", "--follow"])
        let output = Pipe()
        follow.standardOutput = output
        try follow.run()
        defer { follow.terminate() }
        let lines = LinesReader(output.fileHandleForReading)
        #expect(await lines.wait(within: 30) { $0.contains("following") })
        #expect(await lines.wait { $0.contains("tagged before") })
        try notes.run("add", "not tagged")
        try notes.run("add", "from the other process", "--tag", "remote")
        #expect(await lines.wait(within: 10) { $0.contains("added    #1") && $0.contains("from the other process") })
        try notes.run("edit", kept, "--text", "edited elsewhere")
        #expect(await lines.wait(within: 10) { $0.contains("changed  #2") && $0.contains("edited elsewhere") })
        try notes.run("untag", kept, "remote")
        #expect(await lines.wait(within: 10) { $0 == "removed  \(kept)" })
        #expect(!lines.contains { $0.contains("not tagged") }, "a note without the tag is not in this timeline")
    }

    @Test func watchPrintsWhatAnotherProcessAdds() async throws {
        try notes.run("add", "existing")
        let watch = notes.process(["watch"])
        let output = Pipe()
        watch.standardOutput = output
        try watch.run()
        defer { watch.terminate() }
        let lines = LinesReader(output.fileHandleForReading)
        // Starting a process can take seconds on a loaded machine.
        #expect(await lines.wait(within: 30) { $0.contains("watching") })
        try notes.run("add", "from the other process", "--tag", "remote")
        // The watcher polls at most every 500 ms; the bound here leaves room for a machine busy
        // with the rest of the suite's processes (how fast is the benchmarks' business).
        #expect(await lines.wait(within: 10) { $0.contains("added") && $0.contains("from the other process") })
    }
}

/// Reads a pipe's lines in the background.
final class LinesReader: Sendable {
    private let text = LockedValue("")

    init(_ handle: FileHandle) {
        handle.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
    }

    /// The first line read so far that matches.
    func first(where matching: (String) -> Bool) -> String? {
        text.withLock { $0.split(separator: "\n").map(String.init).first(where: matching) }
    }

    /// Whether a line read so far matches.
    func contains(where matching: (String) -> Bool) -> Bool {
        first(where: matching) != nil
    }

    func wait(within seconds: Double = 5, for matching: (String) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if text.withLock({ $0.split(separator: "\n").contains { matching(String($0)) } }) { return true }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        return false
    }
}
