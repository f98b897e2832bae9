import Amber
import AmberLock
import AmberSync
import ArgumentParser
import Foundation

/// Where `notes sync` syncs to, remembered in `$NOTES_HOME/sync.json`.
struct SyncSettings: Codable {
    var server: URL
    /// A token from `amber-sync user add`; or `nil` with ``tokenCommand``.
    var token: String?
    /// A shell command that prints a token (a JWT of the app's sign-in), run for each token needed.
    var tokenCommand: String?
    var lastSync: Date?

    static var file: URL { Library.home.appendingPathComponent("sync.json") }

    static func load() throws -> SyncSettings? {
        guard let data = try? Data(contentsOf: file) else { return nil }
        do {
            return try JSONDecoder().decode(SyncSettings.self, from: data)
        } catch {
            throw NotesError(
                "\(file.path) is not readable sync settings; run notes sync --server URL --token TOKEN again")
        }
    }

    func save() throws {
        try FileManager.default.createDirectory(at: Library.home, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: Self.file, options: .atomic)
        // The token is a password: readable by its owner only.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: Self.file.path)
    }
}

extension Library {
    /// A sync client for both stores.
    func syncClient(_ settings: SyncSettings) throws -> SyncClient {
        let client: SyncClient
        if let command = settings.tokenCommand {
            client = try SyncClient(storage: storage, server: settings.server) {
                try await TokenCommand.run(command)
            }
        } else {
            client = try SyncClient(storage: storage, server: settings.server, token: settings.token ?? "")
        }
        try client.add(notes)
        try client.add(tags)
        return client
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sync with an amber-sync server: push local changes, pull the others'.",
        discussion:
            "The first time, give --server and --token (or --token-command); they are remembered in $NOTES_HOME/sync.json."
    )
    @Option(help: "The server, such as http://127.0.0.1:8080.") var server: String?
    @Option(help: "A token from `amber-sync user add` or `amber-sync token add`.") var token: String?
    @Option(
        help:
            "A shell command that prints a token (such as a JWT of your sign-in), run each time a token is needed; instead of --token."
    )
    var tokenCommand: String?
    @Flag(help: "Keep syncing live and print what arrives, until interrupted.") var watch = false

    func run() async throws {
        var settings = try settings()
        let library = try Library.open()
        let client = try library.syncClient(settings)
        if watch {
            try await watch(library, client)
            return
        }
        let display = ProgressDisplay(terminal: isatty(STDERR_FILENO) == 1)
        let events = client.events()
        // Until the sync's last event, which comes after all its progress.
        let progress = Task {
            for await event in events {
                switch event {
                case .progress(let progress): display.show(progress)
                case .synced, .failed, .offline: return display.finish()
                case .syncing: continue
                }
            }
        }
        defer { progress.cancel() }
        do {
            let report = try await client.sync()
            await progress.value
            settings.lastSync = Date()
            try settings.save()
            var line = "synced: pushed \(report.pushed), pulled \(report.pulled)"
            if !report.merged.isEmpty {
                line +=
                    "; merged "
                    + report.merged.map { "\($0.collection)/\(short($0.id)) (\($0.fields.joined(separator: ", ")))" }
                    .joined(separator: ", ")
            }
            print(line)
        } catch let error as SyncError {
            await progress.value
            throw NotesError("\(error.description) (\(client.pendingCount) local changes kept pending)")
        }
    }

    private func settings() throws -> SyncSettings {
        let saved = try SyncSettings.load()
        guard let address = server ?? saved?.server.absoluteString else {
            throw NotesError("no sync server yet: run notes sync --server URL --token TOKEN once")
        }
        guard let url = URL(string: address), let scheme = url.scheme, ["http", "https"].contains(scheme),
            url.host != nil
        else {
            throw NotesError("\(address) is not a server address (http://HOST:PORT)")
        }
        if token != nil && tokenCommand != nil {
            throw NotesError("give --token or --token-command, not both")
        }
        // A new --token or --token-command replaces the other one remembered.
        let remembered = token == nil && tokenCommand == nil
        let token = remembered ? saved?.token : token
        let tokenCommand = remembered ? saved?.tokenCommand : tokenCommand
        guard !(token ?? "").isEmpty || !(tokenCommand ?? "").isEmpty else {
            throw NotesError("no token: run notes sync --server URL --token TOKEN (or --token-command CMD)")
        }
        let settings = SyncSettings(
            server: url, token: token, tokenCommand: tokenCommand,
            lastSync: url == saved?.server ? saved?.lastSync : nil)
        if server != nil || !remembered { try settings.save() }
        return settings
    }

    private func watch(_ library: Library, _ client: SyncClient) async throws {
        emit("syncing \(Library.home.path) with \(client.server.absoluteString) (Ctrl-C to stop)")
        client.start()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await library.printChanges(bySync: true, added: "arrived ") }
            group.addTask {
                var wasOffline = false
                for await event in client.events() {
                    switch event {
                    case .offline(let reason), .failed(let reason):
                        if !wasOffline { emit("offline: \(reason)") }
                        wasOffline = true
                    case .synced(let report):
                        if wasOffline { emit("back online") }
                        wasOffline = false
                        if report.pushed > 0 {
                            emit("pushed   \(report.pushed) change\(report.pushed == 1 ? "" : "s")")
                        }
                    case .syncing, .progress:
                        break
                    }
                }
            }
        }
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the sync server, pending changes and the last sync.")

    func run() throws {
        guard let settings = try SyncSettings.load() else {
            print("sync: not set up (notes sync --server URL --token TOKEN)")
            return
        }
        let library = try Library.open()
        let client = try library.syncClient(settings)
        print("server:   \(settings.server.absoluteString)")
        print("pending:  \(client.pendingCount)")
        print("synced:   \(settings.lastSync.map { Library.dateFormatter.string(from: $0) } ?? "never")")
    }
}

/// A record id as the timeline shows it.
private func short(_ id: String) -> String {
    String(id.prefix(8)).lowercased()
}

/// A long sync's progress on standard error: a bar redrawn in place on a terminal, a plain line
/// at each tenth otherwise (a log, a pipe). A phase with one report (a sync of one page) shows
/// nothing: the first report of a phase is drawn once a second one comes.
final class ProgressDisplay: Sendable {
    /// The phase shown, and whether ``finish()`` ended the display.
    private let shown = LockedValue<(phase: Phase, finished: Bool)>((Phase(), false))
    private let terminal: Bool

    private struct Phase {
        var phase: SyncProgress.Phase?
        var first: SyncProgress?
        var reports = 0
        var tenth = 0
        var drawn = false
    }

    init(terminal: Bool) {
        self.terminal = terminal
    }

    func show(_ progress: SyncProgress) {
        shown.withLock { shown in
            guard !shown.finished else { return }
            if shown.phase.phase != progress.phase {
                if shown.phase.drawn { write("\n") }
                shown.phase = Phase(phase: progress.phase)
            }
            shown.phase.reports += 1
            if shown.phase.reports == 1 {
                shown.phase.first = progress
                return
            }
            if shown.phase.reports == 2, let first = shown.phase.first { draw(first, in: &shown.phase) }
            draw(progress, in: &shown.phase)
        }
    }

    private func draw(_ progress: SyncProgress, in state: inout Phase) {
        let (verb, noun) =
            switch progress.phase {
            case .pulling: ("pulled", "records")
            case .pushing: ("pushed", "records")
            case .uploadingAttachments: ("uploaded", "attachments")
            case .downloadingAttachments: ("fetched", "attachments")
            }
        let count = progress.total.map { "\(progress.completed) of \($0)" } ?? "\(progress.completed)"
        let megabytes = String(format: "%.1f MB", Double(progress.bytes) / 1_000_000)
        if terminal {
            let width = 30
            let filled = Int((progress.fraction ?? 0) * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            write("\r[\(bar)] \(verb) \(count) \(noun), \(megabytes)")
            state.drawn = true
        } else {
            let tenth = Int((progress.fraction ?? 0) * 10)
            guard tenth > state.tenth || progress.total == nil else { return }
            state.tenth = tenth
            write("\(verb) \(count) \(noun), \(megabytes)\n")
        }
    }

    /// Ends the bar's line; later reports show nothing.
    func finish() {
        shown.withLock { shown in
            if shown.phase.drawn { write("\n") }
            shown.phase.drawn = false
            shown.finished = true
        }
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
