#if canImport(Testing)
    import Testing

    /// Runs a suite's tests at most ``BoundedConcurrency/width`` at a time, across every suite that
    /// carries the trait, whatever the runner's own parallelism.
    ///
    /// Swift Testing starts every test of a plain `swift test` at once. On a two-core machine, tests
    /// that start servers, child processes and timers then starve each other, and their timing bounds
    /// fail. This trait bounds the README's plain `swift test`, which `.ci/run` runs as it is:
    ///
    /// ```swift
    /// @Suite(.boundedConcurrency) struct LongPollTests { ... }
    /// ```
    ///
    /// The trait applies to the suite's nested suites too. A test already inside the bound (a nested
    /// suite that names the trait again) does not take a second place.
    public struct BoundedConcurrency: SuiteTrait, TestTrait, TestScoping {
        /// How many of the bounded tests run at once. With four, three of four full runs on the
        /// shared two-core machine each failed a different timing bound (CONTRIBUTING).
        public static let width = 3

        public init() {}

        public var isRecursive: Bool { true }

        /// One scope per test case; none for the suite itself, which only groups its tests.
        public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
            testCase == nil ? nil : self
        }

        public func provideScope(
            for test: Test,
            testCase: Test.Case?,
            performing function: @Sendable () async throws -> Void
        ) async throws {
            if Self.isInside { return try await function() }
            await Self.gate.enter()
            do {
                try await Self.$isInside.withValue(true) { try await function() }
            } catch {
                await Self.gate.leave()
                throw error
            }
            await Self.gate.leave()
        }

        @TaskLocal private static var isInside = false
        private static let gate = Gate(width: width)
    }

    extension Trait where Self == BoundedConcurrency {
        /// At most ``BoundedConcurrency/width`` of the suite's tests run at once, counted together
        /// with every other suite that carries this trait.
        public static var boundedConcurrency: Self { BoundedConcurrency() }
    }

    /// A counting semaphore for tasks: `enter` suspends while `width` holders are inside.
    private actor Gate {
        private let width: Int
        private var inside = 0
        private var waiting: [CheckedContinuation<Void, Never>] = []

        init(width: Int) { self.width = width }

        func enter() async {
            if inside < width {
                inside += 1
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        /// Hands the place to the longest waiting task, or frees it.
        func leave() {
            if waiting.isEmpty {
                inside -= 1
            } else {
                waiting.removeFirst().resume()
            }
        }
    }
#endif
