import Amber
import AmberSQLite
import AmberTestSupport
import Foundation
import Testing

@Suite(.boundedConcurrency) struct CrashTests {
    /// A writer process killed with SIGKILL at random moments loses no acknowledged write,
    /// and the file always opens.
    @Test func killedWriterLosesNoAcknowledgedWrite() async throws {
        let path = temporaryDatabasePath()
        let writer = try writerExecutable()
        var acknowledged: [String] = []
        for run in 0..<20 {
            let process = Process()
            process.executableURL = writer
            process.arguments = [path, "entries", "1000000", "run\(run)"]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            try await Task.sleep(nanoseconds: UInt64.random(in: 50_000_000...400_000_000))
            kill(process.processIdentifier, SIGKILL)
            waitForExit(process)
            let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            // A line without its newline was cut by the kill: it may or may not be acknowledged.
            acknowledged += printed.split(separator: "\n", omittingEmptySubsequences: true)
                .filter { printed.contains("\($0)\n") }.map(String.init)

            let store = try IdentityStore<Entry>(key: "entries", storage: SQLiteStorage(path: path))
            let stored = Set(store.ids)
            let lost = acknowledged.filter { !stored.contains($0) }
            #expect(lost.isEmpty, "run \(run): lost \(lost.prefix(5))")
        }
        #expect(acknowledged.count > 20, "the writer got to write before being killed")
    }
}
