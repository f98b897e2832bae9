import AmberSyncProtocol
import AmberTestSupport
import Foundation
import Testing

@testable import AmberSyncServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How soon a process hears of a commit another process made to the same SQLite file: two
/// database objects on one file stand for the two `amber-sync serve` processes.
@Suite(.boundedConcurrency) struct ExternalCommitWatcherTests {
    /// With file events (Linux), a push through one wakes a pull waiting on the other within a few
    /// milliseconds: the median over 20 pushes stays far under what polling every 250 ms gives
    /// (125 ms on average). The time runs from the push's start to the notification, seen by a
    /// thread of the test's own, so a busy cooperative pool does not stretch it.
    @Test(.enabled(if: Self.hasFileEvents))
    func aPushThroughOneProcessWakesTheOtherWithinMilliseconds() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sync.sqlite").path
        let serving = try SQLiteSyncDatabase(path: path)
        let other = try SQLiteSyncDatabase(path: path)
        #expect(serving.watchesFileEvents)
        let token = try await other.addUser(named: "ann")
        let ann = try #require(try await other.user(forToken: token))
        let notifier = serving.changeNotifier

        var latencies: [Duration] = []
        for round in 1...20 {
            // Let the user's creation (or the last round's push) settle first.
            try await Task.sleep(for: .milliseconds(Int.random(in: 20...250)))
            let generation = notifier.generation(for: ann.id)
            let woken = Task {
                try await onOwnThread { Self.waitBlocking(notifier, userID: ann.id, after: generation) }
            }
            let start = ContinuousClock.now
            _ = try await other.push(
                [
                    Mutation(
                        mutationID: Int64(round), collection: "notes", id: "n\(round)", baseVersion: nil, value: [:])
                ],
                clientID: "c", for: ann)
            let wokenAt = try #require(try await woken.value, "round \(round): no notification within 10 s")
            latencies.append(start.duration(to: wokenAt))
        }
        let median = latencies.sorted()[latencies.count / 2]
        #expect(median < .milliseconds(60), "median \(median) of \(latencies.sorted())")
    }

    /// Without file events (other platforms, or inotify's limits reached) the file is polled.
    @Test func withoutFileEventsAPushStillWakesTheOtherProcess() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sync.sqlite").path
        let serving = try SQLiteSyncDatabase(path: path, watchesFileEvents: false)
        let other = try SQLiteSyncDatabase(path: path)
        #expect(!serving.watchesFileEvents)
        let token = try await other.addUser(named: "ann")
        let ann = try #require(try await other.user(forToken: token))
        let generation = serving.changeNotifier.generation(for: ann.id)
        _ = try await other.push(
            [Mutation(mutationID: 1, collection: "notes", id: "n", baseVersion: nil, value: [:])], clientID: "c",
            for: ann)
        #expect(await serving.changeNotifier.wait(for: ann.id, after: generation, timeout: .seconds(10)))
    }

    /// Stopping the watcher ends its thread and closes the descriptors it opened, at once, however
    /// long its next check is away; stopping again does nothing.
    @Test func stoppingEndsTheThreadAndClosesItsDescriptors() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sync.sqlite").path
        let database = try SQLiteSyncDatabase(path: path)
        let watcher = try ExternalCommitWatcher(
            path: path, notifier: database.changeNotifier, fallbackInterval: .seconds(60), fileEvents: false)
        #expect(watcher.isRunning)
        let clock = ContinuousClock()
        let start = clock.now
        try await onOwnThread { watcher.stop() }
        #expect(start.duration(to: clock.now) < .seconds(5))
        #expect(!watcher.isRunning)
        watcher.stop()
    }

    static let hasFileEvents: Bool = {
        #if canImport(Glibc)
            true
        #else
            false
        #endif
    }()

    /// Waits on the calling thread until `userID`'s generation passes `generation`: the instant
    /// it saw that, or `nil` after 10 seconds.
    private static func waitBlocking(_ notifier: ChangeNotifier, userID: Int64, after generation: UInt64)
        -> ContinuousClock.Instant?
    {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if notifier.generation(for: userID) > generation { return .now }
            usleep(200)
        }
        return nil
    }
}
