import AmberLock

/// The pulls held waiting for a change, in all and per user, held within ``SyncServerLimits``.
final class WaitingPulls: Sendable {
    private struct Counts {
        var total = 0
        var perUser: [Int64: Int] = [:]
    }

    private let counts = LockedValue(Counts())

    /// Counts one more waiting pull of `userID`.
    ///
    /// - Throws: ``SyncServerError/tooManyWaitingPulls(limit:perUser:)`` when the user or the
    ///   server already holds as many as `limits` allow; nothing is counted then.
    func hold(userID: Int64, limits: SyncServerLimits) throws {
        try counts.withLock { counts in
            let ofUser = counts.perUser[userID, default: 0]
            guard ofUser < limits.maximumWaitingPullsPerUser else {
                throw SyncServerError.tooManyWaitingPulls(limit: limits.maximumWaitingPullsPerUser, perUser: true)
            }
            guard counts.total < limits.maximumWaitingPulls else {
                throw SyncServerError.tooManyWaitingPulls(limit: limits.maximumWaitingPulls, perUser: false)
            }
            counts.total += 1
            counts.perUser[userID] = ofUser + 1
        }
    }

    /// Counts one waiting pull of `userID` less.
    func release(userID: Int64) {
        counts.withLock { counts in
            counts.total -= 1
            let ofUser = counts.perUser[userID, default: 1] - 1
            counts.perUser[userID] = ofUser > 0 ? ofUser : nil
        }
    }
}
