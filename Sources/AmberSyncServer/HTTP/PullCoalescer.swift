import AmberLock
import AmberSyncProtocol
import Foundation
import Hummingbird

/// Shares one database read, and its encoded answer, among the pulls that ask the same question
/// at the same time: the pulls of one user that one push wakes together.
///
/// Pulls share a read only when they ask for the same user, cursor and limit *and* read the same
/// notifier generation before asking. A push whose notification a pull has not seen yet may have
/// committed before that pull's read began; because the pull waits for a generation after the
/// one it read, the push's notification still wakes it, as without sharing.
final class PullCoalescer: Sendable {
    struct Key: Hashable, Sendable {
        let userID: Int64
        let cursor: Int64
        let limit: Int
        let generation: UInt64
    }

    /// A pull's answer, encoded once for everyone who shares it.
    struct Answer: Sendable {
        /// Whether the answer lists no change. The records themselves are not kept: once
        /// written into `body`, holding them too would double a page's memory.
        let isEmpty: Bool
        let body: ByteBuffer

        /// The answer as a `200` response.
        var httpResponse: Response {
            Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: body))
        }
    }

    private let reads = SharedReads<Key, Answer>()

    /// The answer of the read in flight for `key`, or of a new one made with `read`.
    func answer(for key: Key, read: @escaping @Sendable () async throws -> PullResponse) async throws -> Answer {
        try await reads.value(for: key) {
            let response = try await read()
            let bytes = JSONWriter.bytes(of: response, capacity: response.estimatedJSONByteCount)
            return Answer(isEmpty: response.changes.isEmpty, body: ByteBuffer(bytes: bytes))
        }
    }
}

/// One read at a time per key, its value shared by every caller that asks while it is in flight.
///
/// The caller that started a read ends its flight when it has the value: a caller that asks
/// after that starts a new read, so no one gets a value read before they asked, only one read
/// while they waited.
final class SharedReads<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let flights = LockedValue([Key: Task<Value, any Error>]())

    /// The value of the read in flight for `key`, or of a new one made with `read`.
    func value(for key: Key, read: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let (flight, leads) = flights.withLock { flights -> (Task<Value, any Error>, Bool) in
            if let flight = flights[key] { return (flight, false) }
            let flight = Task { try await read() }
            flights[key] = flight
            return (flight, true)
        }
        defer {
            if leads { flights.withLock { $0[key] = nil } }
        }
        return try await flight.value
    }
}
