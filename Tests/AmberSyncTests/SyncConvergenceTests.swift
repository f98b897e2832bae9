import Amber
import AmberSQLite
import AmberSync
import AmberSyncProtocol
import AmberSyncServer
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import Testing

@Suite(.boundedConcurrency, .serialized) struct SyncConvergenceTests {
    /// Three clients make random adds, updates, removes and syncs; after two rounds of sync
    /// with no new writes, every client holds exactly the server's records.
    @Test(arguments: Backend.allCases, [1, 2, 3, 4, 5] as [UInt64])
    func threeClientsConvergeOnTheServersRecords(backend: Backend, seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let server = try await TestServer.start(backend, over: .inProcess)
        defer { Task { await server.stop() } }
        let token = try await server.addUser()
        let clients = try (0..<3).map { _ in try Device(server: server, token: token) }
        // A small pool of identities, so that clients often touch the same records.
        let ids = (0..<6).map { _ in UUID() }
        var log: [String] = []
        for _ in 0..<60 {
            let client = Int.random(in: 0..<3, using: &random)
            let device = clients[client]
            let id = ids[Int.random(in: 0..<ids.count, using: &random)]
            switch Int.random(in: 0..<10, using: &random) {
            case 0...2:
                let value = Note(
                    id: id, text: "t\(Int.random(in: 0..<5, using: &random))", tagIDs: [],
                    pinned: Bool.random(using: &random))
                try device.notes.add(value)
                log.append("\(client) add \(id.uuidString.prefix(4)) \(value.text) \(value.pinned)")
            case 3...4:
                let text = "u\(Int.random(in: 0..<5, using: &random))"
                try device.notes.update(id: id) { $0.with(text: text) }
                log.append("\(client) update \(id.uuidString.prefix(4)) \(text)")
            case 5:
                let pinned = Bool.random(using: &random)
                try device.notes.update(id: id) { $0.with(pinned: pinned) }
                log.append("\(client) pin \(id.uuidString.prefix(4)) \(pinned)")
            case 6...7:
                try device.notes.remove(id: id)
                log.append("\(client) remove \(id.uuidString.prefix(4))")
            default:
                try await device.client.sync()
                log.append("\(client) sync")
            }
        }
        for _ in 0..<2 {
            for device in clients { try await device.client.sync() }
        }
        let serverRecords = try await serverNotes(server, token: token)
        for (index, device) in clients.enumerated() {
            let local = Dictionary(uniqueKeysWithValues: device.notes.all.map { ($0.id, $0) })
            #expect(
                local == serverRecords, "client \(index) differs from the server after:\n\(log.joined(separator: "\n"))"
            )
            #expect(device.client.pendingCount == 0)
        }
    }

    /// The server's live notes, read by a new client.
    private func serverNotes(_ server: TestServer, token: String) async throws -> [UUID: Note] {
        let reader = try Device(server: server, token: token)
        try await reader.client.sync()
        return Dictionary(uniqueKeysWithValues: reader.notes.all.map { ($0.id, $0) })
    }
}
