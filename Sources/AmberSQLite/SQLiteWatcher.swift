import Amber
import AmberLock
import Foundation
import GRDB

/// The one watcher of an ``SQLiteStorage`` instance: tells its open keys when another connection
/// (another process, another instance) or another key of this instance may have written.
///
/// It checks `PRAGMA data_version`, which changes when another connection commits, and the
/// instance's own write counter: one cheap read per tick for all the keys. Ticks come every
/// 100 ms after a change and slow down to every 500 ms once nothing has changed for a second,
/// so an idle app wakes twice a second per storage file, whatever its number of stores.
final class SQLiteWatcher: Sendable {
    static let fastInterval = 100
    static let slowInterval = 500
    /// Quiet ticks at the fast interval before slowing down.
    static let ticksBeforeSlowing = 10

    private let database: DatabaseQueue
    private let localWrites: LockedValue<Int>
    private let state = LockedValue(State())

    private struct State {
        var signals: [ObjectIdentifier: @Sendable () -> Void] = [:]
        var timer: DispatchSourceTimer?
        var dataVersion: Int64?
        var localWrites = 0
        var quietTicks = 0
        var isSlow = false
        /// Ticks so far, and how many found a change: for measuring what watching costs.
        var ticks = 0
    }

    init(database: DatabaseQueue, localWrites: LockedValue<Int>) {
        self.database = database
        self.localWrites = localWrites
    }

    func add(_ key: ObjectIdentifier, signal: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.signals[key] = signal
            guard state.timer == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "amber.sqlite-storage.watcher"))
            timer.setEventHandler { [weak self] in self?.tick() }
            Self.schedule(timer, every: Self.fastInterval)
            state.timer = timer
            state.quietTicks = 0
            state.isSlow = false
            timer.resume()
        }
    }

    func remove(_ key: ObjectIdentifier) {
        state.withLock { state in
            state.signals[key] = nil
            guard state.signals.isEmpty else { return }
            state.timer?.cancel()
            state.timer = nil
        }
    }

    /// The number of ticks so far.
    var ticks: Int { state.withLock { $0.ticks } }

    deinit {
        state.withLock { $0.timer?.cancel() }
    }

    private func tick() {
        let writes = localWrites.withLock { $0 }
        let dataVersion = try? database.read { try Int64.fetchOne($0, sql: "PRAGMA data_version") }
        let signals = state.withLock { state -> [@Sendable () -> Void] in
            state.ticks += 1
            let changed = state.dataVersion != dataVersion || state.localWrites != writes
            state.dataVersion = dataVersion
            state.localWrites = writes
            if changed {
                state.quietTicks = 0
                if state.isSlow, let timer = state.timer {
                    Self.schedule(timer, every: Self.fastInterval)
                    state.isSlow = false
                }
                return Array(state.signals.values)
            }
            state.quietTicks += 1
            if !state.isSlow, state.quietTicks >= Self.ticksBeforeSlowing, let timer = state.timer {
                Self.schedule(timer, every: Self.slowInterval)
                state.isSlow = true
            }
            return []
        }
        for signal in signals { signal() }
    }

    private static func schedule(_ timer: DispatchSourceTimer, every milliseconds: Int) {
        timer.schedule(
            deadline: .now() + .milliseconds(milliseconds), repeating: .milliseconds(milliseconds),
            leeway: .milliseconds(milliseconds / 5))
    }
}
