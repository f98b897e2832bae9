import ArgumentParser

/// `amber-sync`: runs the Amber sync server and manages its users and tokens.
@main
struct AmberSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "amber-sync",
        abstract: "The Amber sync server: serves protocol v1 over HTTP and manages its users and tokens.",
        subcommands: [Serve.self, User.self, Token.self, Prune.self]
    )
}
