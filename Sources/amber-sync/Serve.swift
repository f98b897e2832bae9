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

    @Option(
        name: .customLong("max-pull-bytes"),
        help: "The most bytes of record values in one pull answer (at least one record is sent).")
    var maximumPullBytes = SyncServerLimits().maximumPullBytes

    @Option(
        name: .customLong("idle-timeout"),
        help:
            "Seconds a connection may stay silent while sending a request, or between requests, before it is closed.")
    var idleTimeout = Self.seconds(SyncServerLimits().idleTimeout)

    @Option(name: .customLong("max-connections"), help: "The most connections open at once; more get 503.")
    var maximumConnections = SyncServerLimits().maximumConnections

    @Option(
        name: .customLong("max-waiting-pulls"),
        help: "The most pulls held waiting for a change at once, all users together; more get 429.")
    var maximumWaitingPulls = SyncServerLimits().maximumWaitingPulls

    @Option(
        name: .customLong("max-waiting-pulls-per-user"),
        help: "The most pulls of one user held waiting for a change at once; more get 429.")
    var maximumWaitingPullsPerUser = SyncServerLimits().maximumWaitingPullsPerUser

    @Option(
        name: .customLong("max-attachment"),
        help: "The largest attachment accepted, in bytes; larger ones get 413.")
    var maximumAttachmentSize = SyncServerLimits().maximumAttachmentSize

    @Option(
        name: .customLong("attachment-quota"),
        help:
            "The most bytes of attachments one user keeps, all together; uploads past it get 413. No quota unless given."
    )
    var attachmentQuota: Int64?

    func validate() throws {
        guard maximumAttachmentSize > 0 else {
            throw ValidationError("--max-attachment must be a positive number of bytes.")
        }
        if let attachmentQuota, attachmentQuota < 0 {
            throw ValidationError("--attachment-quota must be 0 or more bytes.")
        }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535.") }
        guard maximumBodySize > 0 else { throw ValidationError("--max-body must be a positive number of bytes.") }
        guard maximumPullBytes > 0 else {
            throw ValidationError("--max-pull-bytes must be a positive number of bytes.")
        }
        guard idleTimeout > 0, idleTimeout.isFinite else {
            throw ValidationError("--idle-timeout must be a positive number of seconds.")
        }
        for (value, name) in [
            (maximumConnections, "--max-connections"), (maximumWaitingPulls, "--max-waiting-pulls"),
            (maximumWaitingPullsPerUser, "--max-waiting-pulls-per-user"),
        ] where value < 1 {
            throw ValidationError("\(name) must be at least 1.")
        }
    }

    /// The limits the options ask for.
    var limits: SyncServerLimits {
        var limits = SyncServerLimits()
        limits.idleTimeout = .milliseconds(Int64(idleTimeout * 1_000))
        limits.maximumConnections = maximumConnections
        limits.maximumWaitingPulls = maximumWaitingPulls
        limits.maximumWaitingPullsPerUser = maximumWaitingPullsPerUser
        limits.maximumPullBytes = maximumPullBytes
        limits.maximumAttachmentSize = maximumAttachmentSize
        limits.attachmentQuota = attachmentQuota
        return limits
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
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
                limits: limits,
                jwtVerifier: jwtVerifier
            )
            try await server.run { port in
                Output.line("listening on http://\(urlHost):\(port)")
            }
        }
    }
}
