import AmberLock
import AmberSyncProtocol
import AmberTestSupport
import Foundation
import Testing

/// The built `amber-sync` executable, run as a user would.
@Suite(.boundedConcurrency) struct AmberSyncCommandTests {
    let executable = builtExecutable(named: "amber-sync")

    func run(_ arguments: [String], in directory: URL) throws -> ProcessResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        return try runToEnd(process)
    }

    @Test func userAddPrintsATokenAndServeAnswersUntilSIGTERM() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }

        // `--database` defaults to amber-sync.sqlite in the working directory.
        let added = try run(["user", "add", "ann"], in: directory)
        #expect(added.status == 0, "\(added.error)")
        let token = try #require(added.output.split(separator: "\n").last.map(String.init))
        #expect(token.count == 43)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("amber-sync.sqlite").path))

        let server = Process()
        server.executableURL = executable
        server.arguments = ["serve", "--port", "0"]
        server.currentDirectoryURL = directory
        let output = Pipe()
        let printed = LockedValue(Data())
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            printed.withLock { $0.append(data) }
        }
        server.standardOutput = output
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { if server.isRunning { server.interrupt() } }

        let listening = await eventually(within: 30) {
            printed.withLock { String(decoding: $0, as: UTF8.self).contains("\n") }
        }
        try #require(listening, "serve printed nothing")
        let line =
            printed.withLock { String(decoding: $0, as: UTF8.self) }.split(separator: "\n").first.map(String.init) ?? ""
        let match = try #require(line.wholeMatch(of: /listening on http:\/\/127\.0\.0\.1:(\d+)/), "printed \(line)")
        let port = try #require(Int(match.1))
        #expect(port > 0)

        let health = try await httpRequest(URL(string: "http://127.0.0.1:\(port)/v1/health")!)
        #expect(health.status == 200)
        #expect(try JSONDecoder().decode(HealthResponse.self, from: health.body).status == "ok")
        // The protocol's document, without a token, as committed.
        let document = try await httpRequest(URL(string: "http://127.0.0.1:\(port)/v1/openapi.json")!)
        #expect(document.status == 200)
        #expect(document.body == (try OpenAPIDocumentTests.committedDocument()))
        #expect(try await httpRequest(URL(string: "http://127.0.0.1:\(port)/v1/pull")!, token: token).status == 200)

        // A token added and one revoked by other processes while the server runs take effect at once.
        let added2 = try run(["token", "add", "ann"], in: directory)
        #expect(added2.status == 0, "\(added2.error)")
        let laptop = try #require(added2.output.split(separator: "\n").last.map(String.init))
        #expect(try await httpRequest(URL(string: "http://127.0.0.1:\(port)/v1/pull")!, token: laptop).status == 200)
        let revoked = try run(["token", "revoke", laptop], in: directory)
        #expect(revoked.status == 0, "\(revoked.error)")
        #expect(try await httpRequest(URL(string: "http://127.0.0.1:\(port)/v1/pull")!, token: laptop).status == 401)

        // SIGTERM: a pull waiting in flight is answered, then the process exits 0.
        async let waiting = httpRequest(URL(string: "http://127.0.0.1:\(port)/v1/pull?wait=30")!, token: token)
        try await Task.sleep(for: .seconds(1))
        server.terminate()
        let answered = try await waiting
        #expect(answered.status == 200)
        let exited = await eventually(within: 20) { !server.isRunning }
        try #require(exited, "serve did not exit after SIGTERM")
        #expect(server.terminationReason == .exit)
        #expect(server.terminationStatus == 0)
        output.fileHandleForReading.readabilityHandler = nil
    }

    @Test func failuresAreOneLineOnStderrWithExitStatus1() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("custom.sqlite").path

        let first = try run(["user", "add", "ann", "--database", database], in: directory)
        #expect(first.status == 0)
        for arguments in [
            ["user", "add", "ann", "--database", database],
            ["token", "add", "nobody", "--database", database],
            ["token", "revoke", "not-a-token", "--database", database],
        ] {
            let result = try run(arguments, in: directory)
            #expect(result.status == 1, "\(arguments)")
            let lines = result.error.split(separator: "\n")
            #expect(lines.count == 1, "\(arguments): \(result.error)")
        }

        let text = directory.appendingPathComponent("text.txt")
        try Data("hello".utf8).write(to: text)
        let notADatabase = try run(["serve", "--port", "0", "--database", text.path], in: directory)
        #expect(notADatabase.status == 1)
        #expect(notADatabase.error.split(separator: "\n").count == 1, "\(notADatabase.error)")
        #expect(notADatabase.output.isEmpty)
    }

    @Test func pruneForgetsOldDeletions() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try run(["user", "add", "ann"], in: directory)
        let pruned = try run(["prune", "--older-than", "30"], in: directory)
        #expect(pruned.status == 0, "\(pruned.error)")
        #expect(pruned.output == "forgot 0 deleted records\n")
    }

    @Test(.enabled(if: PostgresTestServer.isWanted, "PostgreSQL is not installed"))
    func everyCommandWorksOnPostgreSQLAndItsFailuresAreOneLine() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (url, drop) = try PostgresTestServer.makeDatabase()
        defer { drop() }

        let added = try run(["user", "add", "ann", "--database", url], in: directory)
        #expect(added.status == 0, "\(added.error)")
        #expect(added.output.split(separator: "\n").last?.count == 43)
        let laptop = try run(["token", "add", "ann", "--database", url], in: directory)
        #expect(laptop.status == 0, "\(laptop.error)")
        let token = try #require(laptop.output.split(separator: "\n").last.map(String.init))
        #expect(try run(["token", "revoke", token, "--database", url], in: directory).status == 0)
        let pruned = try run(["prune", "--older-than", "1", "--database", url], in: directory)
        #expect(pruned.output == "forgot 0 deleted records\n", "\(pruned.error)")
        #expect(try PostgresTestServer.psql(url, "SELECT count(*) FROM amber_sync_tokens") == "1")

        // A schema newer than any this build knows.
        try PostgresTestServer.psql(url, "UPDATE amber_sync_schema SET version = 99")
        for (arguments, says) in [
            (["user", "add", "ann", "--database", url], "newer"),
            (["serve", "--port", "0", "--database", url], "newer"),
            (["serve", "--port", "0", "--database", "postgres://amber@127.0.0.1:1/sync"], "unavailable"),
            (["serve", "--port", "0", "--database", "postgres://127.0.0.1/sync"], "no user"),
        ] {
            let result = try run(arguments, in: directory)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.error.split(separator: "\n").count == 1, "\(arguments): \(result.error)")
            #expect(result.error.contains(says), "\(arguments): \(result.error)")
            #expect(result.output.isEmpty, "\(arguments)")
        }
        #expect(try PostgresTestServer.psql(url, "SELECT version FROM amber_sync_schema") == "99")
    }
}
