import AmberSyncProtocol
import AmberSyncServer
import ArgumentParser
import Foundation
import Logging

/// `amber-sync serve`: serves the sync protocol until SIGINT or SIGTERM.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the sync protocol until SIGINT or SIGTERM; prints `listening on http://HOST:PORT` once ready."
    )

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one.")
    var port = 8080

    @OptionGroup var options: DatabaseOptions

    @OptionGroup(title: "Sign-in with the app's own JWTs") var jwt: JWTOptions

    @Option(name: .customLong("max-body"), help: "The largest request body accepted, in bytes.")
    var maximumBodySize = SyncLimits.defaultMaximumBody

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535.") }
        guard maximumBodySize > 0 else { throw ValidationError("--max-body must be a positive number of bytes.") }
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel =
                ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .info
            return handler
        }
        let logger = Logger(label: "amber-sync")
        // An IPv6 address needs brackets in a URL.
        let urlHost = host.contains(":") ? "[\(host)]" : host
        let jwtVerifier = try await jwt.makeVerifier(logger: logger)
        try await options.withDatabase(logger: logger) { database in
            let server = SyncServer(
                database: database,
                host: host,
                port: port,
                maximumBodySize: maximumBodySize,
                logger: logger,
                jwtVerifier: jwtVerifier
            )
            try await server.run { port in
                Output.line("listening on http://\(urlHost):\(port)")
            }
        }
    }
}
