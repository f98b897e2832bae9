import Foundation

/// `--token-command`: a shell command that prints a token, run through `/bin/sh` for each token
/// sync needs.
enum TokenCommand {
    /// Runs `command` and returns what it printed, less the whitespace at either end.
    ///
    /// - Throws: ``NotesError`` when the command fails or prints nothing.
    static func run(_ command: String) async throws -> String {
        try await Task.detached {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw NotesError("the token command exited with status \(process.terminationStatus)")
            }
            let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !token.isEmpty else { throw NotesError("the token command printed no token") }
            return token
        }.value
    }
}
