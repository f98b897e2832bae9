import Hummingbird

/// The context of every request to the sync server; the authentication middleware fills in ``user``.
struct SyncRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The user whose bearer token the request carries, once authenticated.
    var user: SyncUser?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}

/// The context of a request that passed authentication: handlers get the user without unwrapping.
struct AuthenticatedRequestContext: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    let user: SyncUser

    init(context: SyncRequestContext) throws {
        guard let user = context.user else { throw SyncServerError.unauthorized }
        self.coreContext = context.coreContext
        self.user = user
    }
}
