import Amber
import AmberSync
import AmberSyncProtocol
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Uploads cut off by a killed `amber-sync serve` resume where the server's bytes end.
@Suite(.boundedConcurrency, .serialized) struct AttachmentResumeTests {
    /// 64 MiB: long enough to kill the server while it is under way.
    static let size = 64 * 1_048_576

    /// The server, on SQLite or on PostgreSQL, is SIGKILLed once it holds part of a large upload;
    /// restarted, it tells the client how many bytes it kept, and the client's next sync sends
    /// only the rest (counted by the server), reporting the bytes as they go; the attachment
    /// arrives whole and checked.
    @Test(arguments: Backend.allCases)
    func aServerKilledMidUploadIsSentOnlyTheRest(backend: Backend) async throws {
        try await backend.withDatabase { test in
            let database = try #require(test.location)
            let token = try Self.amberSync(["user", "add", "ann", "--database", database])
            var server = try Child("amber-sync", ["serve", "--port", "0", "--database", database])
            let listening = try #require(await server.line(startingWith: "listening on "))
            let url = try #require(URL(string: String(listening.dropFirst("listening on ".count))))
            let port = try #require(url.port)

            let device = try AttachmentDevice(server: url, token: token)
            let bytes = Data((0..<Self.size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 13) })
            let photo = try device.client.attachments.add(bytes, mediaType: "image/png", fileName: "large.png")
            try device.notes.add(AttachedNote(id: UUID(), text: "large", photo: photo, files: []))
            let attachmentURL = url.appendingPathComponent("v1/attachments/\(photo.sha256)")

            let firstSync = Task { try await device.client.sync() }
            // Killed as soon as it holds 8 MiB: the upload has far more to go.
            let holdsSome = await eventually(within: 60) {
                let head = try? await Self.head(attachmentURL, token: token)
                return (head?.offset ?? 0) >= 8 * 1_048_576
            }
            server.kill()
            #expect(holdsSome, "the server never held 8 MiB of the upload")
            await #expect(throws: SyncError.self) { try await firstSync.value }

            server = try Child("amber-sync", ["serve", "--port", "\(port)", "--database", database])
            #expect(await server.line(startingWith: "listening on ") != nil, "the server restarts on its database")
            let afterRestart = try await Self.head(attachmentURL, token: token)
            #expect(afterRestart.status == 404, "a partial upload never answers as present")
            let held = try #require(afterRestart.offset)
            #expect(held > 0 && held < Int64(Self.size), "the server kept part of the upload: \(held) bytes")

            let events = Collected(device.client.events())
            try await device.client.sync()
            events.cancel()
            let received = try await Self.metric("amber_sync_attachment_bytes_received_total", at: url)
            #expect(received == Double(Int64(Self.size) - held), "only the bytes after the \(held) held were sent")
            let uploads = events.values.compactMap { event -> SyncProgress? in
                if case .progress(let progress) = event, progress.phase == .uploadingAttachments {
                    progress
                } else {
                    nil
                }
            }
            #expect(uploads.count > 2, "progress is reported as the chunks go out")
            #expect(uploads.map(\.bytes) == uploads.map(\.bytes).sorted())
            #expect(uploads.last?.bytes == Self.size - Int(held))
            #expect(uploads.last?.completed == 1)

            let head = try await Self.head(attachmentURL, token: token)
            #expect(head.status == 200)
            let reader = try AttachmentDevice(server: url, token: token)
            try await reader.client.sync()
            let file = try #require(reader.client.attachments.fileURL(for: photo))
            #expect(bytesDiffer(try Data(contentsOf: file), bytes) == nil)
            server.kill()
        }
    }

    /// Runs `amber-sync` to its end; the last line it printed.
    static func amberSync(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = builtExecutable(named: "amber-sync")
        process.arguments = arguments
        let result = try runToEnd(process)
        guard result.status == 0, let last = result.output.split(separator: "\n").last else {
            throw SyncTestError("amber-sync \(arguments.joined(separator: " ")) failed: \(result.error)")
        }
        return String(last)
    }

    /// A `HEAD` of an attachment: its status and `Amber-Upload-Offset`.
    static func head(_ url: URL, token: String) async throws -> (status: Int, offset: Int64?) {
        var request = URLRequest(url: url)
        request.httpMethod = "HEAD"
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (_, response) = try await load(request)
        return (
            response.statusCode,
            response.value(forHTTPHeaderField: SyncHeader.uploadOffset).flatMap { Int64($0) }
        )
    }

    /// A metric's value in the server's `GET /metrics`.
    static func metric(_ name: String, at server: URL) async throws -> Double {
        let line = try await metrics(at: server).split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return try #require(line.flatMap { Double($0.split(separator: " ")[1]) }, "\(name) is not in /metrics")
    }

    /// The server's `GET /metrics`, as text.
    static func metrics(at server: URL) async throws -> String {
        let (data, _) = try await load(URLRequest(url: server.appendingPathComponent("metrics")))
        return String(decoding: data, as: UTF8.self)
    }

    static func load(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let response = response as? HTTPURLResponse {
                    continuation.resume(returning: (data ?? Data(), response))
                } else {
                    continuation.resume(throwing: error ?? URLError(.badServerResponse))
                }
            }.resume()
        }
    }
}
