import AmberLock
import Foundation
import Hummingbird

/// The context of every request to the sync server; the authentication middleware fills in ``user``.
struct SyncRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The user whose bearer token the request carries, once authenticated.
    var user: SyncUser?
    /// When the request's JWT expires; `nil` for an operator token or a JWT without `exp`.
    var tokenExpiry: Date?
    /// The bearer token, when authentication left it for the push to check.
    var uncheckedToken: String?
    /// How long the request was held waiting for a change, which its latency leaves out.
    let heldTime = HeldTime()

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}

/// The context of a request that passed authentication: handlers get the user without unwrapping.
struct AuthenticatedRequestContext: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    let user: SyncUser
    /// When the request's JWT expires: a pull waits no longer.
    let tokenExpiry: Date?
    /// The bearer token, when authentication left it for the push to check: ``user`` is the user
    /// it belonged to when last looked up.
    let uncheckedToken: String?
    /// The request's ``SyncRequestContext/heldTime``, shared with the middleware that reads it.
    let heldTime: HeldTime

    init(context: SyncRequestContext) throws {
        guard let user = context.user else { throw SyncServerError.unauthorized }
        self.coreContext = context.coreContext
        self.user = user
        self.tokenExpiry = context.tokenExpiry
        self.uncheckedToken = context.uncheckedToken
        self.heldTime = context.heldTime
    }
}

/// The time one request spent held waiting for a change: the pull handler adds to it, and the
/// metrics middleware subtracts it from the request's latency.
final class HeldTime: Sendable {
    private let total = LockedValue(Duration.zero)

    /// The time held so far.
    var duration: Duration {
        total.withLock { $0 }
    }

    /// Adds one wait's length.
    func add(_ duration: Duration) {
        total.withLock { $0 += duration }
    }
}
