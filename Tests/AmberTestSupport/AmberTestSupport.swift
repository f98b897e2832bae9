import AmberLock
import Foundation

// Helpers shared by the test targets.

/// A new empty directory under the system's temporary directory, removed with the others of
/// this process when it exits.
public func temporaryDirectory() -> URL {
    let url = processTemporaryDirectory.appendingPathComponent(UUID().uuidString)
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// The folder of this test process's temporary directories: a run of the suites wrote hundreds
/// of them, up to 65 MB each, and left them all behind. Removed at a normal exit; a crashed
/// run leaves it (`amber-tests-PID-…`).
private let processTemporaryDirectory: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
        "amber-tests-\(getpid())-\(UUID().uuidString.prefix(8))")
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(at: processTemporaryDirectory) }
    return url
}()

/// How `actual` differs from `expected`, in a sentence; `nil` when they hold the same bytes.
///
/// For large byte sequences write `#expect(bytesDiffer(actual, expected) == nil)`, not
/// `#expect(actual == expected)`: when the latter fails, Swift Testing computes a difference of
/// the two collections to report it, which takes minutes at full CPU for a few MiB.
public func bytesDiffer(_ actual: some Collection<UInt8>, _ expected: some Collection<UInt8>) -> String? {
    for (offset, (mine, theirs)) in zip(actual, expected).enumerated() where mine != theirs {
        return "byte \(offset) is \(mine), not \(theirs) (\(actual.count) bytes, \(expected.count) expected)"
    }
    return actual.count == expected.count ? nil : "\(actual.count) bytes, not \(expected.count)"
}

/// Waits until `condition` holds, for up to `seconds`.
public func eventually(within seconds: Double = 5, _ condition: @Sendable () async -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if await condition() { return true }
        try? await Task.sleep(nanoseconds: 5_000_000)
    }
    return await condition()
}

/// An executable of this package, built beside the test binary.
public func builtExecutable(named name: String) -> URL {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory.deleteLastPathComponent()
    }
    fatalError("the \(name) executable is not built next to \(CommandLine.arguments[0])")
}

/// Collects a stream's elements in the background.
public final class Collected<Element: Sendable>: Sendable {
    private let elements = LockedValue<[Element]>([])
    private let task: Task<Void, Never>

    public init(_ stream: AsyncStream<Element>) {
        let elements = self.elements
        task = Task { for await element in stream { elements.withLock { $0.append(element) } } }
    }

    public var values: [Element] { elements.withLock { $0 } }

    public func cancel() { task.cancel() }

    /// Waits until at least `count` elements arrived.
    public func wait(for count: Int, within seconds: Double = 5) async -> [Element] {
        _ = await eventually(within: seconds) { self.values.count >= count }
        return values
    }
}

/// What a finished process printed, and its exit status.
public struct ProcessResult: Sendable {
    public let status: Int32
    public let output: String
    public let error: String
}

/// Runs a configured process to its end, collecting what it prints.
public func runToEnd(_ process: Process) throws -> ProcessResult {
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    let out = output.fileHandleForReading.readDataToEndOfFile()
    let err = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(
        status: process.terminationStatus,
        output: String(decoding: out, as: UTF8.self),
        error: String(decoding: err, as: UTF8.self)
    )
}

/// ``runToEnd(_:)`` on a thread of its own, for async tests: waiting on a cooperative thread
/// would hold up every other test of the process (two such threads on a two-core machine).
public func runToEndOnItsOwnThread(_ process: Process) async throws -> ProcessResult {
    let process = UncheckedProcess(process)
    return try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try runToEnd(process.value) }) }.start()
    }
}

/// A `Process` handed to the one thread that runs it.
private struct UncheckedProcess: @unchecked Sendable {
    // @unchecked: only the thread it is handed to touches the process.
    let value: Process
    init(_ value: Process) { self.value = value }
}

/// Waits for `process` to exit, at most `seconds`; whether it did.
///
/// Use it rather than `waitUntilExit()` after a SIGKILL: on Linux, `waitUntilExit()` was seen
/// spinning forever on a killed child that `Process` never reaped, which hangs the test run.
@discardableResult
public func waitForExit(_ process: Process, within seconds: Double = 10) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while process.isRunning, Date() < deadline {
        usleep(10_000)
    }
    return !process.isRunning
}
