import Amber
import AmberSQLite
import AmberSync
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A record that carries a file, or the same bytes as text.
@Immutable
struct BenchFile: Identifiable, Codable, Hashable, Sendable {
    let id: String
    let text: String
    let file: Attachment?
}

/// A device whose records carry files: a `SyncClient` with one store on its own SQLite file.
final class FileDevice: Sendable {
    let storage: SQLiteStorage
    let files: IdentityStore<BenchFile>
    let client: SyncClient

    init(path: String, server: String, token: String) throws {
        storage = try SQLiteStorage(path: path)
        files = try IdentityStore(key: "files", storage: storage)
        client = try SyncClient(storage: storage, server: URL(string: server)!, token: token)
        try client.add(files)
    }
}

/// A 100 MiB attachment up through one device's sync and down through another's, against curl
/// moving the same bytes to and from nginx (`PUT` by its WebDAV module, `GET` of the static
/// file) on the same loopback; and the server's resident memory meanwhile.
///
/// The two devices live through every round, each round a new file: the sender's sync uploads
/// it and pushes the record naming it, the receiver's sync pulls the record and downloads it.
enum LargeAttachment {
    static let size = 100 * 1_048_576

    static func run(backend: Backend, rounds: Int) async throws {
        try BaselineTools.check()
        let nginx = try Nginx.start(in: backend.scratch.appendingPathComponent("nginx"))
        defer { nginx.stop() }
        let location = try await backend.newDatabase()
        let database = try await Backend.open(location)
        let token = try await database.addUser(named: "ann")
        let server = try await ServerProcess.start(database: location)
        defer { server.stop() }
        let sender = try FileDevice(path: backend.scratchPath("sender.sqlite"), server: server.url, token: token)
        let receiver = try FileDevice(path: backend.scratchPath("receiver.sqlite"), server: server.url, token: token)
        try await sender.client.sync()
        try await receiver.client.sync()

        var oursUp: [Double] = []
        var oursDown: [Double] = []
        var curlUp: [Double] = []
        var curlDown: [Double] = []
        var idleMemory = Int.max
        var memoryGrowth = 0
        for round in 0..<rounds {
            // Different bytes each round: the server keeps what it has.
            let file = URL(fileURLWithPath: backend.scratchPath("large-\(round).bin"))
            try write(size, seed: UInt64(round + 1), to: file)
            defer { try? FileManager.default.removeItem(at: file) }

            let copy = backend.scratchPath("curl-\(round).bin")
            curlUp.append(try Curl.put(file, to: "\(nginx.url)/large-\(round).bin"))
            curlDown.append(try Curl.get("\(nginx.url)/large-\(round).bin", into: copy))
            try? FileManager.default.removeItem(atPath: copy)
            try? FileManager.default.removeItem(at: nginx.root.appendingPathComponent("large-\(round).bin"))

            let attachment = try sender.client.attachments.add(contentsOf: file, mediaType: "application/octet-stream")
            try sender.files.add(BenchFile(id: "large-\(round)", text: "", file: attachment))
            let before = server.residentMemory() ?? 0
            idleMemory = min(idleMemory, before)
            let peak = ResidentPeak(server)
            var start = ContinuousClock.now
            try await sender.client.sync()
            oursUp.append(seconds(since: start))
            start = .now
            try await receiver.client.sync()
            oursDown.append(seconds(since: start))
            memoryGrowth = max(memoryGrowth, await peak.stop() - before)
            guard receiver.client.attachments.contains(attachment), receiver.files[id: "large-\(round)"] != nil else {
                throw BenchmarkError("the receiver lacks the record or its attachment after its sync")
            }
        }
        let (up, down) = (percentile(oursUp, 0.5), percentile(oursDown, 0.5))
        let (baseUp, baseDown) = (percentile(curlUp, 0.5), percentile(curlDown, 0.5))
        let growth = Double(memoryGrowth) / 1_048_576
        report(
            "sync \(backend.kind.rawValue) attachment-100mib: 100 MiB up through a SyncClient's sync "
                + "\(format(up)) s, down through another's \(format(down)) s (medians of \(rounds)); baseline curl to and "
                + "from nginx \(Nginx.version) on the same loopback: up \(format(baseUp)) s, down \(format(baseDown)) s; "
                + "ratio up \(format(up / baseUp)), down \(format(down / baseDown)), both "
                + "\(format((up + down) / (baseUp + baseDown))) (target ≤ 2)"
        )
        report(
            "sync \(backend.kind.rawValue) attachment-100mib-memory: the server's resident memory grew at most "
                + "\(format(growth, 1)) MB while 100 MiB went up and down (idle \(megabytes(idleMemory)) MB; target < 32 MB)"
        )
        try benchmarkRun.record(
            "attachment-100mib", backend: backend,
            description: "a 100 MiB attachment uploaded by one SyncClient's sync and downloaded by another's (medians "
                + "of \(rounds) rounds, up plus down), against curl putting the same bytes to nginx \(Nginx.version) "
                + "(WebDAV) and getting them back, on the same loopback",
            ours: up + down, baseline: baseUp + baseDown, unit: "s", targetRatio: 2,
            details: [
                "rounds": Double(rounds), "up_s": up, "down_s": down, "baseline_up_s": baseUp,
                "baseline_down_s": baseDown,
            ])
        try benchmarkRun.record(
            "attachment-100mib-memory", backend: backend,
            description: "growth of the server's resident memory while each 100 MiB attachment went up and down, "
                + "over its resident memory before",
            ours: growth, baseline: nil, unit: "MB", target: "< 32 MB", met: growth < 32,
            details: ["idle_MB": Double(idleMemory) / 1_048_576])
    }

    /// Writes `count` bytes of a simple generator, in chunks of 1 MiB.
    static func write(_ count: Int, seed: UInt64, to file: URL) throws {
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw BenchmarkError("cannot create \(file.path)")
        }
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        var written = 0
        while written < count {
            let length = min(1_048_576, count - written)
            var chunk = Data(count: length)
            chunk.withUnsafeMutableBytes { bytes in
                let words = bytes.bindMemory(to: UInt64.self)
                for index in words.indices {
                    state ^= state << 13
                    state ^= state >> 7
                    state ^= state << 17
                    words[index] = state
                }
            }
            try handle.write(contentsOf: chunk)
            written += length
        }
    }
}

/// 1,000 records that each carry a 10 KiB attachment, up through one device's sync and down
/// through another's, against 1,000 records that carry the same 10 KiB as text.
enum SmallAttachments {
    static func run(backend: Backend, count: Int) async throws {
        let location = try await backend.newDatabase()
        let database = try await Backend.open(location)
        // A user each, so that neither side pulls the other's records.
        let textToken = try await database.addUser(named: "ann")
        let token = try await database.addUser(named: "bob")
        let server = try await ServerProcess.start(database: location)
        defer { server.stop() }
        let size = 10 * 1_024

        // Baseline: the bytes as text in the records (hex of 5 KiB: 10 KiB of text each).
        let textSender = try FileDevice(
            path: backend.scratchPath("text-sender.sqlite"), server: server.url, token: textToken)
        try textSender.files.add(
            contentsOf: (0..<count).map { index in
                BenchFile(id: "text-\(index)", text: hexText(bytes: size / 2, seed: index), file: nil)
            })
        var start = ContinuousClock.now
        try await textSender.client.sync()
        let textUp = seconds(since: start)
        let textReceiver = try FileDevice(
            path: backend.scratchPath("text-receiver.sqlite"), server: server.url, token: textToken)
        start = .now
        try await textReceiver.client.sync()
        let textDown = seconds(since: start)

        let sender = try FileDevice(path: backend.scratchPath("file-sender.sqlite"), server: server.url, token: token)
        var records: [BenchFile] = []
        for index in 0..<count {
            let bytes = Data(hexText(bytes: size / 2, seed: count + index).utf8)
            let attachment = try sender.client.attachments.add(bytes, mediaType: "application/octet-stream")
            records.append(BenchFile(id: "file-\(index)", text: "", file: attachment))
        }
        try sender.files.add(contentsOf: records)
        start = .now
        try await sender.client.sync()
        let filesUp = seconds(since: start)
        let receiver = try FileDevice(
            path: backend.scratchPath("file-receiver.sqlite"), server: server.url, token: token)
        start = .now
        try await receiver.client.sync()
        let filesDown = seconds(since: start)
        guard receiver.client.attachments.storedHashes.count == count,
            textReceiver.files.count == count
        else {
            throw BenchmarkError("the receivers do not have all \(count) records and files")
        }
        let ours = filesUp + filesDown
        let baseline = textUp + textDown
        report(
            "sync \(backend.kind.rawValue) attachments-1k: \(count) records with a 10 KiB attachment each, up "
                + "\(format(filesUp)) s and down \(format(filesDown)) s; baseline \(count) records with the same 10 KiB as "
                + "text, up \(format(textUp)) s and down \(format(textDown)) s; ratio \(format(ours / baseline)) (target ≤ 3)"
        )
        try benchmarkRun.record(
            "attachments-1k", backend: backend,
            description: "\(count) records, each naming an attachment of 10 KiB, pushed with their files by one "
                + "SyncClient's sync and pulled with them by another's, against \(count) records carrying the same "
                + "10 KiB as text, pushed and pulled the same way",
            ours: ours, baseline: baseline, unit: "s", targetRatio: 3,
            details: [
                "attachments": Double(count), "up_s": filesUp, "down_s": filesDown, "baseline_up_s": textUp,
                "baseline_down_s": textDown,
            ])
    }

    /// `bytes` bytes of a generator, as hex text.
    static func hexText(bytes: Int, seed: Int) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var state = UInt64(seed + 1) &* 0x9E37_79B9_7F4A_7C15
        var text: [UInt8] = []
        text.reserveCapacity(bytes * 2)
        for _ in 0..<bytes {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            let byte = UInt8(truncatingIfNeeded: state)
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// The highest resident memory of a server process, read every 20 ms until stopped.
final class ResidentPeak: Sendable {
    private let task: Task<Int, Never>

    init(_ server: ServerProcess) {
        task = Task.detached {
            var peak = server.residentMemory() ?? 0
            while !Task.isCancelled {
                peak = max(peak, server.residentMemory() ?? 0)
                try? await Task.sleep(for: .milliseconds(20))
            }
            return max(peak, server.residentMemory() ?? 0)
        }
    }

    func stop() async -> Int {
        task.cancel()
        return await task.value
    }
}

/// nginx serving a folder on a free loopback port: `GET` of its files, and `PUT` through its
/// WebDAV module (Debian's `nginx-core`).
final class Nginx: @unchecked Sendable {
    // @unchecked: `process` is only started and stopped by the task that owns this value.
    let process: Process
    let url: String
    /// The folder it serves and `PUT`s into.
    let root: URL

    static let executable = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Its version, as `nginx -v` tells it.
    static let version: String = {
        guard let executable else { return "?" }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-v"]
        let output = Pipe()
        process.standardError = output
        guard (try? process.run()) != nil else { return "?" }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(separator: "/").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? "?"
    }()

    private init(process: Process, url: String, root: URL) {
        self.process = process
        self.url = url
        self.root = root
    }

    static func start(in directory: URL) throws -> Nginx {
        guard let executable else { throw BaselineTools.missing("nginx") }
        let root = directory.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let port = try freePort()
        let temporary = directory.path + "/temporary"
        // Started by root, nginx's workers would run as `nobody`, who cannot write the folder.
        let user = getuid() == 0 ? "user root;\n" : ""
        let configuration =
            user + """
                worker_processes 1;
                daemon off;
                pid \(directory.path)/nginx.pid;
                error_log \(directory.path)/error.log;
                events { worker_connections 64; }
                http {
                    access_log off;
                    sendfile on;
                    client_max_body_size 0;
                    client_body_temp_path \(temporary)/body;
                    proxy_temp_path \(temporary)/proxy;
                    fastcgi_temp_path \(temporary)/fastcgi;
                    uwsgi_temp_path \(temporary)/uwsgi;
                    scgi_temp_path \(temporary)/scgi;
                    server {
                        listen 127.0.0.1:\(port);
                        root \(root.path);
                        dav_methods PUT;
                        create_full_put_path on;
                    }
                }
                """
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("nginx.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-p", directory.path, "-c", file.path, "-e", directory.path + "/error.log"]
        try process.run()
        let nginx = Nginx(process: process, url: "http://127.0.0.1:\(port)", root: root)
        for _ in 0..<100 {
            if (try? Curl.status("\(nginx.url)/")) != nil { return nginx }
            usleep(20_000)
        }
        nginx.stop()
        throw BenchmarkError("nginx did not start; see \(directory.path)/error.log")
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// A port nothing listens on now.
    private static func freePort() throws -> Int {
        #if canImport(Glibc)
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw BenchmarkError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// The `curl` command line tool, timed as a process.
enum Curl {
    static let executable = ["/usr/bin/curl", "/usr/local/bin/curl", "/bin/curl"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// `PUT`s `file` to `url`; the seconds it took.
    static func put(_ file: URL, to url: String) throws -> Double {
        try timed(["-sS", "-f", "-o", "/dev/null", "-T", file.path, url])
    }

    /// `GET`s `url` into `path`; the seconds it took.
    static func get(_ url: String, into path: String) throws -> Double {
        try timed(["-sS", "-f", "-o", path, url])
    }

    /// The status of a `GET` of `url`.
    static func status(_ url: String) throws -> String {
        try Backend.run(try path(), ["-s", "-o", "/dev/null", "-w", "%{http_code}", url])
    }

    private static func path() throws -> URL {
        guard let executable else { throw BaselineTools.missing("curl") }
        return URL(fileURLWithPath: executable)
    }

    private static func timed(_ arguments: [String]) throws -> Double {
        let curl = try path()
        let start = ContinuousClock.now
        try Backend.run(curl, arguments)
        return seconds(since: start)
    }
}

/// The programs of the attachment figures' baseline: nginx (with its WebDAV module) and curl.
enum BaselineTools {
    /// Fails with a sentence naming what to install when either is missing.
    static func check() throws {
        if Nginx.executable == nil { throw missing("nginx") }
        if Curl.executable == nil { throw missing("curl") }
    }

    static func missing(_ program: String) -> BenchmarkError {
        BenchmarkError(
            "this figure's baseline needs nginx (with its WebDAV module) and curl, and \(program) is not installed: "
                + "apt-get install nginx-core curl")
    }
}
