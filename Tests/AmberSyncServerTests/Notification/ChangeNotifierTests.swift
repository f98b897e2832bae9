import AmberSyncServer
import AmberTestSupport
import Logging
import ServiceLifecycle
import Testing

@Suite(.boundedConcurrency) struct ChangeNotifierTests {
    @Test func aNotificationAfterTheGenerationWasReadEndsTheWaitAtOnce() async {
        let notifier = ChangeNotifier()
        let generation = notifier.generation(for: 1)
        notifier.notify(userID: 1)
        #expect(notifier.generation(for: 1) == generation + 1)
        #expect(await notifier.wait(for: 1, after: generation, timeout: .seconds(30)))
    }

    @Test func aWaitIsWokenByANotificationOfItsUserOnly() async {
        let notifier = ChangeNotifier()
        let generation = notifier.generation(for: 1)
        async let woken = notifier.wait(for: 1, after: generation, timeout: .seconds(30))
        async let other = notifier.wait(for: 2, after: notifier.generation(for: 2), timeout: .milliseconds(800))
        try? await Task.sleep(for: .milliseconds(100))
        notifier.notify(userID: 1)
        #expect(await woken)
        #expect(await other == false)
    }

    @Test func aWaitTimesOutAndACancelledWaitEnds() async {
        let notifier = ChangeNotifier()
        let clock = ContinuousClock()
        let start = clock.now
        #expect(await notifier.wait(for: 1, after: 0, timeout: .milliseconds(200)) == false)
        #expect(start.duration(to: clock.now) >= .milliseconds(190))

        let task = Task { await notifier.wait(for: 1, after: 0, timeout: .seconds(60)) }
        try? await Task.sleep(for: .milliseconds(100))
        task.cancel()
        #expect(await task.value == false)
        #expect(start.duration(to: clock.now) < .seconds(30))
    }

    @Test func manyWaitersRacingNotificationsAreAllWoken() async {
        let notifier = ChangeNotifier()
        let woken = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<200 {
                let generation = notifier.generation(for: 7)
                group.addTask { await notifier.wait(for: 7, after: generation, timeout: .seconds(30)) }
                if index.isMultiple(of: 50) { notifier.notify(userID: 7) }
            }
            try? await Task.sleep(for: .milliseconds(50))
            notifier.notify(userID: 7)
            var all: [Bool] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(woken.count == 200)
        #expect(woken.allSatisfy { $0 })
    }

    /// A server answers its waiting pulls before it stops: a graceful shutdown of the service
    /// group a wait runs in ends the wait at once, and a wait that starts after it ends at once.
    @Test func aGracefulShutdownEndsTheWaitsOfItsServiceGroup() async throws {
        let notifier = ChangeNotifier()
        let waits = WaitingService(notifier: notifier)
        let group = ServiceGroup(
            configuration: .init(services: [waits], logger: Logger(label: "change-notifier-tests")))
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            _ = await waits.started.first { _ in true }
            try await Task.sleep(for: .milliseconds(100))
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        waits.resultsContinuation.finish()
        var results: [Bool] = []
        for await result in waits.results { results.append(result) }
        #expect(results == [false, false])
        #expect(start.duration(to: clock.now) < .seconds(30))
    }
}

/// A service that waits on a notifier for a minute, then once more after a graceful shutdown.
private final class WaitingService: Service {
    let notifier: ChangeNotifier
    let (results, resultsContinuation) = AsyncStream.makeStream(of: Bool.self)
    let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)

    init(notifier: ChangeNotifier) {
        self.notifier = notifier
    }

    func run() async throws {
        startedContinuation.yield()
        for _ in 0..<2 {
            resultsContinuation.yield(
                await notifier.wait(for: 1, after: notifier.generation(for: 1), timeout: .seconds(60)))
        }
    }
}
