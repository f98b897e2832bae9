import Foundation

/// One named measurement of `compare`.
struct Workload {
    let name: String
    /// What is measured against what, in a sentence, for the results file.
    let description: String
    /// Builds the measurement (and its inputs) only when the workload is selected.
    let make: @MainActor () -> Kind

    enum Kind {
        case comparison(Comparison)
        case check(Check)
    }
}

/// Ours against a baseline: both measured alternately, compared by their medians.
struct Comparison {
    /// The highest acceptable ours / baseline ratio; `nil` reports the ratio without judging it.
    let target: Double?
    let rounds: Int
    /// One round of ours; returns the milliseconds of the measured part, setup excluded.
    let ours: @MainActor () async throws -> Double
    /// One round of the baseline, measured the same way.
    let baseline: @MainActor () async throws -> Double
    /// Removes what the rounds shared, once they are done.
    var tearDown: @MainActor () -> Void = {}
}

/// A pass-or-fail check that is not a timing.
struct Check {
    /// The figures printed, in this order; the results file has them all.
    let printed: [String]
    /// The figure that stands for the check in the results file, and the one beside it, if any.
    let ours: String
    var baseline: String?
    /// Their unit, and the pass condition in words.
    let unit: String
    let target: String
    let run: @MainActor () async throws -> (figures: [String: Int], passed: Bool)
}

struct CheckResult: Codable {
    let name: String
    let figures: [String: Int]
    let passed: Bool
}

struct ComparisonResult: Codable {
    let name: String
    let oursMedianMS: Double
    let baselineMedianMS: Double
    let ratio: Double
    let target: Double?
    let withinTarget: Bool
    let oursRoundsMS: [Double]
    let baselineRoundsMS: [Double]

    var line: String {
        // Small ratios keep two significant digits, which three decimals would round away.
        "ratio \(name) \(format(oursMedianMS)) \(format(baselineMedianMS)) \(ratio < 0.01 ? String(format: "%.2g", ratio) : format(ratio))"
    }
}

/// What one run of `compare` measured, written to `results.json`.
struct Results: Codable {
    var date = Date()
    var ratios: [ComparisonResult] = []
    var checks: [CheckResult] = []
}

/// Which side of a comparison to run, so a profiler sees one side only.
enum Side: String {
    case both, ours, baseline
}

extension Comparison {
    /// Past this many seconds a workload runs no further round, so a very slow side does not hold up the run.
    static let budget: Duration = .seconds(120)

    /// Runs both sides `rounds` times (fewer once over ``budget``), alternating which goes first,
    /// and compares their medians.
    @MainActor
    func run(name: String, rounds override: Int?, side: Side) async throws -> ComparisonResult {
        defer { tearDown() }
        var oursRounds: [Double] = []
        var baselineRounds: [Double] = []
        let start = ContinuousClock.now
        for round in 0..<(override ?? rounds) {
            if override == nil, round > 0, start.duration(to: .now) > Self.budget { break }
            let oursFirst = round.isMultiple(of: 2)
            if oursFirst, side != .baseline { oursRounds.append(try await ours()) }
            if side != .ours { baselineRounds.append(try await baseline()) }
            if !oursFirst, side != .baseline { oursRounds.append(try await ours()) }
        }
        let oursMedian = median(oursRounds)
        let baselineMedian = median(baselineRounds)
        let ratio = baselineMedian > 0 ? oursMedian / baselineMedian : .nan
        return ComparisonResult(
            name: name, oursMedianMS: oursMedian, baselineMedianMS: baselineMedian, ratio: ratio,
            target: target, withinTarget: target.map { ratio <= $0 } ?? true,
            oursRoundsMS: oursRounds, baselineRoundsMS: baselineRounds
        )
    }
}

/// The milliseconds `body` takes.
@MainActor
func milliseconds(_ body: () async throws -> Void) async rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try await body()
    let elapsed = start.duration(to: clock.now)
    return Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15
}

func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
}

func format(_ value: Double) -> String {
    String(format: "%.3f", value)
}

/// A fresh directory for one round's database files, removed by `remove()`.
struct ScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("amber-benchmark-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// The `Benchmarks` folder, found from this file so `compare` works from any directory.
let benchmarksDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
