import AmberSyncProtocol

/// What one ``SyncServer`` holds at most, and how long it waits for a slow client.
///
/// Every refusal is an answer the client can read: a connection over ``maximumConnections`` gets
/// `503` with `Retry-After`, a pull over ``maximumWaitingPulls`` or
/// ``maximumWaitingPullsPerUser`` gets `429` with `Retry-After`, and a connection that stays
/// silent for ``idleTimeout`` (nothing sent, headers or body cut off halfway, or idle between
/// requests) is closed.
///
/// ```swift
/// var limits = SyncServerLimits()
/// limits.maximumWaitingPullsPerUser = 20
/// let server = SyncServer(database: database, limits: limits)
/// ```
public struct SyncServerLimits: Sendable, Equatable {
    /// How long a connection may stay silent while it sends a request, or between requests,
    /// before it is closed. A pull held waiting for a change is not silent.
    public var idleTimeout: Duration = .seconds(30)
    /// The most connections open at once; one more is answered `503` and closed.
    public var maximumConnections = 8_192
    /// The most pulls held waiting for a change at once, all users together.
    public var maximumWaitingPulls = 4_096
    /// The most pulls of one user held waiting for a change at once.
    public var maximumWaitingPullsPerUser = 100
    /// The most bytes of record values in one pull answer; a page stops before the record that
    /// would pass it (but holds at least one record) and says `hasMore`.
    public var maximumPullBytes = SyncLimits.defaultMaximumBody
    /// The largest attachment accepted, in bytes (100 MiB by default); a larger one is answered `413`.
    public var maximumAttachmentSize: Int64 = 100 * 1_024 * 1_024
    /// The most bytes of attachments one user keeps, all together; an upload past it is answered
    /// `413`. `nil`, the default, sets no quota.
    public var attachmentQuota: Int64?
    /// The seconds a refused client is told to wait (`Retry-After`).
    public var retryAfterSeconds = 5

    /// The default limits.
    public init() {}
}
