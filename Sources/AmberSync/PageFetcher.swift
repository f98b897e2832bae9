import AmberSyncProtocol

/// Fetches the pages of one pull in order, ahead of the engine that applies them.
///
/// Each page's cursor comes from the page before, so one task fetches them one after another.
/// It fetches a page only when the engine has taken enough of the pages before: at most
/// ``allowAhead(pages:)`` pages (one at first) wait to be taken. It stops after a page that is
/// the last (see ``hasMore(after:)``), after an error, and at ``stop()``, which cancels the
/// request in flight.
struct PageFetcher {
    typealias Answer = SyncAPI.Answer<PullResponse>

    private var pages: AsyncStream<Result<Answer, SyncError>>.Iterator
    private let permits: AsyncStream<Void>.Continuation
    private let task: Task<Void, Never>
    /// How many pages may be fetched beyond those taken.
    private var ahead = 1

    /// Starts fetching the page after `cursor`.
    init(api: SyncAPI, cursor: Int64, tag: String?) {
        let (pageStream, pageSink) = AsyncStream.makeStream(of: Result<Answer, SyncError>.self)
        let (permitStream, permitSink) = AsyncStream.makeStream(of: Void.self)
        // Detached: a task that inherited the engine's actor could not run while it applies pages.
        task = Task.detached {
            var (cursor, tag) = (cursor, tag)
            // One permit per page: the engine gives one for each page it takes.
            for await _ in permitStream {
                let result: Result<Answer, SyncError>
                do throws(SyncError) {
                    result = .success(try await api.pull(cursor: cursor, tag: tag))
                } catch {
                    result = .failure(error)
                }
                pageSink.yield(result)
                guard case .success(let answer) = result, Self.hasMore(after: answer.body) else { break }
                if answer.body.cursor > cursor {
                    (cursor, tag) = (answer.body.cursor, answer.body.cursorTag)
                }
            }
            pageSink.finish()
        }
        pages = pageStream.makeAsyncIterator()
        permits = permitSink
        permitSink.yield()
    }

    /// Whether a pull continues after `page`: the server says so, and the page moved the cursor on.
    static func hasMore(after page: PullResponse) -> Bool {
        page.hasMore && !page.changes.isEmpty
    }

    /// The next page, waiting for it when it is not here yet.
    ///
    /// - Throws: The error of its request; ``SyncError/Kind/offline`` when the calling task is
    ///   cancelled or no page is left to fetch.
    mutating func next() async throws(SyncError) -> SyncAPI.Answer<PullResponse> {
        guard let result = await pages.next() else {
            throw SyncError(.offline, "the pull was cancelled")
        }
        permits.yield()
        return try result.get()
    }

    /// Lets the fetching run up to `count` pages beyond the pages taken (never fewer than before).
    mutating func allowAhead(pages count: Int) {
        let count = min(count, 1_000)
        guard count > ahead else { return }
        for _ in ahead..<count { permits.yield() }
        ahead = count
    }

    /// Stops fetching, cancelling the request in flight.
    func stop() {
        permits.finish()
        task.cancel()
    }
}
