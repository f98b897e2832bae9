import ArgumentParser
import Foundation

/// What the commands print: lines on stdout written at once (no buffering, so a parent process
/// reading a pipe sees them), and failures as one line on stderr with exit status 1.
enum Output {
    /// Writes `text` and a newline to stdout, unbuffered.
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Runs `body`; an error it throws becomes one line on stderr and exit status 1.
    static func reportingFailure(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as ExitCode {
            throw error
        } catch {
            let sentence = "\(error)".replacingOccurrences(of: "\n", with: " ")
            FileHandle.standardError.write(Data("amber-sync: \(sentence)\n".utf8))
            throw ExitCode.failure
        }
    }
}
