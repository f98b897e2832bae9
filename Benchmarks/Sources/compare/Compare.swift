import BenchmarkResults
import Foundation

/// Runs Amber's workloads against their baselines and prints one line per workload.
///
///     swift run -c release --package-path Benchmarks compare [NAME...] [--rounds N] [--side ours|baseline]
///         [--results FILE]
///
/// Names select the workloads whose name contains one of them. `--rounds` and `--side` are for
/// profiling one side of one workload. Every run writes `Benchmarks/results.json`; `--results FILE`
/// also appends each figure to FILE as a line of JSON (see `FigureResult`), for `scripts/write-readme`.
@main
struct Compare {
    static let workloads: [Workload] = [
        Workload(
            name: "memory-add-100k",
            description: "100,000 `add` into an in-memory store vs a locked `[ID: Value]` + order array"
        ) { .comparison(MemoryWorkloads.add) },
        Workload(
            name: "memory-update-100k-observed",
            description: "100,000 updates delivered to a `changes()` subscriber vs the same dictionary, unobserved"
        ) { .comparison(MemoryWorkloads.updateObserved) },
        Workload(
            name: "sqlite-batch-100k",
            description: "`add(contentsOf:)` of 100,000 values vs raw GRDB inserting the same JSON in one transaction"
        ) { .comparison(SQLiteWorkloads.batch) },
        Workload(
            name: "sqlite-single-1k",
            description: "1,000 single `add` calls vs 1,000 raw GRDB single-row transactions"
        ) { .comparison(SQLiteWorkloads.single) },
        Workload(
            name: "sqlite-open-100k",
            description: "opening a store of 100,000 values vs raw GRDB fetch + JSON decode"
        ) { .comparison(SQLiteWorkloads.open) },
        Workload(
            name: "seed-userdefaults-500",
            description: "500 adds to the SQLite store vs seed 000's UserDefaults store"
        ) { .comparison(SeedWorkload.comparison) },
        Workload(
            name: "diff-100k",
            description: "`IdentityDiff` on 100,000 elements (1% each of inserts, deletes, moves, updates) vs "
                + "`difference(from:).inferringMoves()` + value comparison"
        ) { .comparison(DiffWorkload.comparison) },
        Workload(
            name: "observers-10k-vs-10",
            description: "updating one id with 10,000 per-id observers on other ids vs with 10"
        ) { .comparison(ObserverWorkload.comparison) },
        Workload(
            name: "query-update-100k",
            description: "one edit of one shown note in a 100,000-note store with a live query (half shown, sorted "
                + "by date) vs re-running filter + sort (`KeyPathComparator`) + `IdentityDiff`; 20 edits a round"
        ) { .comparison(QueryWorkload.comparison) },
        Workload(
            name: "query-update-100k-closure-sort",
            description: "the same, against a baseline that sorts with a hand-written closure"
        ) { .comparison(QueryWorkload.closureComparison) },
        Workload(
            name: "query-memory-100k",
            description: "heap bytes a live query adds to that store vs its shown values' array"
        ) { .check(QueryWorkload.memory) },
        Workload(
            name: "crash-100",
            description: "100 SIGKILLs of a writer process: acknowledged writes lost, files that would not open"
        ) { .check(CrashCheck.check) },
        Workload(
            name: "idle-5-stores",
            description: "voluntary context switches per second of an idle process with 5 stores open on one "
                + "SQLite file, vs with none"
        ) { .check(IdleCheck.check) },
    ]

    @MainActor
    static func main() async {
        var filters: [String] = []
        var rounds: Int?
        var side = Side.both
        let (resultsPath, otherArguments) = BenchmarkRun.resultsOption(in: Array(CommandLine.arguments.dropFirst()))
        let run = BenchmarkRun(
            benchmark: "compare", arguments: otherArguments, resultsPath: resultsPath, repository: benchmarksDirectory)
        var arguments = otherArguments[...]
        while let argument = arguments.popFirst() {
            switch argument {
            case "--rounds":
                guard let value = arguments.popFirst().flatMap(Int.init), value > 0 else {
                    fail("--rounds needs a positive number")
                }
                rounds = value
            case "--side":
                guard let value = arguments.popFirst().flatMap(Side.init(rawValue:)) else {
                    fail("--side needs ours, baseline or both")
                }
                side = value
            default:
                filters.append(argument)
            }
        }
        let selected = workloads.filter { workload in filters.isEmpty || filters.contains { workload.name.contains($0) }
        }
        guard !selected.isEmpty else {
            fail(
                "no workload matches \(filters.joined(separator: " ")); workloads: \(workloads.map(\.name).joined(separator: " "))"
            )
        }

        var results = Results()
        var failures = 0
        for workload in selected {
            do {
                switch workload.make() {
                case .comparison(let comparison):
                    let result = try await comparison.run(name: workload.name, rounds: rounds, side: side)
                    results.ratios.append(result)
                    print(result.line)
                    try run.record(
                        FigureResult(
                            run: run, figure: workload.name, description: workload.description,
                            ours: result.oursMedianMS, baseline: result.baselineMedianMS, unit: "ms",
                            targetRatio: result.target,
                            details: ["rounds": Double(result.oursRoundsMS.count)]))
                case .check(let check):
                    let (figures, passed) = try await check.run()
                    results.checks.append(CheckResult(name: workload.name, figures: figures, passed: passed))
                    print(
                        "check \(workload.name) "
                            + check.printed.map { "\($0)=\(figures[$0] ?? 0)" }.joined(separator: " "))
                    try run.record(
                        FigureResult(
                            run: run, figure: workload.name, description: workload.description,
                            ours: Double(figures[check.ours] ?? 0),
                            baseline: check.baseline.map { Double(figures[$0] ?? 0) },
                            unit: check.unit, target: check.target, met: passed,
                            details: figures.mapValues(Double.init)))
                }
            } catch {
                failures += 1
                FileHandle.standardError.write(Data("compare: \(workload.name) failed: \(error)\n".utf8))
            }
        }
        let within = results.ratios.filter(\.withinTarget).count
        print("ratios: \(within) within target, \(results.ratios.count - within + failures) over")

        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            encoder.nonConformingFloatEncodingStrategy = .convertToString(
                positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            try encoder.encode(results).write(to: benchmarksDirectory.appendingPathComponent("results.json"))
        } catch {
            FileHandle.standardError.write(Data("compare: cannot write results.json: \(error)\n".utf8))
            exit(1)
        }
        if failures > 0 { exit(1) }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("compare: \(message)\n".utf8))
        exit(2)
    }
}
