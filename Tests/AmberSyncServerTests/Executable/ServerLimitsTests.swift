import AmberLock
import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Testing

/// `amber-sync serve` as a child process, spoken to over raw sockets and real HTTP: what it
/// does with slow, broken, greedy and revoked clients, and with a database that goes away.
@Suite(.boundedConcurrency) struct ServerLimitsTests {
    /// A server on a fresh SQLite database with one user, `ann`; `body` gets the server and her token.
    func withServer(
        _ backend: Backend = .sqlite, arguments: [String] = [],
        _ body: (ServeProcess, String, TestDatabase) async throws -> Void
    ) async throws {
        try await backend.withDatabase { test in
            let token = try await test.database.addUser(named: "ann")
            let server = try await ServeProcess(database: try #require(test.location), arguments: arguments)
            defer { server.stop() }
            try await body(server, token, test)
        }
    }

    /// A server on a SQLite database made by `amber-sync user add ann`, as an operator makes one;
    /// `body` gets the server, Ann's token, and a way to add more users the same way.
    func withCommandLineServer(
        arguments: [String] = [],
        _ body: (ServeProcess, String, (String) async throws -> String) async throws -> Void
    ) async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("sync.sqlite").path
        @Sendable func addUser(_ name: String) async throws -> String {
            let process = Process()
            process.executableURL = builtExecutable(named: "amber-sync")
            process.arguments = ["user", "add", name, "--database", database]
            let result = try await runToEndOnItsOwnThread(process)
            try #require(result.status == 0, "user add \(name): \(result.error)")
            return try #require(result.output.split(separator: "\n").last.map(String.init))
        }
        let token = try await addUser("ann")
        let server = try await ServeProcess(database: database, arguments: arguments)
        defer { server.stop() }
        try await body(server, token, addUser)
    }

    @Test func httpErrorsAreAnsweredWithAnErrorBody() async throws {
        try await withServer { server, _, _ in
            let requests: [(String, [UInt8])] = [
                ("a garbage request line", Array("GARBAGE\r\n\r\n".utf8)),
                (
                    "a 200 kB header",
                    Array(
                        "GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 200_000))\r\n\r\n"
                            .utf8)
                ),
                (
                    "a negative Content-Length",
                    Array("POST /v1/push HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n".utf8)
                ),
                (
                    "a doubled Content-Length",
                    Array("POST /v1/push HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}".utf8)
                ),
            ]
            for (name, bytes) in requests {
                let connection = try RawConnection(port: server.port)
                try? await connection.send(bytes)
                let (data, closed) = await connection.receiveUntilClosed(timeout: 10)
                let response = try #require(RawResponse(data), "\(name): no answer")
                #expect(response.status == 400, "\(name)")
                #expect(response.headers["content-type"] == "application/json", "\(name)")
                let sentence = try #require(response.errorSentence, "\(name): body \(response.body)")
                #expect(sentence.contains("not valid HTTP"), "\(name): \(sentence)")
                #expect(closed, "\(name): the connection stayed open")
            }
        }
    }

    @Test func silentConnectionsAreClosedAfterTheIdleTimeout() async throws {
        try await withServer(arguments: ["--idle-timeout", "1"]) { server, token, _ in
            let sends: [(String, String)] = [
                ("nothing sent", ""),
                ("half the headers", "GET /v1/pull HTTP/1.1\r\nHost: x\r\nAuthor"),
                (
                    "half the body",
                    "POST /v1/push HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nContent-Length: 100\r\n\r\n{\"clientID\""
                ),
                ("idle after a request", "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"),
            ]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (name, text) in sends {
                    group.addTask {
                        let connection = try RawConnection(port: server.port)
                        let start = Date()
                        if !text.isEmpty { try await connection.send(text) }
                        let (_, closed) = await connection.receiveUntilClosed(timeout: 8)
                        #expect(closed, "\(name): still open after 8 s")
                        #expect(Date().timeIntervalSince(start) >= 0.9, "\(name): closed too soon")
                    }
                }
                try await group.waitForAll()
            }
            // A pull held waiting is not idle: it gets its answer.
            let held = try RawConnection(port: server.port)
            try await held.send("GET /v1/pull?wait=3 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n")
            let start = Date()
            let received = await held.receiveUntilClosed(timeout: 6).data
            #expect(RawResponse(received)?.status == 200)
            #expect(Date().timeIntervalSince(start) >= 2.5)
        }
    }

    @Test func connectionsPastTheCapAreAnswered503() async throws {
        try await withServer(arguments: ["--max-connections", "2"]) { server, _, _ in
            var first: RawConnection? = try RawConnection(port: server.port)
            let second = try RawConnection(port: server.port)
            try await first?.send("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
            try await second.send("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(RawResponse(await first?.receiveUntilClosed(timeout: 1).data ?? Data())?.status == 200)
            #expect(RawResponse(await second.receiveUntilClosed(timeout: 1).data)?.status == 200)

            var third: RawConnection? = try RawConnection(port: server.port)
            try await third?.send("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
            let (data, closed) = await third?.receiveUntilClosed(timeout: 10) ?? (Data(), false)
            let response = try #require(RawResponse(data))
            #expect(response.status == 503)
            #expect(response.headers["retry-after"] != nil)
            #expect(response.errorSentence?.contains("too many connections") == true)
            #expect(closed)

            // Once two close, a new connection is served again.
            first = nil
            third = nil
            let served = await eventually(within: 10) {
                guard let again = try? RawConnection(port: server.port) else { return false }
                try? await again.send("GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                return RawResponse(await again.receiveUntilClosed(timeout: 2).data)?.status == 200
            }
            #expect(served)
            withExtendedLifetime(second) {}
        }
    }

    @Test func waitingPullsAreCappedPerUserAndInAll() async throws {
        try await withServer(arguments: ["--max-waiting-pulls-per-user", "2", "--max-waiting-pulls", "3"]) {
            server, token, test in
            let bob = try await test.database.addUser(named: "bob")
            let carol = try await test.database.addUser(named: "carol")
            func hold(_ token: String) async throws -> RawConnection {
                try await holdPull(on: server, token: token)
            }
            let held = [try await hold(token), try await hold(token)]
            try await Task.sleep(for: .milliseconds(500))
            // Ann's third waiting pull is refused at once; Bob's is held.
            let refused = try await hold(token)
            let answer = try #require(RawResponse(await refused.receiveUntilClosed(timeout: 5).data), "no answer")
            #expect(answer.status == 429)
            #expect(answer.headers["retry-after"] != nil)
            #expect(answer.errorSentence?.contains("2 pulls waiting") == true, "\(answer.errorSentence ?? "")")
            let bobs = try await hold(bob)
            try await Task.sleep(for: .milliseconds(500))
            #expect(RawResponse(await bobs.receiveUntilClosed(timeout: 0.5).data) == nil, "Bob's pull was not held")
            // The server holds three in all: Carol's is refused.
            let carols = try await hold(carol)
            let full = try #require(RawResponse(await carols.receiveUntilClosed(timeout: 5).data), "no answer")
            #expect(full.status == 429)
            #expect(full.errorSentence?.contains("3 pulls") == true, "\(full.errorSentence ?? "")")
            // A pull without `wait` is never refused.
            let quick = try await httpRequest(server.url("/v1/pull"), token: token)
            #expect(quick.status == 200)
            withExtendedLifetime(held) {}
        }
    }

    /// Opens a connection and sends a pull that waits up to 30 s for a change.
    func holdPull(on server: ServeProcess, token: String) async throws -> RawConnection {
        let connection = try RawConnection(port: server.port)
        try await connection.send("GET /v1/pull?wait=30 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n")
        return connection
    }

    @Test func atTheDefaultsOneUserHoldsAtMostAHundredWaitingPulls() async throws {
        try await withCommandLineServer { server, token, addUser in
            var held: [RawConnection] = []
            for _ in 0..<SyncServerLimits().maximumWaitingPullsPerUser {
                held.append(try await holdPull(on: server, token: token))
            }
            try await Task.sleep(for: .seconds(2))
            let refused = try await holdPull(on: server, token: token)
            let answer = try #require(
                RawResponse(await refused.receiveUntilClosed(timeout: 5).data), "the 101st waiting pull was held")
            #expect(answer.status == 429)
            #expect(answer.headers["retry-after"] != nil)
            #expect(answer.errorSentence?.contains("100 pulls waiting") == true, "\(answer.errorSentence ?? "")")
            // Another user is still served.
            let bob = try await addUser("bob")
            #expect(try await httpRequest(server.url("/v1/pull"), token: bob).status == 200)
            withExtendedLifetime(held) {}
        }
    }

    @Test func atTheDefaultsAConnectionThatStopsMidRequestIsClosedWithinHalfAMinute() async throws {
        try await withCommandLineServer { server, token, _ in
            let sends: [(String, String)] = [
                ("half the headers", "GET /v1/pull HTTP/1.1\r\nHost: x\r\nAuthor"),
                (
                    "half the body",
                    "POST /v1/push HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nContent-Length: 100\r\n\r\n{\"clientID\""
                ),
            ]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (name, text) in sends {
                    group.addTask {
                        let connection = try RawConnection(port: server.port)
                        try await connection.send(text)
                        let start = Date()
                        let (_, closed) = await connection.receiveUntilClosed(timeout: 45)
                        #expect(closed, "\(name): still open after 45 s")
                        #expect(Date().timeIntervalSince(start) >= 25, "\(name): closed too soon")
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test func aTooLargeBodySentWithConnectionCloseIsAnsweredAndClosed() async throws {
        try await withServer(arguments: ["--max-body", "1048576"]) { server, token, _ in
            // Larger than the socket buffers, so a server that stops reading leaves the client stuck.
            for size in [7 * 1_048_576, 40 * 1_048_576] {
                let connection = try RawConnection(port: server.port)
                let body = [UInt8](repeating: UInt8(ascii: " "), count: size)
                let start = Date()
                // As Python's urllib does: the whole request, then read the answer.
                try await connection.send(
                    "POST /v1/push HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\nContent-Length: \(body.count)\r\n\r\n"
                )
                var sendError: (any Error)?
                do { try await connection.send(body, timeout: 15) } catch { sendError = error }
                let (data, closed) = await connection.receiveUntilClosed(timeout: 15)
                #expect(closed, "\(size) bytes: the connection was left open")
                #expect(Date().timeIntervalSince(start) < 15, "\(size) bytes")
                let response = RawResponse(data)
                if size < 16 * 1_048_576 {
                    // The rest of the body is read and dropped: the client gets its answer.
                    #expect(sendError == nil, "\(String(describing: sendError))")
                    #expect(response?.status == 413)
                    #expect(response?.errorSentence != nil)
                }
            }
        }
    }

    /// A phone on a slow network: an upload that takes longer in all than the idle timeout, but is
    /// never silent as long, is kept; one that stalls is closed, holds its bytes, and is resumed.
    ///
    /// The slow upload sends a piece every quarter of a second, from a thread of its own, against
    /// an idle timeout of 3 s: a test process busy with other tests still keeps well within it.
    @Test(arguments: Backend.allCases)
    func aSlowUploadIsKeptAndAStalledOneIsClosedThenResumed(_ backend: Backend) async throws {
        let idleTimeout = 3.0
        try await withServer(backend, arguments: ["--idle-timeout", "\(Int(idleTimeout))"]) { server, token, _ in
            let bytes = (0..<(1_048_576 + 524_288)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
            let hash = AttachmentTests.hash(bytes)
            func put(from offset: Int, on connection: RawConnection) async throws {
                try await connection.send(
                    "PUT /v1/attachments/\(hash) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n"
                        + "Content-Range: bytes \(offset)-\(bytes.count - 1)/\(bytes.count)\r\n"
                        + "Content-Length: \(bytes.count - offset)\r\n\r\n")
            }
            func head() async throws -> RawResponse {
                let connection = try RawConnection(port: server.port)
                try await connection.send(
                    "HEAD /v1/attachments/\(hash) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n"
                )
                return try #require(RawResponse(await connection.receiveUntilClosed(timeout: 10).data))
            }

            // Stalled after 1.25 MiB: closed after the idle timeout, the attachment absent.
            let stalled = try RawConnection(port: server.port)
            try await put(from: 0, on: stalled)
            try await stalled.send(bytes[..<(1_048_576 + 262_144)])
            let (_, closed) = await stalled.receiveUntilClosed(timeout: idleTimeout + 7)
            #expect(closed, "a stalled upload was left open")
            let afterStall = try await head()
            #expect(afterStall.status == 404)
            let held = try #require(afterStall.headers["amber-upload-offset"].flatMap { Int($0) })
            #expect((0...(1_048_576 + 262_144)).contains(held), "held \(held)")

            // The rest, 16 KiB every 0.25 s: longer than the idle timeout in all (4 s at least).
            func slowPut(from offset: Int) async throws -> (RawResponse?, TimeInterval) {
                let slow = try RawConnection(port: server.port)
                let start = Date()
                try await put(from: offset, on: slow)
                try await onOwnThread {
                    for pieceStart in stride(from: offset, to: bytes.count, by: 16_384) {
                        Thread.sleep(forTimeInterval: 0.25)
                        try slow.sendBlocking(
                            Array(bytes[pieceStart..<min(pieceStart + 16_384, bytes.count)]), timeout: 10)
                    }
                }
                let answer = RawResponse(await slow.receiveUntilClosed(timeout: idleTimeout + 3).data)
                return (answer, Date().timeIntervalSince(start))
            }
            var (answer, took) = try await slowPut(from: held)
            // The cut request may still be writing the bytes it had read when `HEAD` answered (a
            // full run saw it once): the server then answers 409 with the bytes it holds now, and
            // the client goes on from there, as `SyncClient` does.
            if answer?.status == 409, let now = answer?.headers["amber-upload-offset"].flatMap({ Int($0) }) {
                print("the stalled upload held \(now) bytes, not \(held), once its request ended")
                #expect(now > held && now <= 1_048_576 + 262_144, "held \(now)")
                (answer, took) = try await slowPut(from: now)
            }
            #expect(answer?.status == 201, "\(String(describing: answer?.status)) \(answer?.body.count ?? 0)")
            #expect(took > idleTimeout, "the upload was not slower than the idle timeout")
            #expect(try await head().status == 200)
            let kept = try await httpRequest(server.url("/v1/attachments/\(hash)"), token: token)
            #expect(kept.status == 200)
            #expect(bytesDiffer(kept.body, bytes) == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func aPullHeldWhenItsTokenIsRevokedAnswers401(_ backend: Backend) async throws {
        try await withServer(backend) { server, token, test in
            let phone = try await test.database.addToken(forUserNamed: "ann")
            async let held = httpRequest(server.url("/v1/pull?wait=10"), token: token)
            try await Task.sleep(for: .seconds(1))
            #expect(try await test.database.revokeToken(token))
            try await Task.sleep(for: .seconds(2))
            let push = PushRequest(
                clientID: "phone",
                mutations: [
                    Mutation(
                        mutationID: 1, collection: "notes", id: "n1", baseVersion: nil, value: ["t": .string("secret")])
                ]
            )
            let pushed = try await httpRequest(
                server.url("/v1/push"), method: "POST", token: phone, body: try JSONEncoder().encode(push))
            #expect(pushed.status == 200)
            let answer = try await held
            #expect(answer.status == 401, "\(String(decoding: answer.body, as: UTF8.self))")
            #expect(!String(decoding: answer.body, as: UTF8.self).contains("secret"))
        }
    }

    @Test(arguments: Backend.allCases)
    func pullPagesAreCutByBytes(_ backend: Backend) async throws {
        try await withServer(backend, arguments: ["--max-body", "1048576", "--max-pull-bytes", "1048576"]) {
            server, token, _ in
            let big = String(repeating: "x", count: 600_000)
            for index in 1...4 {
                let push = PushRequest(
                    clientID: "phone",
                    mutations: [
                        Mutation(
                            mutationID: Int64(index), collection: "notes", id: "n\(index)", baseVersion: nil,
                            value: ["text": .string(big)])
                    ]
                )
                let pushed = try await httpRequest(
                    server.url("/v1/push"), method: "POST", token: token, body: try JSONEncoder().encode(push))
                #expect(pushed.status == 200, "\(String(decoding: pushed.body, as: UTF8.self))")
            }
            var cursor: Int64 = 0
            var pages: [Int] = []
            while true {
                let answer = try await httpRequest(server.url("/v1/pull?cursor=\(cursor)"), token: token)
                try #require(answer.status == 200)
                #expect(answer.body.count < 1_300_000, "a page of \(answer.body.count) bytes")
                let page = try JSONDecoder().decode(PullResponse.self, from: answer.body)
                pages.append(page.changes.count)
                cursor = page.cursor
                if !page.hasMore || pages.count > 10 { break }
            }
            #expect(pages == [1, 1, 1, 1])
        }
    }

    /// Pushes one new record `id` whose `text` field is `text`.
    func push(id: String, text: String, mutationID: Int64, to server: ServeProcess, token: String) async throws {
        let push = PushRequest(
            clientID: "phone",
            mutations: [
                Mutation(
                    mutationID: mutationID, collection: "notes", id: id, baseVersion: nil,
                    value: ["text": .string(text)])
            ]
        )
        let pushed = try await httpRequest(
            server.url("/v1/push"), method: "POST", token: token, body: try JSONEncoder().encode(push))
        #expect(pushed.status == 200, "\(String(decoding: pushed.body, as: UTF8.self))")
    }

    /// Pulls from cursor 0 to the end: each page's record count and answer size.
    func pullAll(from server: ServeProcess, token: String) async throws -> [(records: Int, bytes: Int)] {
        var cursor: Int64 = 0
        var pages: [(records: Int, bytes: Int)] = []
        while pages.count <= 100 {
            let answer = try await httpRequest(server.url("/v1/pull?cursor=\(cursor)"), token: token)
            try #require(answer.status == 200)
            let page = try JSONDecoder().decode(PullResponse.self, from: answer.body)
            pages.append((page.changes.count, answer.body.count))
            cursor = page.cursor
            if !page.hasMore { break }
        }
        return pages
    }

    @Test func atTheDefaultsAPullPageHoldsAtMostOneLargestBodyOfRecords() async throws {
        try await withCommandLineServer { server, token, _ in
            let text = String(repeating: "x", count: 3_500_000)
            for index in 1...3 {
                try await push(id: "n\(index)", text: text, mutationID: Int64(index), to: server, token: token)
            }
            let pages = try await pullAll(from: server, token: token)
            #expect(pages.map(\.records) == [2, 1])
            for page in pages {
                #expect(page.bytes < SyncLimits.defaultMaximumBody, "a page of \(page.bytes) bytes")
            }
        }
    }

    #if os(Linux)
        @Test func pullingFortyMiBOfRecordsKeepsTheServersMemoryBounded() async throws {
            // The report: with `--max-body` 1 MiB, 40 records of 1 MiB came back as one 40 MiB answer.
            try await withCommandLineServer(arguments: ["--max-body", "1048576"]) { server, token, _ in
                let text = String(repeating: "x", count: 1_000_000)
                for index in 1...40 {
                    try await push(id: "n\(index)", text: text, mutationID: Int64(index), to: server, token: token)
                }
                let before = try server.memory()
                let pages = try await pullAll(from: server, token: token)
                let after = try server.memory()
                #expect(pages.map(\.records).reduce(0, +) == 40)
                #expect(pages.allSatisfy { $0.bytes < 9 * 1_048_576 }, "\(pages.map(\.bytes))")
                let growth = after.peak - before.peak
                print(
                    "server memory: resident \(before.resident >> 20) MiB, peak \(before.peak >> 20) MiB",
                    "→ \(after.peak >> 20) MiB over \(pages.count) pages")
                // Pages of 8 MiB grew the peak by 44 to 67 MiB in full parallel runs (each page's
                // rows, its encoded answer, and freed memory kept by the allocator's per-thread
                // arenas); the whole 40 MiB in one answer (`--max-pull-bytes 100000000`) grew it by
                // 142 to 157 MiB.
                #expect(growth < 96 * 1_048_576, "the server's peak memory grew by \(growth >> 20) MiB")
            }
        }
    #endif

    @Test func largePushesDoNotHoldUpOtherUsers() async throws {
        try await withCommandLineServer { server, token, addUser in
            let bob = try await addUser("bob")
            // Two bodies just under the default largest body (8 MiB), of many small fields: what a
            // naive server takes seconds of CPU to decode.
            var value: JSONObject = [:]
            for index in 0..<165_000 { value["field\(index)"] = .string("0123456789abcdefghijklmnopqrstuv") }
            let bodies = try (1...2).map { index in
                try JSONEncoder().encode(
                    PushRequest(
                        clientID: "big\(index)",
                        mutations: [
                            Mutation(
                                mutationID: 1, collection: "notes", id: "big\(index)", baseVersion: nil, value: value)
                        ]))
            }
            #expect(bodies[0].count > 7_500_000 && bodies[0].count < SyncLimits.defaultMaximumBody)
            // Raw sockets on threads of their own: the test's own HTTP client must not be what waits.
            let pushed = LockedValue<[Int]>([])
            let group = DispatchGroup()
            for body in bodies {
                DispatchQueue.global().async(group: group) {
                    guard let connection = try? RawConnection(port: server.port) else { return }
                    try? connection.sendBlocking(
                        Array(
                            "POST /v1/push HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\nContent-Length: \(body.count)\r\n\r\n"
                                .utf8), timeout: 10
                    )
                    try? connection.sendBlocking(Array(body), timeout: 60)
                    let status = RawResponse(connection.receiveBlocking(timeout: 120).data)?.status ?? 0
                    pushed.withLock { $0.append(status) }
                }
            }
            let timings = LockedValue<[Double]>([])
            DispatchQueue.global().async(group: group) {
                Thread.sleep(forTimeInterval: 0.3)
                for _ in 0..<10 {
                    let start = Date()
                    guard let connection = try? RawConnection(port: server.port) else { return }
                    try? connection.sendBlocking(
                        Array(
                            "GET /v1/pull HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(bob)\r\nConnection: close\r\n\r\n"
                                .utf8),
                        timeout: 10)
                    let status = RawResponse(connection.receiveBlocking(timeout: 30).data)?.status ?? 0
                    timings.withLock { $0.append(status == 200 ? Date().timeIntervalSince(start) : 999) }
                    Thread.sleep(forTimeInterval: 0.1)
                }
            }
            await withCheckedContinuation { continuation in
                group.notify(queue: .global()) { continuation.resume() }
            }
            #expect(pushed.withLock { $0 } == [200, 200])
            let longest = timings.withLock { $0.max() ?? 999 }
            print("another user's pull during two large pushes: longest \(longest) s of \(timings.withLock { $0 })")
            // Decoding one body takes seconds of CPU; another user's pull waits for none of it.
            #expect(longest < 1.5, "Bob's pull took \(longest) s")
        }
    }

    @Test(.enabled(if: PostgresTestServer.isWanted, "PostgreSQL is not installed"))
    func aDatabaseOutageIsAnswered503PromptlyAndServingResumes() async throws {
        // A cluster of its own: the other tests' cluster must not go away.
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/postgres-cluster")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("amber-outage-\(UUID())")
        func cluster(_ command: String) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            var arguments = [script.path, command, directory.path]
            if command == "start" {
                arguments += ["--stop-with", String(ProcessInfo.processInfo.processIdentifier)]
            }
            process.arguments = arguments
            let result = try runToEnd(process)
            try #require(result.status == 0, "postgres-cluster \(command): \(result.error)")
            return result.output
        }
        let url = try #require(try cluster("start").split(separator: "\n").last.map(String.init))
        defer { _ = try? cluster("stop") }

        let added = Process()
        added.executableURL = builtExecutable(named: "amber-sync")
        added.arguments = ["user", "add", "ann", "--database", url]
        let token = try #require(try runToEnd(added).output.split(separator: "\n").last.map(String.init))
        let server = try await ServeProcess(database: url)
        defer { server.stop() }
        #expect(try await httpRequest(server.url("/v1/pull"), token: token).status == 200)

        _ = try cluster("pause")
        for attempt in 1...2 {
            let start = Date()
            let connection = try RawConnection(port: server.port)
            try await connection.send(
                "GET /v1/pull HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
            let (data, _) = await connection.receiveUntilClosed(timeout: 60)
            let seconds = Date().timeIntervalSince(start)
            let answer = try #require(RawResponse(data), "attempt \(attempt): no answer in \(seconds) s")
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(answer.status == 503, "attempt \(attempt): \(answer.status) \(text)")
            #expect(answer.headers["retry-after"] != nil)
            #expect(seconds < 10, "attempt \(attempt) took \(seconds) s")
            #expect(!text.contains("127.0.0.1") && !text.contains("postgres://") && !text.contains("amber@"), "\(text)")
            #expect(answer.errorSentence != nil, "\(text)")
        }
        #expect(server.log.contains("unavailable"), "the log says nothing of the outage")

        _ = try cluster("resume")
        let start = Date()
        let back = await eventually(within: 30) {
            (try? await httpRequest(server.url("/v1/pull"), token: token, timeout: 10).status) == 200
        }
        #expect(back, "not serving 30 s after the database came back")
        print("serving again \(Date().timeIntervalSince(start)) s after the database came back")
    }
}
