import AmberSyncServer
import ArgumentParser

/// `amber-sync token`: manages bearer tokens.
struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage bearer tokens.", subcommands: [Add.self, Revoke.self])

    /// `amber-sync token add NAME`: another token for an existing user.
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create another token for an existing user (a second device); prints it as the last line."
        )

        @Argument(help: "The user's name.")
        var name: String

        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            let token = try await options.withDatabase { try await $0.addToken(forUserNamed: name) }
            Output.line("added a token for \(name):")
            Output.line(token)
        }
    }

    /// `amber-sync token revoke TOKEN`: refuses a token from now on.
    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a token; running servers refuse it from their next request on."
        )

        @Argument(help: "The bearer token.")
        var token: String

        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            guard try await options.withDatabase({ try await $0.revokeToken(token) }) else {
                throw CommandFailure("There is no such token (it may have been revoked already).")
            }
            Output.line("revoked the token")
        }
    }
}
