import Amber
import AmberSQLite
import Foundation

/// The value `amber-sqlite-writer` writes.
struct Entry: Identifiable, Codable, Sendable, Equatable {
    let id: String
    let index: Int
    let payload: String
}

enum CrashCheck {
    static let kills = 100

    static var check: Check {
        Check(
            printed: ["kills", "lost", "unopenable"], ours: "lost", unit: "acknowledged writes lost",
            target: "0 lost, 0 unopenable"
        ) {
            let figures = try await run()
            return (figures, figures["kills"] == kills && figures["lost"] == 0 && figures["unopenable"] == 0)
        }
    }

    /// Kills a writer process `kills` times at a random moment, reopening the store after each kill.
    ///
    /// Passes when every kill landed, no acknowledged write is missing and the store always opens.
    @MainActor
    static func run() async throws -> [String: Int] {
        let writer = try writerExecutable()
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.path("crash.sqlite")
        var acknowledged: [String] = []
        var lost: Set<String> = []
        var killed = 0
        var unopenable = 0
        for run in 0..<kills {
            let process = Process()
            process.executableURL = writer
            process.arguments = [path, "entries", "1000000", "run\(run)"]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Read while the writer runs, so a full pipe never holds it back.
            let reading = Task.detached { output.fileHandleForReading.readDataToEndOfFile() }
            try await Task.sleep(for: .milliseconds(Int.random(in: 30...300)))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal, process.terminationStatus == SIGKILL { killed += 1 }
            let printed = String(decoding: await reading.value, as: UTF8.self)
            // Only ids followed by their newline were acknowledged; the text after the last one was cut by the kill.
            acknowledged += printed.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
            do {
                let store = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
                let stored = Set(store.ids)
                lost.formUnion(acknowledged.filter { !stored.contains($0) })
            } catch {
                unopenable += 1
                FileHandle.standardError.write(Data("crash-100: run \(run): the store does not open: \(error)\n".utf8))
            }
        }
        return ["kills": killed, "lost": lost.count, "unopenable": unopenable, "acknowledged": acknowledged.count]
    }

    /// The writer built by the main package, built in release when neither configuration has it.
    static func writerExecutable() throws -> URL {
        let root = benchmarksDirectory.deletingLastPathComponent()
        let candidates = ["release", "debug"].map { root.appendingPathComponent(".build/\($0)/amber-sqlite-writer") }
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) {
            return found
        }
        FileHandle.standardError.write(Data("crash-100: building amber-sqlite-writer\n".utf8))
        let build = Process()
        build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        build.arguments = [
            "swift", "build", "-c", "release", "--product", "amber-sqlite-writer", "--package-path", root.path,
        ]
        // Its output goes to standard error, leaving standard output to the results.
        build.standardOutput = FileHandle.standardError
        try build.run()
        build.waitUntilExit()
        guard build.terminationStatus == 0, FileManager.default.isExecutableFile(atPath: candidates[0].path) else {
            throw BenchmarkError(
                "cannot build amber-sqlite-writer (swift build exited with \(build.terminationStatus))")
        }
        return candidates[0]
    }
}
