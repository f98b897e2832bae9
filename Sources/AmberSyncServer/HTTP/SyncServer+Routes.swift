import AmberSyncProtocol
import Hummingbird
import ServiceLifecycle

extension SyncServer {
    /// The routes of protocol v1, behind the error middleware; all but health behind authentication.
    func makeRouter() -> Router<SyncRequestContext> {
        let router = Router(context: SyncRequestContext.self)
        router.add(middleware: ErrorMiddleware(logger: logger))
        router.get("/v1/health") { _, _ in
            try Response.json(HealthResponse())
        }
        let authenticated = router.group("/v1")
            .add(middleware: AuthenticationMiddleware(database: database))
            .group(context: AuthenticatedRequestContext.self)
        authenticated.post("push") { request, context in
            try await push(request, user: context.user)
        }
        authenticated.get("pull") { request, context in
            try await pull(request, user: context.user)
        }
        return router
    }

    private func push(_ request: Request, user: SyncUser) async throws -> Response {
        let body = try await request.collectBody(limit: maximumBodySize)
        let push = try JSONBody.decode(PushRequest.self, from: body.readableBytesView)
        let results = try await database.push(push.mutations, clientID: push.clientID, for: user)
        if results.contains(where: { $0.status == .applied }) {
            database.changeNotifier.notify(userID: user.id)
        }
        return try Response.json(PushResponse(results: results))
    }

    private func pull(_ request: Request, user: SyncUser) async throws -> Response {
        let query = try PullQuery(request.uri.queryParameters)
        let notifier = database.changeNotifier
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(query.wait)
        while true {
            // Read the generation before looking, so a push committing in between still wakes the wait.
            let generation = notifier.generation(for: user.id)
            let response = try await database.pull(for: user, after: query.cursor, limit: query.limit)
            let remaining = clock.now.duration(to: deadline)
            guard response.changes.isEmpty, remaining > .zero else {
                return try Response.json(response)
            }
            let woken = await cancelWhenGracefulShutdown {
                await notifier.wait(for: user.id, after: generation, timeout: remaining)
            }
            guard woken else {
                return try Response.json(response)
            }
        }
    }
}
