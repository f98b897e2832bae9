import AmberLock

/// Ends what an object started once the object goes away: cancels the observations made on its
/// behalf and finishes its streams.
///
/// An object keeps one in a stored property; when the object is released, so is this, and its
/// `deinit` runs the endings. That needs no `deinit` in the object itself, which a main-actor
/// class could not run on its actor.
final class Lifetime: Sendable {
    private let endings = LockedValue<(next: Int, endings: [Int: @Sendable () -> Void])>((0, [:]))

    init() {}

    /// Runs `ending` when this lifetime ends, unless ``forget(_:)`` is called with the key first.
    @discardableResult
    func onEnd(_ ending: @escaping @Sendable () -> Void) -> Int {
        endings.withLock { state in
            state.next += 1
            state.endings[state.next] = ending
            return state.next
        }
    }

    /// Drops an ending that is no longer needed.
    func forget(_ key: Int) {
        _ = endings.withLock { $0.endings.removeValue(forKey: key) }
    }

    deinit {
        for ending in endings.withLock({ $0.endings.values }) { ending() }
    }
}
