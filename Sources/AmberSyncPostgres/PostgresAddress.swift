import AmberSyncServer
import Foundation
import PostgresNIO

/// A `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…]` address, checked.
struct PostgresAddress: Sendable {
    var host: String
    var port: Int
    var username: String
    var password: String?
    var database: String
    /// `disable`, `prefer` (the default) or `require`.
    var sslMode: String

    /// Parses `url`.
    ///
    /// - Throws: ``SyncServerError/invalidDatabaseURL(_:reason:)`` naming what is missing or wrong.
    init(_ url: String) throws {
        func invalid(_ reason: String) -> SyncServerError {
            .invalidDatabaseURL(Self.redact(url), reason: reason)
        }
        guard let components = URLComponents(string: url),
            let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme)
        else {
            throw invalid("expected postgres://USER@HOST:PORT/DATABASE")
        }
        guard let host = components.host, !host.isEmpty else { throw invalid("it names no host") }
        guard let username = components.user, !username.isEmpty else { throw invalid("it names no user") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else { throw invalid("it names no database after the host") }
        let sslMode = components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "prefer"
        guard ["disable", "prefer", "require"].contains(sslMode) else {
            throw invalid("sslmode must be disable, prefer or require")
        }
        let unknown = (components.queryItems ?? []).map(\.name).filter { $0 != "sslmode" }
        guard unknown.isEmpty else { throw invalid("unknown option \(unknown.joined(separator: ", "))") }
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        port = components.port ?? 5432
        self.username = username.removingPercentEncoding ?? username
        password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database.removingPercentEncoding ?? database
        self.sslMode = sslMode
    }

    /// The address with its password replaced by `***`, for messages and logs.
    var redacted: String {
        "postgres://\(username)\(password == nil ? "" : ":***")@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)"
    }

    /// `url` with any password replaced, for an address that did not parse.
    static func redact(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? url
    }

    /// TLS for the query connections.
    var clientTLS: PostgresClient.Configuration.TLS {
        switch sslMode {
        case "disable": .disable
        case "require": .require(.makeClientConfiguration())
        default: .prefer(.makeClientConfiguration())
        }
    }
}
