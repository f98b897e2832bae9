import AmberSyncServer
import Testing

@Suite struct ChangeNotifierTests {
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
}
