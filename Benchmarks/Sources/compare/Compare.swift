import Foundation

/// Runs Amber's workloads against their baselines and prints one line per workload.
///
///     swift run -c release --package-path Benchmarks compare [NAME...] [--rounds N] [--side ours|baseline]
///
/// Names select the workloads whose name contains one of them. `--rounds` and `--side` are for
/// profiling one side of one workload.
@main
struct Compare {
    static let workloads: [Workload] = [
        Workload(name: "memory-add-100k") { .comparison(MemoryWorkloads.add) },
        Workload(name: "memory-update-100k-observed") { .comparison(MemoryWorkloads.updateObserved) },
        Workload(name: "sqlite-batch-100k") { .comparison(SQLiteWorkloads.batch) },
        Workload(name: "sqlite-single-1k") { .comparison(SQLiteWorkloads.single) },
        Workload(name: "sqlite-open-100k") { .comparison(SQLiteWorkloads.open) },
        Workload(name: "seed-userdefaults-500") { .comparison(SeedWorkload.comparison) },
        Workload(name: "diff-100k") { .comparison(DiffWorkload.comparison) },
        Workload(name: "observers-10k-vs-10") { .comparison(ObserverWorkload.comparison) },
        Workload(name: "query-update-100k") { .comparison(QueryWorkload.comparison) },
        Workload(name: "query-update-100k-closure-sort") { .comparison(QueryWorkload.closureComparison) },
        Workload(name: "query-memory-100k") { .check(QueryWorkload.memory) },
        Workload(name: "crash-100") { .check(CrashCheck.check) },
        Workload(name: "idle-5-stores") { .check(IdleCheck.check) },
    ]

    @MainActor
    static func main() async {
        var filters: [String] = []
        var rounds: Int?
        var side = Side.both
        var arguments = CommandLine.arguments.dropFirst()
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
                case .check(let check):
                    let (figures, passed) = try await check.run()
                    results.checks.append(CheckResult(name: workload.name, figures: figures, passed: passed))
                    print(
                        "check \(workload.name) "
                            + check.printed.map { "\($0)=\(figures[$0] ?? 0)" }.joined(separator: " "))
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
