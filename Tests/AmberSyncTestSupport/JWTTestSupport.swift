import AmberLock
import AmberTestSupport
import Foundation
import Hummingbird
import JWTKit
import Logging

/// The claims of a test token; absent ones are left out of the payload.
public struct TestClaims: JWTPayload {
    public var sub: String?
    public var exp: Date?
    public var nbf: Date?
    public var iss: String?
    public var aud: [String]?
    /// Further claims, such as a user claim of another name.
    public var extra: [String: String] = [:]

    public init(
        sub: String? = "ann", exp: Date? = Date().addingTimeInterval(3600), nbf: Date? = nil, iss: String? = nil,
        aud: [String]? = nil, extra: [String: String] = [:]
    ) {
        self.sub = sub
        self.exp = exp
        self.nbf = nbf
        self.iss = iss
        self.aud = aud
        self.extra = extra
    }

    public func verify(using algorithm: some JWTAlgorithm) throws {}

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        sub = try container.decodeIfPresent(String.self, forKey: Key(stringValue: "sub"))
        iss = try container.decodeIfPresent(String.self, forKey: Key(stringValue: "iss"))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encodeIfPresent(sub, forKey: Key(stringValue: "sub"))
        try container.encodeIfPresent(exp.map { Int($0.timeIntervalSince1970) }, forKey: Key(stringValue: "exp"))
        try container.encodeIfPresent(nbf.map { Int($0.timeIntervalSince1970) }, forKey: Key(stringValue: "nbf"))
        try container.encodeIfPresent(iss, forKey: Key(stringValue: "iss"))
        try container.encodeIfPresent(aud, forKey: Key(stringValue: "aud"))
        for (key, value) in extra {
            try container.encode(value, forKey: Key(stringValue: key))
        }
    }
}

/// A signing key of a test identity provider: it mints tokens with jwt-kit's own signers, and
/// tells its public key as a JWK and as PEM.
public struct TestSigningKey: Sendable {
    /// The algorithm it signs with, such as `RS256`.
    public let algorithm: String
    /// The `kid` it puts in tokens, or `nil` for none.
    public let kid: String?
    /// The public key as a JWK object (JSON), with the `kid`.
    public let jwk: String
    /// The public key in PEM, for `--jwt-key`; empty for an HMAC secret.
    public let publicPEM: String
    private let keys: JWTKeyCollection

    /// An RSA key (2048 bits, made by openssl): RS256/384/512 or PS256/384/512.
    public static func rsa(_ algorithm: String = "RS256", kid: String? = "rsa-1") async throws -> TestSigningKey {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
        let result = try runToEnd(process)
        let key = try Insecure.RSA.PrivateKey(pem: result.output)
        let keys = JWTKeyCollection()
        let digest: DigestAlgorithm =
            switch algorithm.suffix(3) {
            case "384": .sha384
            case "512": .sha512
            default: .sha256
            }
        if algorithm.hasPrefix("PS") {
            await keys.add(pss: key, digestAlgorithm: digest, kid: kid.map(JWKIdentifier.init(string:)))
        } else {
            await keys.add(rsa: key, digestAlgorithm: digest, kid: kid.map(JWKIdentifier.init(string:)))
        }
        let (modulus, exponent) = try key.publicKey.getKeyPrimitives()
        return TestSigningKey(
            algorithm: algorithm, kid: kid,
            jwk: jwkJSON(["kty": "RSA", "n": base64URL(modulus), "e": base64URL(exponent)], kid: kid),
            publicPEM: key.publicKey.pemRepresentation, keys: keys)
    }

    /// A P-256 key: ES256.
    public static func es256(kid: String? = "ec-1") async throws -> TestSigningKey {
        let key = ES256PrivateKey()
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: kid.map(JWKIdentifier.init(string:)))
        let parameters = try requireParameters(key.publicKey.parameters)
        return TestSigningKey(
            algorithm: "ES256", kid: kid,
            jwk: jwkJSON(["kty": "EC", "crv": "P-256", "x": parameters.x, "y": parameters.y], kid: kid),
            publicPEM: key.publicKey.pemRepresentation, keys: keys)
    }

    /// A P-384 key: ES384.
    public static func es384(kid: String? = "ec-384") async throws -> TestSigningKey {
        let key = ES384PrivateKey()
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: kid.map(JWKIdentifier.init(string:)))
        let parameters = try requireParameters(key.publicKey.parameters)
        return TestSigningKey(
            algorithm: "ES384", kid: kid,
            jwk: jwkJSON(["kty": "EC", "crv": "P-384", "x": parameters.x, "y": parameters.y], kid: kid),
            publicPEM: key.publicKey.pemRepresentation, keys: keys)
    }

    /// An Ed25519 key: EdDSA.
    public static func eddsa(kid: String? = "ed-1") async throws -> TestSigningKey {
        let key = try EdDSA.PrivateKey(curve: .ed25519)
        let keys = JWTKeyCollection()
        await keys.add(eddsa: key, kid: kid.map(JWKIdentifier.init(string:)))
        return TestSigningKey(
            algorithm: "EdDSA", kid: kid,
            jwk: jwkJSON(
                ["kty": "OKP", "crv": "Ed25519", "x": base64URL(key.publicKey.rawRepresentation)], kid: kid),
            publicPEM: key.publicKey.pemRepresentation, keys: keys)
    }

    /// An HMAC secret: HS256/384/512.
    public static func hmac(_ secret: String, algorithm: String = "HS256", kid: String? = nil) async
        -> TestSigningKey
    {
        let keys = JWTKeyCollection()
        let digest: DigestAlgorithm =
            switch algorithm.suffix(3) {
            case "384": .sha384
            case "512": .sha512
            default: .sha256
            }
        await keys.add(
            hmac: HMACKey(from: Data(secret.utf8)), digestAlgorithm: digest, kid: kid.map(JWKIdentifier.init(string:)))
        return TestSigningKey(algorithm: algorithm, kid: kid, jwk: "", publicPEM: "", keys: keys)
    }

    /// A token with `claims`, signed by this key.
    public func token(_ claims: TestClaims = TestClaims()) async throws -> String {
        try await keys.sign(claims, kid: kid.map(JWKIdentifier.init(string:)))
    }

    private static func jwkJSON(_ fields: [String: String], kid: String?) -> String {
        var fields = fields
        if let kid { fields["kid"] = kid }
        fields["use"] = "sig"
        let data = try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    private static func requireParameters(_ parameters: ECDSAParameters?) throws -> ECDSAParameters {
        guard let parameters else { throw TestJWTError("the key has no parameters") }
        return parameters
    }
}

/// A failure of the JWT test helpers.
public struct TestJWTError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Base64url without padding.
public func base64URL(_ data: Data) -> String {
    data.base64EncodedString()
        .replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// A JWKS document of the public keys of `keys`.
public func jwksDocument(_ keys: [TestSigningKey]) -> String {
    #"{"keys":["# + keys.map(\.jwk).joined(separator: ",") + "]}"
}

/// An identity provider's JWKS endpoint on loopback: `GET /jwks.json` answers the current
/// document, or `503` while ``available`` is false.
public final class TestJWKSServer: Sendable {
    private let state = LockedValue<(document: String, available: Bool, fetches: Int)>((#"{"keys":[]}"#, true, 0))
    private let serving: Task<Void, any Error>
    /// The port it listens on.
    public let port: Int
    /// The document's URL.
    public var url: String { "http://127.0.0.1:\(port)/jwks.json" }

    /// Starts serving `document`.
    public init(document: String, available: Bool = true) async throws {
        let state = self.state
        state.withLock {
            $0.document = document
            $0.available = available
        }
        let router = Router()
        router.get("/jwks.json") { _, _ -> Response in
            let (document, available) = state.withLock { state in
                state.fetches += 1
                return (state.document, state.available)
            }
            guard available else { return Response(status: .serviceUnavailable) }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: document)))
        }
        var logger = Logger(label: "jwks-test-server")
        logger.logLevel = .critical
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) },
            logger: logger)
        serving = Task { try await application.runService(gracefulShutdownSignals: []) }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw TestJWTError("the JWKS server did not start") }
        self.port = port
    }

    /// Publishes another document.
    public func publish(_ document: String) {
        state.withLock { $0.document = document }
    }

    /// Whether the endpoint answers (`200`) or fails (`503`).
    public func setAvailable(_ available: Bool) {
        state.withLock { $0.available = available }
    }

    /// How many times the document was asked for.
    public var fetches: Int {
        state.withLock { $0.fetches }
    }

    /// Stops serving.
    public func stop() {
        serving.cancel()
    }

    deinit {
        serving.cancel()
    }
}
