import Amber
import AmberSQLite
import Foundation

/// The value the writer process stores (same JSON shape as its own `Entry`).
struct Entry: Identifiable, Codable, Sendable, Equatable {
    let id: String
    let index: Int
    let payload: String
}

func temporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("amber-sqlite-tests-\(UUID().uuidString)")
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

func temporaryDatabasePath() -> String {
    temporaryDirectory().appendingPathComponent("store.sqlite").path
}

/// The `amber-sqlite-writer` executable built beside the tests.
func writerExecutable() throws -> URL {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent("amber-sqlite-writer")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory.deleteLastPathComponent()
    }
    throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "amber-sqlite-writer next to \(CommandLine.arguments[0])"])
}

/// Waits until `condition` holds, for up to `seconds`.
func eventually(within seconds: Double = 5, _ condition: @Sendable () async -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if await condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return await condition()
}

final class Locked<State>: @unchecked Sendable {
    // @unchecked: `state` is only touched while `lock` is held.
    private let lock = NSLock()
    private var state: State
    init(_ state: State) { self.state = state }
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}

/// Collects a stream's elements in the background.
final class Collected<Element: Sendable>: Sendable {
    private let elements = Locked<[Element]>([])
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<Element>) {
        let elements = self.elements
        task = Task { for await element in stream { elements.withLock { $0.append(element) } } }
    }

    var values: [Element] { elements.withLock { $0 } }
}
