import AmberSync
import AmberSyncServer
import Foundation
import NIOEmbedded

/// Hands a sync client's requests to a ``SyncServer``'s router in the same process: no socket,
/// no port, every route and middleware as over HTTP.
///
/// ```swift
/// let transport = try await InProcessSyncTransport(server: SyncServer(database: database))
/// let client = try SyncClient(storage: storage, transport: transport) { token }
/// ```
package struct InProcessSyncTransport: SyncTransport {
    /// Names the server in messages; attachments, which travel over HTTP, find no server there.
    package let server = URL(string: "http://in-process.invalid")!
    private let responder: InProcessSyncResponder

    /// Migrates the server's database and makes its router ready to answer.
    package init(server: SyncServer) async throws {
        try await server.database.migrate()
        responder = server.makeInProcessResponder(channel: NIOAsyncTestingChannel())
    }

    package func send(_ request: SyncTransportRequest) async throws(SyncError) -> SyncTransportResponse {
        let answer = await responder.respond(
            method: request.method, target: request.target, headers: request.headers, body: request.body)
        return SyncTransportResponse(status: answer.status, headers: answer.headers, body: answer.body)
    }
}
