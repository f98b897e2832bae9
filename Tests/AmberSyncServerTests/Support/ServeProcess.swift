import AmberLock
import AmberTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `amber-sync serve` run as a child process on a free port, with what it logs.
final class ServeProcess: Sendable {
    let process: Process
    let port: Int
    private let logged: LockedValue<Data>

    /// Starts `amber-sync serve --port 0 --database DATABASE ARGUMENTS` and waits until it listens.
    init(database: String, arguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let process = Process()
        process.executableURL = builtExecutable(named: "amber-sync")
        process.arguments = ["serve", "--port", "0", "--database", database] + arguments
        let output = Pipe()
        let errors = Pipe()
        let printed = LockedValue(Data())
        let logged = LockedValue(Data())
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            printed.withLock { $0.append(data) }
        }
        errors.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            logged.withLock { $0.append(data) }
        }
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let listening = await eventually(within: 60) {
            printed.withLock { String(decoding: $0, as: UTF8.self).contains("\n") }
        }
        let line = printed.withLock { String(decoding: $0, as: UTF8.self) }
        guard listening, let match = line.firstMatch(of: /listening on http:\/\/127\.0\.0\.1:(\d+)/),
            let port = Int(match.1)
        else {
            process.terminate()
            throw ServeProcessError(
                "serve did not start: \(line) \(logged.withLock { String(decoding: $0, as: UTF8.self) })")
        }
        self.process = process
        self.port = port
        self.logged = logged
    }

    /// What the server wrote to stderr so far.
    var log: String {
        logged.withLock { String(decoding: $0, as: UTF8.self) }
    }

    /// The server's address with `path` appended.
    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    /// The server's resident memory now and at its peak, in bytes, from `/proc` (Linux only).
    func memory() throws -> (resident: Int, peak: Int) {
        let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        func kilobytes(_ field: String) throws -> Int {
            let line = status.split(separator: "\n").first { $0.hasPrefix("\(field):") }
            guard let value = line?.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
                throw ServeProcessError("no \(field) in /proc/\(process.processIdentifier)/status")
            }
            return value * 1_024
        }
        return (try kilobytes("VmRSS"), try kilobytes("VmHWM"))
    }

    /// Stops the server (SIGKILL) and waits for it.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            _ = waitForExit(process)
        }
    }

    deinit {
        stop()
    }
}

struct ServeProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A TCP connection to a port of 127.0.0.1 on a plain POSIX socket: for sending what no HTTP
/// client would send, and seeing whether the server closes it.
final class RawConnection: @unchecked Sendable {
    // @unchecked: one test drives a connection at a time; `socket` never changes.
    let socket: Int32

    init(port: Int) throws {
        #if canImport(Glibc)
            socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard socket >= 0 else { throw ServeProcessError("socket() failed: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(socket)
            throw ServeProcessError("connect() failed: \(errno)")
        }
    }

    deinit {
        close(socket)
    }

    /// Sends all of `bytes`; throws when they cannot be sent within `timeout` seconds.
    ///
    /// The blocking calls run on a thread of their own: on the tests' cooperative threads they
    /// would hold up every other test of the process (two threads on a two-core machine).
    func send(_ bytes: some Sequence<UInt8>, timeout: Double = 10) async throws {
        let bytes = Array(bytes)
        try await onOwnThread { try self.sendBlocking(bytes, timeout: timeout) }
    }

    /// Sends `text` as UTF-8.
    func send(_ text: String, timeout: Double = 10) async throws {
        try await send(Array(text.utf8), timeout: timeout)
    }

    /// Everything the server sends until it closes the connection (`closed`) or `timeout` seconds
    /// pass without it closing; waits on a thread of its own.
    func receiveUntilClosed(timeout: Double) async -> (data: Data, closed: Bool) {
        (try? await onOwnThread { self.receiveBlocking(timeout: timeout) }) ?? (Data(), false)
    }

    /// ``send(_:timeout:)`` on the calling thread, for tests that run their own threads.
    func sendBlocking(_ bytes: [UInt8], timeout: Double) throws {
        setTimeout(SO_SNDTIMEO, timeout)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                #if canImport(Glibc)
                    Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                #else
                    Darwin.send(socket, $0.baseAddress, $0.count, 0)
                #endif
            }
            guard count > 0 else {
                throw ServeProcessError("send() failed after \(sent) of \(bytes.count) bytes: errno \(errno)")
            }
            sent += count
        }
    }

    /// ``receiveUntilClosed(timeout:)`` on the calling thread, for tests that run their own threads.
    func receiveBlocking(timeout: Double) -> (data: Data, closed: Bool) {
        var data = Data()
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return (data, false) }
            setTimeout(SO_RCVTIMEO, left)
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                data.append(contentsOf: buffer[0..<count])
            } else if count == 0 {
                return (data, true)
            } else if errno == ECONNRESET {
                return (data, true)
            } else if errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
                return (data, true)
            }
        }
    }

    private func setTimeout(_ option: Int32, _ seconds: Double) {
        var value = timeval(
            tv_sec: Int(seconds), tv_usec: .init(max(1_000, (seconds - Double(Int(seconds))) * 1_000_000)))
        setsockopt(socket, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }
}

/// An HTTP/1.1 answer as read off a raw connection.
struct RawResponse {
    let status: Int
    let headers: [String: String]
    let body: Data

    /// Parses the first answer in `data`; `nil` when there is none.
    init?(_ data: Data) {
        guard let end = data.firstRange(of: Data("\r\n\r\n".utf8)) else { return nil }
        let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).split(separator: "\r\n")
        guard let statusLine = head.first, let code = statusLine.split(separator: " ").dropFirst().first,
            let status = Int(code)
        else { return nil }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                .trimmingCharacters(in: .whitespaces)
        }
        self.status = status
        self.headers = headers
        let rest = data[end.upperBound...]
        let length = headers["content-length"].flatMap { Int($0) } ?? rest.count
        body = Data(rest.prefix(length))
    }

    /// The `error` sentence of an `{"error": ...}` body, or `nil` when the body is not one.
    var errorSentence: String? {
        (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["error"] as? String
    }
}

/// Runs `body` on a new thread and returns its result: for blocking calls in async tests.
func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
