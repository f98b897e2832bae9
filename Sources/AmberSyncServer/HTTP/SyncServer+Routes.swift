import AmberSyncProtocol
import Foundation
import Hummingbird
import ServiceLifecycle

extension SyncServer {
    /// The routes of protocol v1 and `/metrics`, behind the metrics and error middleware; all but
    /// health and metrics behind authentication.
    func makeRouter() -> Router<SyncRequestContext> {
        let router = Router(context: SyncRequestContext.self)
        router.add(middleware: RequestMetricsMiddleware(metrics: metrics))
        router.add(middleware: DatabaseIdentityMiddleware(database: database))
        router.add(middleware: ErrorMiddleware(logger: logger))
        router.get("/v1/health") { _, _ in
            try Response.json(HealthResponse())
        }
        let metrics = self.metrics
        router.get("/metrics") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.registry.emitToBuffer()))
            )
        }
        let authenticated = router.group("/v1")
            .add(middleware: AuthenticationMiddleware(database: database, metrics: metrics, jwtVerifier: jwtVerifier))
            .group(context: AuthenticatedRequestContext.self)
        authenticated.post("push") { request, context in
            try await push(request, user: context.user)
        }
        authenticated.get("pull") { request, context in
            try await pull(request, user: context.user, heldTime: context.heldTime, tokenExpiry: context.tokenExpiry)
        }
        return router
    }

    private func push(_ request: Request, user: SyncUser) async throws -> Response {
        let body = try await request.collectBody(limit: maximumBodySize)
        let push = try JSONBody.decode(PushRequest.self, from: body.readableBytesView)
        let results = try await metrics.database(.push) {
            try await database.push(push.mutations, clientID: push.clientID, for: user)
        }
        if results.contains(where: { $0.status == .applied }) {
            database.changeNotifier.notify(userID: user.id)
        }
        return try Response.json(PushResponse(results: results))
    }

    private func pull(_ request: Request, user: SyncUser, heldTime: HeldTime, tokenExpiry: Date?) async throws
        -> Response
    {
        let query = try PullQuery(request.uri.queryParameters)
        try await checkHistory(of: query, for: user)
        let notifier = database.changeNotifier
        let clock = ContinuousClock()
        // A JWT's pull waits no longer than the token holds.
        let expiry = tokenExpiry.map { clock.now + .seconds($0.timeIntervalSinceNow) }
        let deadline = min(clock.now + .seconds(query.wait), expiry ?? .now + .seconds(query.wait))
        var waited = false
        while true {
            // Read the generation before looking, so a push committing in between still wakes the wait.
            let generation = notifier.generation(for: user.id)
            // The pulls one push wakes ask the same question at once: one read answers them all.
            let key = PullCoalescer.Key(
                userID: user.id, cursor: query.cursor, limit: query.limit, generation: generation)
            let (database, metrics) = (database, metrics)
            let answer = try await pullCoalescer.answer(for: key) {
                try await metrics.database(.pull) {
                    var page = try await database.pull(for: user, after: query.cursor, limit: query.limit)
                    if page.cursor > 0 {
                        page.cursorTag = try await database.historyTag(for: user, at: page.cursor)
                    }
                    return page
                }
            }
            try Self.checkExpiry(expiry, waited: waited, clock: clock)
            let remaining = clock.now.duration(to: deadline)
            guard answer.response.changes.isEmpty, remaining > .zero else {
                return answer.httpResponse
            }
            let waitStart = clock.now
            let woken = await metrics.waiting {
                await cancelWhenGracefulShutdown {
                    await notifier.wait(for: user.id, after: generation, timeout: remaining)
                }
            }
            heldTime.add(waitStart.duration(to: clock.now))
            waited = true
            try Self.checkExpiry(expiry, waited: waited, clock: clock)
            guard woken else {
                // The wait ran to the token's expiry (a timer may fire a moment early): refused.
                if let expiry, expiry <= deadline { try Self.checkExpiry(expiry, waited: true, clock: nil) }
                return answer.httpResponse
            }
        }
    }

    /// Refuses a pull that waited past its token's expiry: it never answers with what was written after.
    /// Without a clock, refuses whenever there is an expiry.
    private static func checkExpiry(_ expiry: ContinuousClock.Instant?, waited: Bool, clock: ContinuousClock?) throws {
        guard waited, let expiry, clock.map({ $0.now >= expiry }) ?? true else { return }
        throw SyncServerError.invalidToken(
            "The token expired while the pull waited; get a fresh one from the identity provider.")
    }

    /// Refuses a cursor that is not in the server's history: beyond the user's last version, or
    /// sent with a tag the server did not give for it (the database was restored from a backup).
    private func checkHistory(of query: PullQuery, for user: SyncUser) async throws {
        guard query.cursor > 0 else { return }
        let (database, metrics) = (database, metrics)
        let tag = try await metrics.database(.pull) {
            try await database.historyTag(for: user, at: query.cursor)
        }
        guard let tag, query.cursorTag.map({ $0 == tag }) ?? true else {
            throw SyncServerError.historyChanged(cursor: query.cursor)
        }
    }
}
