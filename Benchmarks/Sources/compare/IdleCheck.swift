import Amber
import AmberSQLite
import Foundation

/// What an idle app with five open stores on one SQLite file costs: the process's voluntary
/// context switches (each wake-up of a watcher thread is at least one) per second, measured with
/// the stores open and, as the baseline, with none open.
enum IdleCheck {
    static let stores = 5
    static let seconds = 5.0
    /// The most wake-ups a second the open stores may add to an idle process.
    static let target = 5

    static var check: Check {
        Check(
            printed: ["stores", "wakeups_per_s_with_stores", "wakeups_per_s_without"],
            ours: "wakeups_per_s_with_stores", baseline: "wakeups_per_s_without", unit: "wake-ups/s",
            target: "≤ \(target) more than without"
        ) {
            let without = try await wakeupsPerSecond(openingStores: false)
            let with = try await wakeupsPerSecond(openingStores: true)
            let figures = ["stores": stores, "wakeups_per_s_with_stores": with, "wakeups_per_s_without": without]
            return (figures, with - without <= target)
        }
    }

    @MainActor
    private static func wakeupsPerSecond(openingStores: Bool) async throws -> Int {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        var open: [IdentityStore<Entry>] = []
        if openingStores {
            let storage = try SQLiteStorage(path: directory.path("idle.sqlite"))
            for index in 0..<stores {
                let store = try IdentityStore<Entry>(key: "store\(index)", storage: storage)
                try store.add(Entry(id: "a", index: index, payload: ""))
                open.append(store)
            }
        }
        // Past the first second, when a watcher that saw no change has slowed down.
        try await Task.sleep(nanoseconds: 1_500_000_000)
        let before = contextSwitches()
        try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
        let after = contextSwitches()
        withExtendedLifetime(open) {}
        return Int((Double(after - before) / seconds).rounded())
    }

    private static func contextSwitches() -> Int {
        var usage = rusage()
        #if canImport(Glibc)
            getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        return usage.ru_nvcsw
    }
}
