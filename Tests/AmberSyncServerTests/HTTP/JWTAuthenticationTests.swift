import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// Sign-in with the app's own JWTs: keys from a JWKS on loopback, key files and secrets.
@Suite(.boundedConcurrency) struct JWTAuthenticationTests {
    static let secret = "a-test-secret-of-more-than-64-bytes-for-hmac-with-sha-512-0123456789abcdef"
    static let note = Mutation(
        mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: ["text": .string("hi")])

    static var quietLogger: Logger { .quietTests }

    /// A verifier of the keys published at `jwks` and of the secret; `configure` changes more.
    static func verifier(
        jwks: TestJWKSServer? = nil, keyFiles: [String] = [], secret: Bool = false,
        _ configure: (inout JWTConfiguration) -> Void = { _ in }
    ) async throws -> JWTVerifier {
        var configuration = JWTConfiguration()
        configuration.jwksURL = jwks.map { URL(string: $0.url)! }
        configuration.keyFiles = keyFiles
        if secret {
            let file = temporaryDirectory().appendingPathComponent("secret")
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try (Self.secret + "\n").write(to: file, atomically: true, encoding: .utf8)
            configuration.secretFiles = [file.path]
        }
        configure(&configuration)
        return try await JWTVerifier(configuration: configuration, logger: quietLogger)
    }

    static func write(_ text: String, name: String) throws -> String {
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent(name)
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    @Test(arguments: Backend.allCases)
    func everyAlgorithmIsAcceptedAndTheSubjectIsOneNamespace(backend: Backend) async throws {
        let keys = [
            try await TestSigningKey.rsa("RS256", kid: "rs256"), try await TestSigningKey.rsa("RS384", kid: "rs384"),
            try await TestSigningKey.rsa("RS512", kid: "rs512"), try await TestSigningKey.rsa("PS256", kid: "ps256"),
            try await TestSigningKey.rsa("PS384", kid: "ps384"), try await TestSigningKey.rsa("PS512", kid: "ps512"),
            try await TestSigningKey.es256(), try await TestSigningKey.es384(), try await TestSigningKey.eddsa(),
        ]
        let hmacKeys = [
            await TestSigningKey.hmac(Self.secret, algorithm: "HS256"),
            await TestSigningKey.hmac(Self.secret, algorithm: "HS384"),
            await TestSigningKey.hmac(Self.secret, algorithm: "HS512"),
        ]
        let jwks = try await TestJWKSServer(document: jwksDocument(keys))
        defer { jwks.stop() }
        let verifier = try await Self.verifier(jwks: jwks, secret: true)
        try await withHarness(backend, jwtVerifier: verifier) { harness in
            let first = try await keys[0].token()
            _ = try await harness.push([Self.note], token: first)
            for key in keys + hmacKeys {
                let token = try await key.token()
                let response = try await harness.send(.get, "/v1/pull?cursor=0", token: token)
                #expect(response.status == .ok, "\(key.algorithm): \(response.text)")
                // Every token of the subject, whatever its key, sees the same records.
                #expect(try response.decode(PullResponse.self).changes.map(\.id) == ["n"], "\(key.algorithm)")
            }
            // Another subject is another namespace; so is the operator's user of the same name.
            let bob = try await keys[0].token(TestClaims(sub: "bob"))
            #expect(try await harness.pull(token: bob).changes.isEmpty)
            let operatorAnn = try await harness.addUser("ann")
            #expect(try await harness.pull(token: operatorAnn).changes.isEmpty)
            // Operator tokens keep working beside JWTs.
            _ = try await harness.push([Self.note], token: operatorAnn)
            #expect(try await harness.pull(token: operatorAnn).changes.map(\.id) == ["n"])
            #expect(try await harness.pull(token: bob).changes.isEmpty)
        }
    }

    @Test(arguments: Backend.allCases)
    func everyRefusalIs401WithASentenceAndNoKeyMaterial(backend: Backend) async throws {
        let rsa = try await TestSigningKey.rsa("RS256", kid: "rs")
        let other = try await TestSigningKey.rsa("RS256", kid: "rs")
        let jwks = try await TestJWKSServer(document: jwksDocument([rsa]))
        defer { jwks.stop() }
        let verifier = try await Self.verifier(jwks: jwks) { configuration in
            configuration.issuer = "https://id.example.com/"
            configuration.audiences = ["notes", "notes-web"]
        }
        let good = TestClaims(iss: "https://id.example.com/", aud: ["notes"])
        @Sendable func with(_ change: (inout TestClaims) -> Void) -> TestClaims {
            var claims = good
            change(&claims)
            return claims
        }
        let valid = try await rsa.token(good)
        let parts = valid.split(separator: ".").map(String.init)
        let header = { (json: String) in base64URL(Data(json.utf8)) }
        // The classic confusion: HS256 keyed with the RSA public key, under the RSA key's kid.
        let confused = try await TestSigningKey.hmac(rsa.publicPEM, algorithm: "HS256", kid: "rs").token(good)
        let cases: [(token: String, says: String)] = [
            (header(#"{"alg":"none","kid":"rs"}"#) + "." + parts[1] + ".", "alg none"),
            (header(#"{"alg":"none"}"#) + "." + parts[1] + ".", "alg none"),
            (confused, "does not match its key"),
            (try await other.token(good), "signature does not verify"),
            (parts[0] + "." + base64URL(Data(#"{"sub":"eve"}"#.utf8)) + "." + parts[2], "signature does not verify"),
            (try await rsa.token(with { $0.sub = nil }), "no sub claim"),
            (try await rsa.token(with { $0.exp = Date().addingTimeInterval(-120) }), "expired"),
            (try await rsa.token(with { $0.nbf = Date().addingTimeInterval(120) }), "not valid before"),
            (try await rsa.token(with { $0.iss = "https://evil.example.com/" }), "issuer (iss)"),
            (try await rsa.token(with { $0.iss = nil }), "issuer (iss)"),
            (try await rsa.token(with { $0.aud = ["other"] }), "audience (aud)"),
            (try await rsa.token(with { $0.aud = nil }), "audience (aud)"),
            (try await TestSigningKey.rsa("RS256", kid: "unknown").token(good), "key id (kid)"),
            (try await TestSigningKey.rsa("RS256", kid: nil).token(good), "no key id (kid)"),
            ("eyJhbGciOiJSUzI1NiJ9.e30", "neither a known token nor a well-formed JWT"),
        ]
        try await withHarness(backend, jwtVerifier: verifier) { harness in
            #expect(try await harness.send(.get, "/v1/pull", token: valid).status == .ok)
            // Within the 60 s leeway, an expired token is still taken.
            let late = try await rsa.token(with { $0.exp = Date().addingTimeInterval(-30) })
            #expect(try await harness.send(.get, "/v1/pull", token: late).status == .ok)
            for (token, says) in cases {
                let response = try await harness.send(.get, "/v1/pull", token: token)
                #expect(response.status == .unauthorized, "\(says): \(response.text)")
                #expect(response.headers[.wwwAuthenticate] == "Bearer")
                let sentence = try response.errorBody().error
                #expect(sentence.contains(says), "expected “\(says)” in “\(sentence)”")
                for part in token.split(separator: ".") where part.count > 8 {
                    #expect(!sentence.contains(part), "the answer quotes the token")
                }
                #expect(!sentence.contains("BEGIN") && !sentence.contains(String(rsa.publicPEM.prefix(80).suffix(20))))
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func keyFilesTakeTokensWithoutAKidAndAnotherUserClaim(backend: Backend) async throws {
        let ec = try await TestSigningKey.es256(kid: nil)
        let ed = try await TestSigningKey.eddsa(kid: "ed")
        let rsa = try await TestSigningKey.rsa("PS256", kid: nil)
        let keyFiles = [
            try Self.write(ec.publicPEM, name: "ec.pem"), try Self.write(rsa.publicPEM, name: "rsa.pem"),
            try Self.write(jwksDocument([ed]), name: "keys.json"),
        ]
        let verifier = try await Self.verifier(keyFiles: keyFiles) { $0.userClaim = "user_id" }
        try await withHarness(backend, jwtVerifier: verifier) { harness in
            let claims = TestClaims(sub: "ignored", extra: ["user_id": "u-1"])
            for key in [ec, ed, rsa] {
                let response = try await harness.send(.get, "/v1/pull", token: try await key.token(claims))
                #expect(response.status == .ok, "\(key.algorithm): \(response.text)")
            }
            let noClaim = try await harness.send(.get, "/v1/pull", token: try await ec.token(TestClaims(sub: "x")))
            #expect(noClaim.status == .unauthorized)
            #expect(try noClaim.errorBody().error.contains("no user_id claim"))
            // An RSA key takes RS and PS algorithms, never HMAC keyed with its PEM.
            let confused = try await TestSigningKey.hmac(rsa.publicPEM, algorithm: "HS256").token(claims)
            #expect(try await harness.send(.get, "/v1/pull", token: confused).status == .unauthorized)
        }
    }

    @Test func badSettingsAreRefusedAtStart() async throws {
        await #expect(throws: SyncServerError.self) { _ = try await JWTVerifier(configuration: JWTConfiguration()) }
        let short = try Self.write("short", name: "secret")
        await #expect(throws: SyncServerError.self) {
            var configuration = JWTConfiguration()
            configuration.secretFiles = [short]
            _ = try await JWTVerifier(configuration: configuration)
        }
        let notAKey = try Self.write("hello", name: "key.pem")
        await #expect(throws: SyncServerError.self) {
            var configuration = JWTConfiguration()
            configuration.keyFiles = [notAKey]
            _ = try await JWTVerifier(configuration: configuration)
        }
        // Plain http only on loopback.
        await #expect(throws: SyncServerError.self) {
            var configuration = JWTConfiguration()
            configuration.jwksURL = URL(string: "http://id.example.com/jwks.json")
            _ = try await JWTVerifier(configuration: configuration)
        }
    }

    @Test(arguments: Backend.allCases)
    func keysNotYetFetchedAre503AndOperatorTokensWork(backend: Backend) async throws {
        let rsa = try await TestSigningKey.rsa()
        let jwks = try await TestJWKSServer(document: jwksDocument([rsa]), available: false)
        defer { jwks.stop() }
        let verifier = try await Self.verifier(jwks: jwks) { $0.unknownKIDRefetchInterval = .milliseconds(100) }
        try await withHarness(backend, jwtVerifier: verifier) { harness in
            let refreshing = Task { await verifier.refreshKeys() }
            defer { refreshing.cancel() }
            let operatorToken = try await harness.addUser("ops")
            let token = try await rsa.token()
            let refused = try await harness.send(.get, "/v1/pull", token: token)
            #expect(refused.status == .serviceUnavailable)
            #expect(try refused.errorBody().error.contains("not received its JWT keys"))
            #expect(try await harness.send(.get, "/v1/pull", token: operatorToken).status == .ok)
            jwks.setAvailable(true)
            let accepted = await eventually(within: 15) {
                (try? await harness.send(.get, "/v1/pull", token: token).status) == .ok
            }
            #expect(accepted)
        }
    }

    @Test(arguments: Backend.allCases)
    func rotatedKeysAreTakenAndRemovedOnesRefusedWithinARefresh(backend: Backend) async throws {
        let old = try await TestSigningKey.es256(kid: "old")
        let new = try await TestSigningKey.eddsa(kid: "new")
        let jwks = try await TestJWKSServer(document: jwksDocument([old]))
        defer { jwks.stop() }
        let verifier = try await Self.verifier(jwks: jwks) { $0.jwksRefreshInterval = .seconds(1) }
        try await withHarness(backend, jwtVerifier: verifier) { harness in
            let refreshing = Task { await verifier.refreshKeys() }
            defer { refreshing.cancel() }
            let oldToken = try await old.token()
            let newToken = try await new.token()
            #expect(
                await eventually(within: 10) {
                    (try? await harness.send(.get, "/v1/pull", token: oldToken).status) == .ok
                })
            jwks.publish(jwksDocument([old, new]))
            #expect(
                await eventually(within: 10) {
                    (try? await harness.send(.get, "/v1/pull", token: newToken).status) == .ok
                })
            jwks.publish(jwksDocument([new]))
            #expect(
                await eventually(within: 10) {
                    (try? await harness.send(.get, "/v1/pull", token: oldToken).status) == .unauthorized
                })
            #expect(try await harness.send(.get, "/v1/pull", token: newToken).status == .ok)
        }
    }

    @Test(arguments: Backend.allCases)
    func anUnknownKidFetchesTheKeysAgainAtMostOncePerInterval(backend: Backend) async throws {
        let old = try await TestSigningKey.es256(kid: "old")
        let new = try await TestSigningKey.es256(kid: "new")
        let jwks = try await TestJWKSServer(document: jwksDocument([old]))
        defer { jwks.stop() }
        let verifier = try await Self.verifier(jwks: jwks) { $0.unknownKIDRefetchInterval = .seconds(2) }
        try await withHarness(backend, jwtVerifier: verifier) { harness in
            #expect(try await harness.send(.get, "/v1/pull", token: try await old.token()).status == .ok)
            #expect(jwks.fetches == 1)
            jwks.publish(jwksDocument([old, new]))
            // Within the interval: no new fetch, the kid stays unknown.
            #expect(try await harness.send(.get, "/v1/pull", token: try await new.token()).status == .unauthorized)
            #expect(jwks.fetches == 1)
            try await Task.sleep(for: .milliseconds(2_100))
            #expect(try await harness.send(.get, "/v1/pull", token: try await new.token()).status == .ok)
            #expect(jwks.fetches == 2)
            let stranger = try await TestSigningKey.es256(kid: "stranger").token()
            #expect(try await harness.send(.get, "/v1/pull", token: stranger).status == .unauthorized)
            #expect(jwks.fetches == 2)
        }
    }

    @Test(arguments: Backend.allCases)
    func aPullHeldWhileItsTokenExpiresAnswers401(backend: Backend) async throws {
        let key = await TestSigningKey.hmac(Self.secret)
        let verifier = try await Self.verifier(secret: true)
        try await withHarness(backend, jwtVerifier: verifier) { harness in
            // exp is whole seconds: 9 to 10 s from now, room for a loaded machine to send the pull (a
            // pull that arrives after exp, within the leeway, is answered at once without waiting).
            let expiry = Date().addingTimeInterval(10)
            let shortLived = try await key.token(TestClaims(exp: expiry))
            let longLived = try await key.token(TestClaims(exp: Date().addingTimeInterval(3600)))
            let clock = ContinuousClock()
            let start = clock.now
            async let held = harness.send(.get, "/v1/pull?cursor=0&wait=30", token: shortLived)
            // A change written after the token expired is not answered to it.
            try await Task.sleep(until: start + .seconds(11), clock: clock)
            _ = try await harness.push([Self.note], token: longLived)
            let response = try await held
            #expect(response.status == .unauthorized, "\(response.text)")
            #expect(try response.errorBody().error.contains("expired while the pull waited"))
            #expect(start.duration(to: clock.now) < .seconds(25))
            #expect(try await harness.pull(token: longLived).changes.map(\.id) == ["n"])
        }
    }
}
