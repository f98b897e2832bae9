import Amber
import AmberLock
import AmberSync
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Logging
import Testing

/// A client whose app signs in with JWTs: the token provider, its refresh on 401, and
/// `notes sync --token-command`.
@Suite(.boundedConcurrency) struct SyncSignInTests {
    static let secret = "a-test-secret-of-more-than-64-bytes-for-hmac-with-sha-512-0123456789abcdef"

    static func verifier() async throws -> JWTVerifier {
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("secret")
        try secret.write(to: file, atomically: true, encoding: .utf8)
        var configuration = JWTConfiguration()
        configuration.secretFiles = [file.path]
        var logger = Logger(label: "amber-sync-test")
        logger.logLevel = .critical
        return try await JWTVerifier(configuration: configuration, logger: logger)
    }

    static func token(_ subject: String = "ann", expiresIn seconds: TimeInterval = 3600) async throws -> String {
        try await TestSigningKey.hmac(secret).token(TestClaims(sub: subject, exp: Date().addingTimeInterval(seconds)))
    }

    @Test(arguments: Backend.allCases)
    func theProviderIsAskedAgainWhenTheServerRefusesAnExpiredToken(backend: Backend) async throws {
        let server = try await TestServer.start(backend, over: .inProcess, jwtVerifier: try await Self.verifier())
        defer { Task { await server.stop() } }
        let calls = LockedValue(0)
        // The app's session: the first token it hands out has expired; a refresh gives a fresh one.
        let phone = try Device(server: server) {
            let call = calls.withLock { calls in
                calls += 1
                return calls
            }
            return try await Self.token(expiresIn: call == 1 ? -600 : 3600)
        }
        let written = note("signed in")
        try phone.notes.add(written)
        let report = try await phone.client.sync()
        #expect(report.pushed == 1)
        #expect(calls.withLock { $0 } == 2, "once for the first token, once after the 401")
        try await phone.client.sync()
        #expect(calls.withLock { $0 } == 2, "a token that works is kept")

        // Another device of the same subject, with a token of its own, sees the note.
        let laptop = try Device(server: server) { try await Self.token() }
        try await laptop.client.sync()
        #expect(laptop.notes[id: written.id] == written)
        // Another subject does not.
        let other = try Device(server: server) { try await Self.token("bob") }
        try await other.client.sync()
        #expect(other.notes.count == 0)
    }

    @Test(arguments: Backend.allCases)
    func aTokenAFreshOneDoesNotCureIsUnauthorizedAndStopsLiveSync(backend: Backend) async throws {
        let server = try await TestServer.start(backend, over: .inProcess, jwtVerifier: try await Self.verifier())
        defer { Task { await server.stop() } }
        let signedIn = LockedValue(false)
        let calls = LockedValue(0)
        let phone = try Device(server: server) {
            calls.withLock { $0 += 1 }
            // Signed out: the session hands out its expired token again and again.
            return try await Self.token(expiresIn: signedIn.withLock { $0 } ? 3600 : -600)
        }
        try phone.notes.add(note("kept pending"))
        let refused = await #expect(throws: SyncError.self) { try await phone.client.sync() }
        #expect(refused?.kind == .unauthorized)
        #expect(phone.client.pendingCount == 1)

        let events = Collected(phone.client.events())
        phone.client.start()
        let failed = await events.wait(for: 2, within: 20)
        #expect(failed.contains { if case .failed = $0 { true } else { false } })
        // Live sync stopped: the provider is not asked again, however long we wait.
        try await Task.sleep(for: .seconds(2))
        let settled = calls.withLock { $0 }
        try await Task.sleep(for: .seconds(3))
        #expect(calls.withLock { $0 } == settled)

        // The user signs in again and the app starts live sync again.
        signedIn.withLock { $0 = true }
        phone.client.start()
        #expect(await eventually(within: 20) { phone.client.pendingCount == 0 })
        await phone.client.stop()
        events.cancel()
    }

    @Test func notesSyncRunsTheTokenCommandForEachTokenItNeeds() async throws {
        let server = try await TestServer.start(.sqlite, jwtVerifier: try await Self.verifier())
        defer { Task { await server.stop() } }
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let expired = directory.appendingPathComponent("expired.jwt")
        let fresh = directory.appendingPathComponent("fresh.jwt")
        let calls = directory.appendingPathComponent("calls")
        try await Self.token(expiresIn: -600).write(to: expired, atomically: true, encoding: .utf8)
        try await Self.token().write(to: fresh, atomically: true, encoding: .utf8)
        // Prints the expired token the first time, a fresh one afterwards, and counts its runs.
        let command = """
            if [ -e '\(calls.path)' ]; then cat '\(fresh.path)'; else cat '\(expired.path)'; fi; echo run >> '\(calls.path)'
            """
        func runs() -> Int {
            ((try? String(contentsOf: calls, encoding: .utf8)) ?? "").split(separator: "\n").count
        }
        let home = directory.appendingPathComponent("home")
        func notes(_ arguments: String...) async throws -> ProcessResult {
            let process = Process()
            process.executableURL = builtExecutable(named: "notes")
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(["NOTES_HOME": home.path]) { $1 }
            return try await runToEndOnItsOwnThread(process)
        }
        #expect(try await notes("add", "from the command line").status == 0)
        let first = try await notes("sync", "--server", server.url.absoluteString, "--token-command", command)
        #expect(first.status == 0, "\(first.error)")
        #expect(first.output.contains("pushed 1"))
        #expect(runs() == 2, "the expired token, then a fresh one after the 401")
        // The command is remembered, and run again by the next sync.
        let second = try await notes("sync")
        #expect(second.status == 0, "\(second.error)")
        #expect(runs() == 3)
        #expect(try await notes("sync", "--token", "x", "--token-command", "true").error.contains("not both"))
        // A second home signed in as the same subject gets the note.
        let other = directory.appendingPathComponent("other")
        let process = Process()
        process.executableURL = builtExecutable(named: "notes")
        process.arguments = ["sync", "--server", server.url.absoluteString, "--token-command", "cat '\(fresh.path)'"]
        process.environment = ProcessInfo.processInfo.environment.merging(["NOTES_HOME": other.path]) { $1 }
        let synced = try await runToEndOnItsOwnThread(process)
        #expect(synced.status == 0, "\(synced.error)")
        #expect(synced.output.contains("pulled 1"))
    }
}
