import Dispatch

/// Whether code runs on the main queue, where the main actor runs.
///
/// `Thread.isMainThread` is not a reliable test: on Linux under `swift test` it is `false`
/// on the main actor. A `DispatchSpecificKey` set on the main queue is.
package enum MainQueue {
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    package static var isCurrent: Bool {
        DispatchQueue.getSpecific(key: key) == true
    }

    /// Runs `body` on the main actor: at once when already there, otherwise soon after.
    static func run(_ body: @escaping @MainActor @Sendable () -> Void) {
        if isCurrent {
            MainActor.assumeIsolated { body() }
        } else {
            Task { @MainActor in body() }
        }
    }
}
