import AmberSyncProtocol
import Foundation
import Hummingbird
import ServiceLifecycle

extension SyncServer {
    /// The routes of protocol v1, its OpenAPI document and `/metrics`, behind ``AnswerMiddleware``
    /// (errors, database identity, compression, metrics); all but health, the document and
    /// metrics behind authentication.
    func makeRouter() -> Router<SyncRequestContext> {
        let router = Router(context: SyncRequestContext.self)
        let allowedMethods = AllowedMethods()
        router.add(
            middleware: AnswerMiddleware(
                errors: ErrorAnswer(
                    logger: logger, allowedMethods: allowedMethods, retryAfterSeconds: limits.retryAfterSeconds),
                compression: GzipCompression(),
                database: database,
                metrics: RequestMetricsRecorder(metrics: metrics)))
        router.get("/v1/health") { _, _ in
            try Response.json(HealthResponse())
        }
        let document = ByteBuffer(string: Self.openAPIDocument)
        router.get("/v1/openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: document))
        }
        let metrics = self.metrics
        router.get("/metrics") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.registry.emitToBuffer()))
            )
        }
        // Pushes check a token the database remembers in their own transaction.
        router.group("/v1")
            .add(
                middleware: AuthenticationMiddleware(
                    database: database, metrics: metrics, jwtVerifier: jwtVerifier, checksTokenWithPush: true)
            )
            .group(context: AuthenticatedRequestContext.self)
            .post("push") { request, context in
                try await push(request, user: context.user, uncheckedToken: context.uncheckedToken)
            }
        let authenticated = router.group("/v1")
            .add(middleware: AuthenticationMiddleware(database: database, metrics: metrics, jwtVerifier: jwtVerifier))
            .group(context: AuthenticatedRequestContext.self)
        authenticated.get("pull") { request, context in
            try await pull(request, user: context.user, heldTime: context.heldTime, tokenExpiry: context.tokenExpiry)
        }
        addAttachmentRoutes(to: authenticated)
        allowedMethods.set(router.routes.map { (path: $0.path.description, method: $0.method) })
        return router
    }

    /// The method and path of every route the server answers, such as `GET /v1/health`.
    package var routes: [String] {
        makeRouter().routes.map { "\($0.method) \($0.path)" }
    }

    /// Answers a push. With an `uncheckedToken`, the database checks it as part of the push, and
    /// any other answer waits for it to be checked: a revoked token is refused before anything else.
    private func push(_ request: Request, user: SyncUser, uncheckedToken: String?) async throws -> Response {
        guard let uncheckedToken else { return try await push(request, user: user, checkingToken: nil) }
        do {
            return try await push(request, user: user, checkingToken: uncheckedToken)
        } catch SyncServerError.unauthorized {
            throw SyncServerError.unauthorized
        } catch {
            let (database, metrics) = (database, metrics)
            let current = try await metrics.database(.authenticate) {
                try await database.user(forToken: uncheckedToken)
            }
            guard current?.id == user.id else { throw SyncServerError.unauthorized }
            throw error
        }
    }

    private func push(_ request: Request, user: SyncUser, checkingToken token: String?) async throws -> Response {
        let body = try await request.collectBody(limit: maximumBodySize)
        let push = try await Self.decode(PushRequest.self, from: body)
        if let cursor = push.cursor, cursor < 0 {
            throw SyncServerError.invalidRequest("cursor must be 0 or more, not \(cursor).")
        }
        if let tag = push.cursorTag, !PullQuery.isCursorTag(tag) {
            throw SyncServerError.invalidRequest(
                "cursorTag must be 1 to 64 printable ASCII characters, as a pull answered it.")
        }
        let results = try await metrics.database(.push) {
            if let token {
                try await database.push(push.mutations, clientID: push.clientID, for: user, checkingToken: token)
            } else {
                try await database.push(push.mutations, clientID: push.clientID, for: user)
            }
        }
        if results.contains(where: { $0.status == .applied }) {
            database.changeNotifier.notify(userID: user.id)
        }
        var response = PushResponse(results: results)
        // The client's own changes right after its cursor, in the history it followed (its cursor
        // is 0, or another with the tag the server gives there now): it need not pull them back.
        // The tag at its cursor and the one at its new cursor are read in one look-up.
        if let cursor = push.cursor, let last = PushResponse.cursor(after: cursor, applying: results),
            cursor == 0 || push.cursorTag != nil
        {
            let versions = cursor == 0 ? [last] : [cursor, last]
            let tags = try await metrics.database(.push) { try await database.historyTags(for: user, at: versions) }
            if tags.count == versions.count, cursor == 0 || tags[0] == push.cursorTag, let tag = tags[tags.count - 1] {
                (response.cursor, response.cursorTag) = (last, tag)
            }
        }
        return try Response.json(response)
    }

    /// Decodes a request body; a large one on a thread of its own, so that decoding it does not
    /// hold up other users' requests on the shared executor.
    static func decode<Value: JSONWireDecodable & Sendable>(_ type: Value.Type, from body: ByteBuffer) async throws
        -> Value
    {
        guard body.readableBytes > largeBody else {
            return try JSONBody.decode(type, from: body.readableBytesView)
        }
        return try await withCheckedThrowingContinuation { continuation in
            decodingQueues.randomElement()!.async {
                continuation.resume(with: Result { try JSONBody.decode(type, from: body.readableBytesView) })
            }
        }
    }

    /// Bodies above this many bytes are decoded on ``decodingQueues``.
    static let largeBody = 64 * 1_024

    /// Where large bodies are decoded and large answers compressed: serial queues, each with a
    /// thread of its own. (A concurrent queue would share its threads with the executor that runs
    /// every request.)
    static let decodingQueues = (0..<max(2, ProcessInfo.processInfo.activeProcessorCount)).map { index in
        DispatchQueue(label: "amber-sync.decoding.\(index)")
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
        defer {
            if waited { waitingPulls.release(userID: user.id) }
        }
        while true {
            // Read the generation before looking, so a push committing in between still wakes the wait.
            let generation = notifier.generation(for: user.id)
            // The pulls one push wakes ask the same question at once: one read answers them all.
            let key = PullCoalescer.Key(
                userID: user.id, cursor: query.cursor, limit: query.limit, generation: generation)
            let (database, metrics, maximumBytes) = (database, metrics, limits.maximumPullBytes)
            let answer = try await pullCoalescer.answer(for: key) {
                try await metrics.database(.pull) {
                    var page = try await database.pull(
                        for: user, after: query.cursor, limit: query.limit, maximumBytes: maximumBytes)
                    if page.cursor > 0 {
                        page.cursorTag = try await database.historyTag(for: user, at: page.cursor)
                    }
                    return page
                }
            }
            try Self.checkExpiry(expiry, waited: waited, clock: clock)
            let remaining = clock.now.duration(to: deadline)
            guard answer.isEmpty, remaining > .zero else {
                if waited {
                    // The token may have been revoked while the pull waited.
                    try await checkToken(of: request, user: user, generation: generation)
                }
                return answer.httpResponse
            }
            if !waited {
                try waitingPulls.hold(userID: user.id, limits: limits)
                waited = true
            }
            let waitStart = clock.now
            let woken = await metrics.waiting {
                // A graceful shutdown ends the wait too: the pull is answered before the server stops.
                await notifier.wait(for: user.id, after: generation, timeout: remaining)
            }
            heldTime.add(waitStart.duration(to: clock.now))
            waited = true
            try Self.checkExpiry(expiry, waited: waited, clock: clock)
            guard woken else {
                // The wait ran to the token's expiry (a timer may fire a moment early): refused.
                if let expiry, expiry <= deadline { try Self.checkExpiry(expiry, waited: true, clock: nil) }
                try await checkToken(of: request, user: user, generation: notifier.generation(for: user.id))
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
        // Pulls arriving together at one cursor share the read. It runs in a task of its own, so
        // the deep stack of a database call is not left allocated to a pull that then waits.
        let tag = try await historyChecks.value(for: HistoryCheck(userID: user.id, cursor: query.cursor)) {
            try await metrics.database(.pull) {
                try await database.historyTag(for: user, at: query.cursor)
            }
        }
        guard let tag, query.cursorTag.map({ $0 == tag }) ?? true else {
            throw SyncServerError.historyChanged(cursor: query.cursor)
        }
    }

    /// Looks the request's token up again, as authentication did.
    ///
    /// - Throws: ``SyncServerError/unauthorized`` when the token no longer belongs to `user`.
    ///
    /// The pulls one push wakes check together: those with the same token, woken at the same
    /// `generation` of the user's notifier, share one read, which starts after the wake, so after
    /// any revocation committed before the push.
    private func checkToken(of request: Request, user: SyncUser, generation: UInt64) async throws {
        let (database, metrics) = (database, metrics)
        guard let token = AuthenticationMiddleware.bearerToken(in: request.headers[.authorization]) else {
            throw SyncServerError.unauthorized
        }
        // A JWT is not revoked on this server; its expiry is checked apart.
        if jwtVerifier != nil, JWTVerifier.looksLikeJWT(token) { return }
        let current = try await tokenChecks.value(for: TokenCheck(token: token, generation: generation)) {
            try await metrics.database(.authenticate, { try await database.user(forToken: token) })
        }
        guard let current, current.id == user.id else { throw SyncServerError.unauthorized }
    }

    /// A cursor of a user whose place in the server's history is being read.
    struct HistoryCheck: Hashable, Sendable {
        let userID: Int64
        let cursor: Int64
    }

    /// A token checked once the pulls of one wake-up of its user are answered.
    struct TokenCheck: Hashable, Sendable {
        let token: String
        let generation: UInt64
    }
}
