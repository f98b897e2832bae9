import AmberSyncProtocol
import AmberTestSupport
import Foundation
import Testing

@testable import AmberSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The client's HTTP on a real socket (AsyncHTTPClient on Linux, `URLSession` elsewhere):
/// compressed answers, a server that never answers, a request given up.
@Suite(.boundedConcurrency) struct HTTPSyncTransportTests {
    /// A page of 300 notes comes gzip-compressed, as the client asks, and reads as the page.
    @Test func aLargeAnswerComesCompressedAndReadsInflated() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let device = try Device(server: server.url, token: token)
        try device.notes.add(
            contentsOf: (0..<300).map { Note(id: UUID(), text: "note \($0)", tagIDs: [], pinned: $0 % 2 == 0) })
        _ = try await device.client.sync()

        let answer = try await HTTPSyncTransport(server: server.url).send(
            SyncTransportRequest(
                method: "GET", path: "v1/pull",
                query: [URLQueryItem(name: "cursor", value: "0"), URLQueryItem(name: "limit", value: "1000")],
                headers: ["Authorization": "Bearer \(token)"]))
        #expect(answer.status == 200)
        #expect(answer.header("Content-Encoding") == "gzip", "the client asks for gzip")
        let page = try PullResponse(jsonBytes: answer.body)
        #expect(page.changes.count == 300)
    }

    /// Long-polls of many clients in one process, each holding a connection while it waits, leave
    /// room for another request to the same server: it is answered at once, not after a wait ends.
    @Test func manyWaitingPullsLeaveRoomForAnotherRequest() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        func pull(wait: Int) -> SyncTransportRequest {
            SyncTransportRequest(
                method: "GET", path: "v1/pull",
                query: [URLQueryItem(name: "cursor", value: "0")]
                    + (wait > 0 ? [URLQueryItem(name: "wait", value: "\(wait)")] : []),
                headers: ["Authorization": "Bearer \(token)"], timeout: wait > 0 ? TimeInterval(wait + 30) : nil)
        }
        // One transport per client, as each `SyncClient` has its own.
        let waiting = (0..<12).map { _ in
            Task { try await HTTPSyncTransport(server: server.url).send(pull(wait: 20)) }
        }
        defer { for task in waiting { task.cancel() } }
        try await Task.sleep(for: .milliseconds(500))
        let start = ContinuousClock.now
        let answer = try await HTTPSyncTransport(server: server.url).send(pull(wait: 0))
        #expect(answer.status == 200)
        #expect(ContinuousClock.now - start < .seconds(10), "answered while the twelve pulls still wait")
    }

    /// A request with a time limit to a server that accepts the connection and never answers
    /// fails as offline once the limit has passed, not after the 90 s an answer may take.
    @Test func aServerThatNeverAnswersFailsARequestAtItsTimeLimit() async throws {
        let silent = try SilentListener()
        defer { silent.stop() }
        let transport = HTTPSyncTransport(server: URL(string: "http://127.0.0.1:\(silent.port)")!)
        let start = ContinuousClock.now
        let error = await #expect(throws: SyncError.self) {
            _ = try await transport.send(SyncTransportRequest(method: "GET", path: "v1/pull", timeout: 1))
        }
        #expect(error?.kind == .offline)
        #expect(ContinuousClock.now - start < .seconds(30), "given up at its limit, not at the 90 s idle limit")
    }

    /// Cancelling the task that waits for an answer ends the request at once, as stopping live
    /// sync needs.
    @Test func cancellingTheTaskEndsARequestThatWaits() async throws {
        let silent = try SilentListener()
        defer { silent.stop() }
        let transport = HTTPSyncTransport(server: URL(string: "http://127.0.0.1:\(silent.port)")!)
        let waiting = Task { try await transport.send(SyncTransportRequest(method: "GET", path: "v1/pull")) }
        try await Task.sleep(for: .milliseconds(300))
        let start = ContinuousClock.now
        waiting.cancel()
        let error = await #expect(throws: SyncError.self) { try await waiting.value }
        #expect(error?.kind == .offline)
        #expect(ContinuousClock.now - start < .seconds(30), "the request ends when its task is cancelled")
    }
}

/// A TCP port on the loopback that takes connections (the kernel's backlog completes them) and
/// never reads nor answers.
private final class SilentListener: Sendable {
    let socket: Int32
    let port: Int

    init() throws {
        #if canImport(Glibc)
            let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw SyncTestError("socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            _ = close(fd)
            throw SyncTestError("cannot listen on the loopback")
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else {
            _ = close(fd)
            throw SyncTestError("getsockname() failed")
        }
        socket = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func stop() {
        #if canImport(Glibc)
            _ = Glibc.close(socket)
        #else
            _ = Darwin.close(socket)
        #endif
    }
}
