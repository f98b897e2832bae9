import AmberSyncServer
import ArgumentParser

/// `amber-sync user`: manages users.
struct User: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage users.", subcommands: [Add.self])

    /// `amber-sync user add NAME`: creates a user and prints its first token.
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a user; prints its bearer token as the last line."
        )

        @Argument(help: "The user's name, unique on this server.")
        var name: String

        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            let token = try await options.withDatabase { try await $0.addUser(named: name) }
            Output.line("added user \(name); bearer token:")
            Output.line(token)
        }
    }
}
