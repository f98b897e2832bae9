import Foundation

/// One measured figure, as a benchmark writes it to a results file: one JSON object a line.
///
/// `Benchmarks/scripts/write-readme` turns such files into the tables of `Benchmarks/README.md`.
public struct FigureResult: Encodable, Sendable {
    /// The executable that measured it: `compare` or `sync`.
    public var benchmark: String
    /// The figure's name, such as `initial-sync` or `memory-add-100k`.
    public var figure: String
    /// The sync server's backend (`sqlite`, `postgres`), for the figures of `sync`.
    public var backend: String?
    /// What was measured and against what, in a sentence.
    public var description: String
    /// Our figure, in ``unit``.
    public var ours: Double
    /// The baseline measured in the same run, in ``unit``; `nil` for a check without one.
    public var baseline: Double?
    /// The unit of ``ours`` and ``baseline``: `s`, `ms`, `MB`, `records`, …
    public var unit: String
    /// `ours / baseline` (lower is better), when there is a baseline.
    public var ratio: Double?
    /// The target as a person reads it, such as `ratio ≤ 3, ours < 5 s`; `nil` when only reported.
    public var target: String?
    /// Whether the target was met; `nil` when there is none.
    public var met: Bool?
    /// Further figures of the same measurement, by name (percentiles, counts).
    public var details: [String: Double]
    /// The command line that produced it, with the executable named by its product.
    public var command: String
    /// `release` or `debug`: figures of a debug build are for checking the format only.
    public var build: String
    public var machine: Machine
    /// When the figure was measured, ISO 8601 in UTC.
    public var date: String
    /// The commit of the package measured, `-dirty` appended when its files differ from it.
    public var commit: String?

    /// A figure of a run, with the run's facts filled in from `run`.
    ///
    /// - Parameters:
    ///   - targetRatio: The highest acceptable ratio, if the target bounds it.
    ///   - targetOurs: The highest acceptable value of ours (in `unit`), if the target bounds it.
    ///   - target: The target in words, when the bounds above do not say all of it; by default
    ///     they are written out.
    ///   - met: Whether the target was met, when the bounds above do not decide it.
    public init(
        run: BenchmarkRun, figure: String, backend: String? = nil, description: String,
        ours: Double, baseline: Double?, unit: String,
        targetRatio: Double? = nil, targetOurs: Double? = nil, target: String? = nil, met: Bool? = nil,
        details: [String: Double] = [:]
    ) {
        self.benchmark = run.benchmark
        self.figure = figure
        self.backend = backend
        self.description = description
        self.ours = ours
        self.baseline = baseline
        self.unit = unit
        self.ratio = baseline.flatMap { $0 > 0 ? ours / $0 : nil }
        var bounds: [String] = []
        var withinBounds: Bool?
        if let targetRatio {
            bounds.append("ratio ≤ \(Self.number(targetRatio))")
            withinBounds = (ratio.map { $0 <= targetRatio } ?? false)
        }
        if let targetOurs {
            bounds.append("≤ \(Self.number(targetOurs)) \(unit)")
            withinBounds = (withinBounds ?? true) && ours <= targetOurs
        }
        self.target = target ?? (bounds.isEmpty ? nil : bounds.joined(separator: ", "))
        self.met = met ?? withinBounds
        self.details = details
        self.command = run.command
        self.build = run.build
        self.machine = run.machine
        self.date = ISO8601DateFormatter().string(from: Date())
        self.commit = run.commit
    }

    /// A number as a target states it: no trailing zeros.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// The machine a figure was measured on.
public struct Machine: Encodable, Sendable {
    /// Cores the process may use.
    public var cores: Int
    /// The processor's model, when the system says it (`/proc/cpuinfo` on Linux).
    public var cpu: String?
    /// Physical memory, in GiB.
    public var memoryGiB: Double
    /// The operating system and its version.
    public var os: String
    /// The load average over the last minute when the figure was written: other work on the
    /// machine that may have slowed the run.
    public var loadAverage: Double?

    /// This machine, now.
    public static func current() -> Machine {
        let info = ProcessInfo.processInfo
        return Machine(
            cores: info.activeProcessorCount, cpu: cpuModel(),
            memoryGiB: (Double(info.physicalMemory) / 1_073_741_824 * 10).rounded() / 10,
            os: operatingSystem(), loadAverage: loadAverage())
    }

    private static func cpuModel() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    private static func operatingSystem() -> String {
        if let text = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8) {
            for line in text.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
                return line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return ProcessInfo.processInfo.operatingSystemVersionString
    }

    private static func loadAverage() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
        return text.split(separator: " ").first.flatMap { Double($0) }
    }
}

/// The facts shared by every figure of one benchmark run, and the file its figures go to.
public final class BenchmarkRun: Sendable {
    public let benchmark: String
    public let command: String
    public let build: String
    public let machine: Machine
    public let commit: String?
    /// The results file, or `nil` when the run writes none.
    public let resultsPath: String?

    /// The run of `benchmark` invoked with `arguments` (without the executable), writing its
    /// figures to `resultsPath` when given.
    ///
    /// - Parameter repository: A directory inside the repository measured, for its commit.
    public init(benchmark: String, arguments: [String], resultsPath: String?, repository: URL) {
        self.benchmark = benchmark
        #if DEBUG
            build = "debug"
        #else
            build = "release"
        #endif
        self.command = ([benchmark] + arguments.map(Self.quoted)).joined(separator: " ")
        self.machine = Machine.current()
        self.commit = Self.commit(of: repository)
        self.resultsPath = resultsPath
    }

    /// Appends `figure` to the results file as one line of JSON.
    ///
    /// - Throws: When the file cannot be written.
    public func record(_ figure: FigureResult) throws {
        guard let resultsPath else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        var line = try encoder.encode(figure)
        line.append(UInt8(ascii: "\n"))
        if !FileManager.default.fileExists(atPath: resultsPath) {
            guard FileManager.default.createFile(atPath: resultsPath, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: resultsPath])
            }
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: resultsPath))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: line)
    }

    /// Removes `--results FILE` from `arguments`.
    ///
    /// - Returns: The file, and the other arguments in their order.
    public static func resultsOption(in arguments: [String]) -> (path: String?, rest: [String]) {
        var rest: [String] = []
        var path: String?
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--results", let value = remaining.popFirst() {
                path = value
            } else {
                rest.append(argument)
            }
        }
        return (path, rest)
    }

    private static func quoted(_ argument: String) -> String {
        let plain = argument.allSatisfy { $0.isLetter || $0.isNumber || "-_./=:,@".contains($0) }
        return plain && !argument.isEmpty ? argument : "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    private static func commit(of repository: URL) -> String? {
        guard let head = git(["rev-parse", "--short", "HEAD"], in: repository), !head.isEmpty else { return nil }
        let changes = git(["status", "--porcelain", "--untracked-files=no"], in: repository) ?? ""
        return changes.isEmpty ? head : head + "-dirty"
    }

    private static func git(_ arguments: [String], in directory: URL) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", directory.path] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return nil
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
