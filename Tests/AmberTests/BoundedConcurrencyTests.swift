import AmberLock
import AmberTestSupport
import Testing

/// Outside any suite, so that it holds no place of the bound itself: twelve bodies run through
/// the trait's scope at once, and at most `BoundedConcurrency.width` of them are inside at a time
/// (fewer when other tests hold places). A body that enters the scope again from inside does not
/// wait for a second place.
@Test func theBoundedConcurrencyTraitLetsAtMostItsWidthOfBodiesRunAtOnce() async throws {
    let test = try #require(Test.current)
    let counts = LockedValue((inside: 0, peak: 0, ran: 0))
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<12 {
            group.addTask {
                try await BoundedConcurrency().provideScope(for: test, testCase: Test.Case.current) {
                    counts.withLock {
                        $0.inside += 1
                        $0.peak = max($0.peak, $0.inside)
                    }
                    try await Task.sleep(for: .milliseconds(50))
                    // Nested: already inside, so it does not take another place.
                    try await BoundedConcurrency().provideScope(for: test, testCase: Test.Case.current) {}
                    counts.withLock {
                        $0.inside -= 1
                        $0.ran += 1
                    }
                }
            }
        }
        try await group.waitForAll()
    }
    let result = counts.withLock { $0 }
    #expect(result.ran == 12)
    #expect(result.peak >= 1 && result.peak <= BoundedConcurrency.width)
}

/// `bytesDiffer` tells the first differing byte or the lengths, and nothing for equal bytes, at
/// once for a MiB that differs everywhere (where a failed `==` expectation would spend minutes
/// computing a difference).
@Test func bytesDifferTellsTheFirstDifferenceAtOnce() {
    let bytes = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    #expect(bytesDiffer(bytes, bytes) == nil)
    #expect(bytesDiffer(bytes, bytes.map { ~$0 }) == "byte 0 is 0, not 255 (1048576 bytes, 1048576 expected)")
    #expect(bytesDiffer(bytes.dropLast(), bytes) == "1048575 bytes, not 1048576")
}
