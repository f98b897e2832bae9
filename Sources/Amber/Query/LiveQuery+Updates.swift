extension LiveQuery {
    /// The values of a ``LiveQuery`` after an update, and what the update changed.
    public struct Update: Sendable {
        /// The query's values after the update.
        public let values: [Value]
        /// What the update changed, from the values of the previous update to ``values``.
        public let diff: IdentityDiff
    }

    /// The updates of a ``LiveQuery``, for code off the main actor.
    ///
    /// ```swift
    /// let updates = await timeline.updates
    /// Task.detached {
    ///     var shown: [Note] = []
    ///     for await update in updates {
    ///         shown = update.values   // or replay update.diff on shown
    ///     }
    /// }
    /// ```
    ///
    /// The first element holds the values when the sequence was made, with a diff that inserts them
    /// all; each later one follows a store change that changed the values. Replaying each diff on the
    /// values of the element before gives the values of the next. The sequence keeps what its
    /// consumer has not read yet, and ends when the query is released; it stops following the query
    /// when the consuming task is cancelled.
    public struct Updates: AsyncSequence, Sendable {
        /// An update of the query.
        public typealias Element = Update

        let stream: AsyncStream<Update>

        /// Makes the iterator of the sequence.
        public func makeAsyncIterator() -> Iterator {
            Iterator(base: stream.makeAsyncIterator())
        }

        /// Reads the updates one by one.
        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncStream<Update>.Iterator

            /// The next update, or `nil` once the query is released or the task cancelled.
            public mutating func next() async -> Update? {
                await base.next()
            }
        }
    }

    /// The current values, then the values after each update, with what changed: for code off the
    /// main actor that follows the query.
    ///
    /// ```swift
    /// for await update in await timeline.updates {
    ///     render(update.values, animating: update.diff)
    /// }
    /// ```
    ///
    /// - Complexity: O(*m*) for *m* values, to hand them to the sequence; while a sequence is being
    ///   iterated, each update also copies the values (O(*m*)), since the sequence's consumer may
    ///   still hold the previous ones.
    public var updates: Updates {
        let (stream, continuation) = AsyncStream.makeStream(of: Update.self)
        continuation.yield(Update(values: values, diff: .insertingAll(values.count)))
        nextSubscriberKey += 1
        let key = nextSubscriberKey
        subscribers[key] = continuation
        let ending = lifetime.onEnd { continuation.finish() }
        // Weakly: the sequence must keep neither the query nor the lifetime whose end finishes it.
        continuation.onTermination = { [weak self, weak lifetime] _ in
            lifetime?.forget(ending)
            MainQueue.run { self?.subscribers[key] = nil }
        }
        return Updates(stream: stream)
    }
}
