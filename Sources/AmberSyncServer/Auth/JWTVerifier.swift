import Foundation
import JWTKit
import Logging

/// Verifies the app's own JWTs for the sync server: signature, algorithm, `exp`, `nbf`, `iss`,
/// `aud` and the user claim, with the keys of a ``JWTConfiguration``.
///
/// Signatures are checked with jwt-kit's algorithms: RS256/384/512, PS256/384/512, ES256/384/512,
/// EdDSA, and HS256/384/512 with a secret. A token's `kid` picks its key; a token without one, or
/// with a `kid` no key has, is checked against the keys of key and secret files that have no `kid`. A refusal is a ``SyncServerError`` whose
/// sentence says what is wrong, never quoting the token or a key.
///
/// ```swift
/// let verifier = try await JWTVerifier(configuration: configuration)
/// let token = try await verifier.verify(jwt)   // token.subject names the user
/// ```
public final class JWTVerifier: Sendable {
    /// What the verifier was made from.
    public let configuration: JWTConfiguration
    /// The keys of key and secret files.
    let fileKeys: [VerificationKey]
    /// The keys of the JWKS URL, when there is one.
    let jwks: JWKSSource?

    /// Reads the key and secret files; the JWKS URL is fetched when the server starts.
    ///
    /// - Parameters:
    ///   - configuration: Where the keys are and what tokens must say.
    ///   - logger: Where fetches of the JWKS document are logged.
    /// - Throws: ``SyncServerError/invalidJWTConfiguration(_:)`` when no keys are configured, a
    ///   file cannot be read or holds no usable key, a secret is shorter than 32 bytes, or the
    ///   JWKS URL is neither `https` nor on loopback.
    public init(configuration: JWTConfiguration, logger: Logger = Logger(label: "amber-sync")) async throws {
        guard configuration.hasKeys else {
            throw SyncServerError.invalidJWTConfiguration("no keys: give a JWKS URL, a key file or a secret file")
        }
        guard !configuration.userClaim.isEmpty else {
            throw SyncServerError.invalidJWTConfiguration("the user claim has no name")
        }
        var keys: [VerificationKey] = []
        for path in configuration.keyFiles {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw SyncServerError.invalidJWTConfiguration("the key file \(path) cannot be read")
            }
            let text = String(decoding: data, as: UTF8.self)
            do {
                if text.contains("-----BEGIN") {
                    keys.append(try await VerificationKey.pem(text))
                } else {
                    let found = try await VerificationKey.jwks(data)
                    guard !found.keys.isEmpty else { throw KeyError("it holds no signing key") }
                    keys += found.keys
                }
            } catch {
                throw SyncServerError.invalidJWTConfiguration("the key file \(path) cannot be used: \(error)")
            }
        }
        for path in configuration.secretFiles {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw SyncServerError.invalidJWTConfiguration("the secret file \(path) cannot be read")
            }
            let secret = Data(
                String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).utf8)
            guard secret.count >= 32 else {
                throw SyncServerError.invalidJWTConfiguration(
                    "the secret in \(path) has \(secret.count) bytes; an HMAC secret needs at least 32")
            }
            keys.append(await VerificationKey.hmac(secret: secret))
        }
        self.configuration = configuration
        self.fileKeys = keys
        do {
            self.jwks = try configuration.jwksURL.map {
                try JWKSSource(
                    url: $0, refreshInterval: configuration.jwksRefreshInterval,
                    unknownKIDInterval: configuration.unknownKIDRefetchInterval, logger: logger)
            }
        } catch {
            throw SyncServerError.invalidJWTConfiguration("\(error)")
        }
    }

    /// Fetches the JWKS document until the calling task is cancelled: at once, then every refresh
    /// interval. Returns at once when there is no JWKS URL. ``SyncServer/run(onListening:)`` runs it.
    public func refreshKeys() async {
        await jwks?.run()
    }

    /// Whether a bearer token is meant as a JWT rather than an operator token: operator tokens
    /// are base64url and never hold a dot.
    static func looksLikeJWT(_ token: String) -> Bool {
        token.utf8.contains(UInt8(ascii: "."))
    }

    /// Verifies a JWT and returns what it says.
    ///
    /// - Parameters:
    ///   - token: The token, as sent after `Bearer`.
    ///   - now: The time to check `exp` and `nbf` against.
    /// - Returns: The subject, the issuer and the expiry.
    /// - Throws: ``SyncServerError/invalidToken(_:)`` (401) saying what is wrong, or
    ///   ``SyncServerError/authenticationUnavailable(_:)`` (503) while the JWKS document has not
    ///   arrived.
    public func verify(_ token: String, now: Date = Date()) async throws -> VerifiedToken {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Self.base64URLDecode(parts[0]),
            let header = try? JSONDecoder().decode([String: Claim].self, from: headerData)
        else {
            throw SyncServerError.invalidToken("The bearer token is neither a known token nor a well-formed JWT.")
        }
        guard let algorithm = header["alg"]?.string else {
            throw SyncServerError.invalidToken("The token's header names no algorithm (alg).")
        }
        guard algorithm.lowercased() != "none" else {
            throw SyncServerError.invalidToken("The token is unsigned (alg none); only signed tokens are accepted.")
        }
        guard VerificationKey.supportedAlgorithms.contains(algorithm) else {
            throw SyncServerError.invalidToken("The token's algorithm \(Self.quoted(algorithm)) is not supported.")
        }
        let candidates = try await keys(for: header["kid"]?.string)
        let verifiers = candidates.compactMap { $0.algorithms[algorithm] }
        guard !verifiers.isEmpty else {
            let taken = Set(candidates.flatMap(\.algorithms.keys)).sorted().joined(separator: ", ")
            throw SyncServerError.invalidToken(
                "The token's algorithm \(algorithm) does not match its key, which takes \(taken).")
        }
        guard let signature = Self.base64URLDecode(parts[2]) else {
            throw SyncServerError.invalidToken("The token's signature is not base64url.")
        }
        let signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard verifiers.contains(where: { (try? $0.verify(signature, signs: signingInput)) == true }) else {
            throw SyncServerError.invalidToken("The token's signature does not verify with the server's keys.")
        }
        guard let payloadData = Self.base64URLDecode(parts[1]),
            let claims = try? JSONDecoder().decode([String: Claim].self, from: payloadData)
        else {
            throw SyncServerError.invalidToken("The token's payload is not a JSON object.")
        }
        return try check(claims, now: now)
    }

    /// The keys a token with `kid` may be signed with.
    private func keys(for kid: String?) async throws -> [VerificationKey] {
        guard let kid else {
            guard !fileKeys.isEmpty else {
                throw SyncServerError.invalidToken(
                    "The token has no key id (kid); this server's keys come from a JWKS and are chosen by kid.")
            }
            return fileKeys
        }
        var found = fileKeys.filter { $0.kid == kid }
        if let jwks {
            var published = await jwks.currentKeys()
            if published == nil {
                // Not fetched yet: try again now (at most once per unknown-kid interval).
                await jwks.refreshForUnknownKID()
                published = await jwks.currentKeys()
            }
            guard let published else {
                if !found.isEmpty { return found }
                throw SyncServerError.authenticationUnavailable(
                    "The server has not received its JWT keys yet; try again shortly.")
            }
            found += published.filter { $0.kid == kid }
            if found.isEmpty {
                await jwks.refreshForUnknownKID()
                found += (await jwks.currentKeys() ?? []).filter { $0.kid == kid }
            }
        }
        // A key or secret file without a kid takes tokens of any kid.
        if found.isEmpty { found = fileKeys.filter { $0.kid == nil } }
        guard !found.isEmpty else {
            throw SyncServerError.invalidToken(
                "No key of this server has the token's key id (kid) \(Self.quoted(kid)).")
        }
        return found
    }

    /// Checks the claims of a token whose signature verified.
    private func check(_ claims: [String: Claim], now: Date) throws -> VerifiedToken {
        let leeway = TimeInterval(configuration.leeway.components.seconds)
        let expiry = try Self.date(claims["exp"], claim: "exp")
        if let expiry, now.timeIntervalSince(expiry) > leeway {
            throw SyncServerError.invalidToken(
                "The token expired at \(Self.format(expiry)); get a fresh one from the identity provider.")
        }
        if let notBefore = try Self.date(claims["nbf"], claim: "nbf"), notBefore.timeIntervalSince(now) > leeway {
            throw SyncServerError.invalidToken("The token is not valid before \(Self.format(notBefore)) (nbf).")
        }
        let issuer = claims["iss"]?.string ?? ""
        if let expected = configuration.issuer, issuer != expected {
            throw SyncServerError.invalidToken(
                "The token's issuer (iss) is not \(Self.quoted(expected)), the one this server accepts.")
        }
        if !configuration.audiences.isEmpty {
            let audiences: [String] =
                switch claims["aud"] {
                case .string(let one): [one]
                case .array(let many): many.compactMap(\.string)
                default: []
                }
            guard audiences.contains(where: configuration.audiences.contains) else {
                throw SyncServerError.invalidToken(
                    "The token's audience (aud) does not include \(configuration.audiences.map(Self.quoted).joined(separator: " or "))."
                )
            }
        }
        let claim = configuration.userClaim
        let subject: String? =
            switch claims[claim] {
            case .string(let string): string
            case .number(let number) where number == number.rounded() && abs(number) < 1e15: String(Int64(number))
            default: nil
            }
        guard let subject, !subject.isEmpty else {
            throw SyncServerError.invalidToken("The token has no \(claim) claim naming the user.")
        }
        guard subject.utf8.count <= SyncUserName.maximumLength, issuer.utf8.count <= 1024,
            !(subject + issuer).unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw SyncServerError.invalidToken(
                "The token's \(claim) or iss claim is too long or holds control characters.")
        }
        return VerifiedToken(subject: subject, issuer: issuer, expiry: expiry)
    }

    /// A NumericDate claim (seconds since 1970), or `nil` when absent.
    private static func date(_ value: Claim?, claim: String) throws -> Date? {
        guard let value else { return nil }
        guard case .number(let seconds) = value else {
            throw SyncServerError.invalidToken("The token's \(claim) claim is not a number of seconds.")
        }
        return Date(timeIntervalSince1970: seconds)
    }

    private static func format(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }

    /// A value from a token or the configuration in a sentence: quoted, and cut when long.
    private static func quoted(_ value: String) -> String {
        "\"\(value.count > 64 ? value.prefix(64) + "…" : Substring(value))\""
    }

    static func base64URLDecode(_ part: Substring) -> Data? {
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !text.contains("=") else { return nil }
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        return Data(base64Encoded: text)
    }
}

/// One claim's JSON value.
enum Claim: Decodable, Sendable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case array([Claim])
    case object([String: Claim])
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([Claim].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: Claim].self))
        }
    }

    /// The value when it is a string.
    var string: String? {
        if case .string(let value) = self { value } else { nil }
    }
}
