import AmberLock
import AmberSyncProtocol
import AmberTestSupport
import Foundation
import Testing

@testable import AmberSync

/// The pages of one pull, fetched ahead by a task of their own, against a transport that serves
/// a numbered series of pages and counts the requests.
@Suite(.boundedConcurrency) struct PageFetcherTests {
    /// Serves page `n` (one change, version `n`) for a pull after cursor `n - 1`, up to `pages`;
    /// page `failing` is answered 500.
    final class PagedTransport: SyncTransport {
        let server = URL(string: "http://paged.invalid")!
        let pages: Int
        let failing: Int?
        private let cursors = LockedValue<[Int64]>([])

        init(pages: Int, failing: Int? = nil) {
            self.pages = pages
            self.failing = failing
        }

        /// The cursor of each pull received, in order.
        var requested: [Int64] { cursors.withLock { $0 } }

        func send(_ request: SyncTransportRequest) async throws(SyncError) -> SyncTransportResponse {
            let cursor = Int64(request.query.first { $0.name == "cursor" }?.value ?? "") ?? -1
            cursors.withLock { $0.append(cursor) }
            let page = Int(cursor) + 1
            if page == failing {
                return SyncTransportResponse(status: 500, headers: [:], body: Data(#"{"error":"broken"}"#.utf8))
            }
            let body = """
                {"changes":[{"collection":"notes","id":"n\(page)","version":\(page),"record":{"n":\(page)}}],\
                "cursor":\(page),"hasMore":\(page < pages),"cursorTag":"t\(page)"}
                """
            return SyncTransportResponse(status: 200, headers: [:], body: Data(body.utf8))
        }
    }

    func api(_ transport: PagedTransport) -> SyncAPI {
        SyncAPI(transport: transport, tokens: SyncTokenSource(provider: { "token" }))
    }

    /// Waits until `transport` received `count` requests, then a little longer, and returns how
    /// many it received: a fetcher that runs further ahead than allowed is caught by the wait.
    func settled(_ transport: PagedTransport, atLeast count: Int) async throws -> Int {
        let deadline = ContinuousClock.now + .seconds(10)
        while transport.requested.count < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(150))
        return transport.requested.count
    }

    @Test func itFetchesOnePageAheadUntilAllowedMore() async throws {
        let transport = PagedTransport(pages: 100)
        var fetcher = PageFetcher(api: api(transport), cursor: 0, tag: nil)
        defer { fetcher.stop() }
        #expect(try await settled(transport, atLeast: 1) == 1, "the first page only, until it is taken")

        let first = try await fetcher.next()
        #expect(first.body.cursor == 1)
        #expect(try await settled(transport, atLeast: 2) == 2, "one page ahead of the one taken")

        fetcher.allowAhead(pages: 5)
        #expect(try await settled(transport, atLeast: 6) == 6, "five pages ahead of the one taken")
        fetcher.allowAhead(pages: 3)
        _ = try await fetcher.next()
        #expect(try await settled(transport, atLeast: 7) == 7, "never fewer than allowed before")
        #expect(transport.requested == Array(0...6), "each pull after the cursor of the page before")
    }

    @Test func itStopsAfterTheLastPage() async throws {
        let transport = PagedTransport(pages: 3)
        var fetcher = PageFetcher(api: api(transport), cursor: 0, tag: nil)
        defer { fetcher.stop() }
        fetcher.allowAhead(pages: 10)
        var versions: [Int64] = []
        while true {
            let page = try await fetcher.next()
            versions += page.body.changes.map(\.version)
            guard PageFetcher.hasMore(after: page.body) else { break }
        }
        #expect(versions == [1, 2, 3], "each page once, in order")
        #expect(try await settled(transport, atLeast: 3) == 3, "nothing asked after the last page")
        await #expect(throws: SyncError.self, "no page is left") { _ = try await fetcher.next() }
    }

    @Test func anErrorIsTheLastPageAndNothingIsAskedAfterIt() async throws {
        let transport = PagedTransport(pages: 10, failing: 3)
        var fetcher = PageFetcher(api: api(transport), cursor: 0, tag: nil)
        defer { fetcher.stop() }
        fetcher.allowAhead(pages: 10)
        _ = try await fetcher.next()
        _ = try await fetcher.next()
        await #expect {
            _ = try await fetcher.next()
        } throws: { error in
            (error as? SyncError)?.kind == .server(status: 500)
        }
        #expect(try await settled(transport, atLeast: 3) == 3)
    }

    /// Answers nothing until cancelled.
    final class SilentTransport: SyncTransport {
        let server = URL(string: "http://silent.invalid")!
        let cancelled = LockedValue(false)

        func send(_ request: SyncTransportRequest) async throws(SyncError) -> SyncTransportResponse {
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
            cancelled.withLock { $0 = true }
            throw SyncError(.offline, "the request was cancelled")
        }
    }

    @Test func stopCancelsTheRequestInFlight() async throws {
        let transport = SilentTransport()
        let fetcher = PageFetcher(
            api: SyncAPI(transport: transport, tokens: SyncTokenSource(provider: { "token" })), cursor: 0, tag: nil)
        try await Task.sleep(for: .milliseconds(50))
        fetcher.stop()
        let deadline = ContinuousClock.now + .seconds(10)
        while !transport.cancelled.withLock({ $0 }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(transport.cancelled.withLock { $0 })
    }
}
