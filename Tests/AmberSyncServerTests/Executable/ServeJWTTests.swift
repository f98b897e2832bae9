import AmberLock
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Testing

/// `amber-sync serve --jwks-url` as a child process, talked to over HTTP.
@Suite(.boundedConcurrency) struct ServeJWTTests {
    let executable = builtExecutable(named: "amber-sync")

    @Test func serveTakesJWTsOfAJWKSURLThatArrivesLateAndRotates() async throws {
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await TestSigningKey.rsa("RS256", kid: "first")
        let second = try await TestSigningKey.es256(kid: "second")
        let jwks = try await TestJWKSServer(document: jwksDocument([first]), available: false)
        defer { jwks.stop() }

        let add = Process()
        add.executableURL = executable
        add.arguments = ["user", "add", "ops"]
        add.currentDirectoryURL = directory
        let added = try await runToEndOnItsOwnThread(add)
        #expect(added.status == 0, "\(added.error)")
        let operatorToken = try #require(added.output.split(separator: "\n").last.map(String.init))

        let server = Process()
        server.executableURL = executable
        server.arguments = ["serve", "--port", "0", "--jwks-url", jwks.url, "--jwks-refresh", "1"]
        server.currentDirectoryURL = directory
        let output = Pipe()
        let printed = LockedValue(Data())
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            printed.withLock { $0.append(data) }
        }
        server.standardOutput = output
        let errors = Pipe()
        let logged = LockedValue(Data())
        errors.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            logged.withLock { $0.append(data) }
        }
        server.standardError = errors
        try server.run()
        defer { if server.isRunning { server.interrupt() } }

        // The JWKS is unreachable at start: the server starts anyway.
        let listening = await eventually(within: 30) {
            printed.withLock { String(decoding: $0, as: UTF8.self).contains("\n") }
        }
        try #require(listening, "serve printed nothing")
        let line = printed.withLock { String(decoding: $0, as: UTF8.self) }
        let match = try #require(line.firstMatch(of: /listening on http:\/\/127\.0\.0\.1:(\d+)/), "printed \(line)")
        let pull = URL(string: "http://127.0.0.1:\(match.1)/v1/pull")!

        let firstToken = try await first.token()
        let refused = try await httpRequest(pull, token: firstToken)
        #expect(refused.status == 503)
        #expect(try await httpRequest(pull, token: operatorToken).status == 200)

        // The keys arrive: JWTs are taken.
        jwks.setAvailable(true)
        #expect(await eventually(within: 20) { (try? await httpRequest(pull, token: firstToken).status) == 200 })

        // Rotation without a restart: the new key is taken, the removed one refused.
        jwks.publish(jwksDocument([second]))
        let secondToken = try await second.token()
        #expect(await eventually(within: 10) { (try? await httpRequest(pull, token: secondToken).status) == 200 })
        #expect(await eventually(within: 10) { (try? await httpRequest(pull, token: firstToken).status) == 401 })
        #expect(try await httpRequest(pull, token: operatorToken).status == 200)

        server.terminate()
        #expect(waitForExit(server, within: 20))
        output.fileHandleForReading.readabilityHandler = nil
        errors.fileHandleForReading.readabilityHandler = nil
        // The log says the keys were late, and never holds a token.
        let log = logged.withLock { String(decoding: $0, as: UTF8.self) }
        #expect(log.contains("Could not fetch the JWT keys"))
        #expect(!log.contains(firstToken) && !log.contains(secondToken) && !log.contains(operatorToken))
    }
}
