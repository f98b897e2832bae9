import ArgumentParser
import Foundation

/// `amber-sync`: runs the Amber sync server and manages its users and tokens.
@main
struct AmberSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "amber-sync",
        abstract: "The Amber sync server: serves protocol v1 over HTTP and manages its users and tokens.",
        subcommands: [Serve.self, User.self, Token.self, Prune.self]
    )

    /// Runs the chosen command; any failure, a usage mistake included, is one line on stderr and exit status 1.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            // `--help` and `--version` are not failures.
            if exitCode(for: error) == .success {
                exit(withError: error)
            }
            if !(error is ExitCode) {
                let sentence = message(for: error).split(whereSeparator: \.isNewline).joined(separator: " ")
                FileHandle.standardError.write(Data("amber-sync: \(sentence)\n".utf8))
            }
            exit(withError: ExitCode.failure)
        }
    }
}
