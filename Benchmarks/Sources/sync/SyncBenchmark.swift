import BenchmarkResults
import Foundation

/// Load figures of the sync server and client, each beside a baseline measured in the same run.
///
///     swift build -c release --package-path Benchmarks --product sync
///     Benchmarks/.build/release/sync [FIGURE...] [--backend sqlite|postgres|both] [scale options] [--results FILE]
///
/// Figures: `initial-sync`, `first-push`, `page`, `push`, `propagation`, `fan-out`, `crash`, `attachment-100mib`,
/// `attachments-1k` (all by default). Each prints lines `sync BACKEND FIGURE: ...` with the figure, its baseline and
/// their ratio; with `--results FILE` it also appends each figure to FILE as a line of JSON (see `FigureResult`), for
/// `scripts/write-readme`.
/// The scale options shrink a figure for quick runs; the defaults are the sizes of Benchmarks/README.md.
/// `--push-client async-http-client` runs the push figures with the load client they had before
/// ``HTTPConnection``.
///
/// `sync serve --database LOCATION [--port N]` is the server process the figures start: this
/// same executable, serving with the `AmberSyncServer` library.
@main
struct SyncBenchmark {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "serve" {
            arguments.removeFirst()
            await ServeMode.run(arguments)
            return
        }
        do {
            let options = try Options(benchmarkRun.arguments)
            var failures = 0
            let backends = try await options.backends()
            // The initial sync's memory figure is the growth of this process's resident memory:
            // after other figures, glibc keeps the memory they freed resident, a sync reuses it
            // unseen and its growth reads near 0. Unless it runs alone, it runs in a process of its own.
            let initialSyncAlone = options.figures == [.initialSync] && backends.count == 1
            for backend in backends {
                defer { backend.tearDown() }
                for figure in options.figures {
                    do {
                        if figure == .initialSync, !initialSyncAlone {
                            try InitialSync.runInOwnProcess(backend: backend.kind, records: options.records)
                            continue
                        }
                        try await figure.run(backend: backend, options: options)
                    } catch {
                        failures += 1
                        report(
                            "sync \(backend.kind.rawValue) \(figure.rawValue) failed: \(error)", toStandardError: true)
                    }
                }
            }
            exit(failures == 0 ? 0 : 1)
        } catch {
            report("sync: \(error)", toStandardError: true)
            exit(2)
        }
    }
}

/// The figures, in the order they run.
enum Figure: String, CaseIterable {
    case initialSync = "initial-sync"
    case firstPush = "first-push"
    case page
    case push
    case propagation
    case fanOut = "fan-out"
    case crash
    case largeAttachment = "attachment-100mib"
    case smallAttachments = "attachments-1k"

    func run(backend: Backend, options: Options) async throws {
        switch self {
        case .initialSync: try await InitialSync.run(backend: backend, records: options.records)
        case .firstPush:
            try await FirstPush.run(backend: backend, records: options.records, rounds: options.rounds)
        case .page: try await PageRead.run(backend: backend, records: options.pageRecords)
        case .push:
            try await PushThroughput.run(
                backend: backend, pushes: options.pushes, users: options.users, rounds: options.rounds,
                client: options.pushClient)
        case .propagation:
            try await Propagation.run(backend: backend, changes: options.changes, waiting: options.waiting)
        case .fanOut: try await FanOut.run(backend: backend, pulls: options.fanOut, writes: options.fanOutWrites)
        case .crash: try await CrashRun.run(backend: backend, kills: options.kills, clients: 5)
        case .largeAttachment: try await LargeAttachment.run(backend: backend, rounds: options.rounds)
        case .smallAttachments: try await SmallAttachments.run(backend: backend, count: options.attachments)
        }
    }
}

/// The command line.
struct Options {
    var figures: [Figure] = []
    var backend = "both"
    /// Records of the initial sync and of the first push.
    var records = 100_000
    /// Records read page by page in the page figure.
    var pageRecords = 20_000
    /// Single-record pushes of one user, from 10 clients.
    var pushes = 10_000
    /// Users of the many-users push figure, each pushing 100 times.
    var users = 100
    /// Changes whose propagation to the other server process is timed.
    var changes = 1_000
    /// Other clients long-polling during the propagation figure.
    var waiting = 100
    /// Pulls waiting on one process in the fan-out figure.
    var fanOut = 1_000
    /// Writes that wake them, each timed.
    var fanOutWrites = 5
    /// SIGKILLs of the crash figure.
    var kills = 100
    /// Rounds of the 100 MiB attachment figure (the median is reported).
    var rounds = 3
    /// Attachments of 10 KiB in the small attachments figure.
    var attachments = 1_000
    /// The load's client of the push figures: ``HTTPConnection`` (`nio`), or async-http-client
    /// (`async-http-client`), the client of the figures before it.
    var pushClient = PushClient.nio

    init(_ arguments: [String]) throws {
        var arguments = arguments[...]
        func number(_ name: String) throws -> Int {
            guard let value = arguments.popFirst().flatMap(Int.init), value > 0 else {
                throw BenchmarkError("\(name) needs a positive number")
            }
            return value
        }
        while let argument = arguments.popFirst() {
            switch argument {
            case "--backend":
                guard let value = arguments.popFirst(), ["sqlite", "postgres", "both"].contains(value) else {
                    throw BenchmarkError("--backend needs sqlite, postgres or both")
                }
                backend = value
            case "--records": records = try number(argument)
            case "--page-records": pageRecords = try number(argument)
            case "--pushes": pushes = try number(argument)
            case "--users": users = try number(argument)
            case "--changes": changes = try number(argument)
            case "--waiting": waiting = try number(argument)
            case "--fan-out": fanOut = try number(argument)
            case "--fan-out-writes": fanOutWrites = try number(argument)
            case "--kills": kills = try number(argument)
            case "--rounds": rounds = try number(argument)
            case "--attachments": attachments = try number(argument)
            case "--push-client":
                guard let value = arguments.popFirst().flatMap(PushClient.init(rawValue:)) else {
                    throw BenchmarkError("--push-client needs nio or async-http-client")
                }
                pushClient = value
            default:
                guard let figure = Figure(rawValue: argument) else {
                    throw BenchmarkError(
                        "unknown argument \(argument); figures: \(Figure.allCases.map(\.rawValue).joined(separator: " "))"
                    )
                }
                figures.append(figure)
            }
        }
        if figures.isEmpty { figures = Figure.allCases }
    }

    /// The backends to measure: `both` means PostgreSQL too when this build and machine have it.
    func backends() async throws -> [Backend] {
        switch backend {
        case "sqlite": return [try Backend(kind: .sqlite)]
        case "postgres": return [try await Backend.postgres()]
        default:
            var backends = [try Backend(kind: .sqlite)]
            do {
                backends.append(try await Backend.postgres())
            } catch {
                report("sync: no PostgreSQL run: \(error)", toStandardError: true)
            }
            return backends
        }
    }
}

/// This run's machine, command and results file (`--results FILE`, taken out of the other arguments).
let benchmarkRun = CommandLineRun(benchmark: "sync")

/// A ``BenchmarkRun`` made from the command line, with the arguments left for the benchmark.
struct CommandLineRun: Sendable {
    let run: BenchmarkRun
    let arguments: [String]
    /// The file of `--results FILE`, if given.
    let resultsPath: String?

    init(benchmark: String) {
        let (path, rest) = BenchmarkRun.resultsOption(in: Array(CommandLine.arguments.dropFirst()))
        run = BenchmarkRun(
            benchmark: benchmark, arguments: rest, resultsPath: path, repository: Backend.repositoryDirectory)
        arguments = rest
        resultsPath = path
    }

    /// Appends a figure of `backend` to the results file, if the run has one.
    func record(
        _ figure: String, backend: Backend, description: String, ours: Double, baseline: Double?, unit: String,
        targetRatio: Double? = nil, targetOurs: Double? = nil, target: String? = nil, met: Bool? = nil,
        details: [String: Double] = [:]
    ) throws {
        try run.record(
            FigureResult(
                run: run, figure: figure, backend: backend.kind.rawValue, description: description, ours: ours,
                baseline: baseline, unit: unit, targetRatio: targetRatio, targetOurs: targetOurs, target: target,
                met: met, details: details))
    }
}

/// Prints a whole line at once, unbuffered, so lines of a long run show as they come.
func report(_ line: String, toStandardError: Bool = false) {
    let handle = toStandardError ? FileHandle.standardError : FileHandle.standardOutput
    handle.write(Data((line + "\n").utf8))
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
