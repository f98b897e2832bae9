import AmberLock

/// A registration of an observer; ``cancel()`` ends it.
///
/// Observations with an owner also end by themselves when the owner goes away, so keeping
/// the token is only needed to stop observing earlier. Dropping the token does not cancel.
public final class ObservationToken: Sendable {
    private let onCancel: LockedValue<(@Sendable () -> Void)?>

    init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = LockedValue(onCancel)
    }

    /// Ends the observation: the observer is not called again. Calling it twice does nothing.
    public func cancel() {
        let onCancel = onCancel.withLock { onCancel in
            defer { onCancel = nil }
            return onCancel
        }
        onCancel?()
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool {
        onCancel.withLock { $0 == nil }
    }
}
