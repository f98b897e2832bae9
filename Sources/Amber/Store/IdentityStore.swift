import DequeModule
import Foundation
import OrderedCollections

/// The latest value of every identity: thread safe, optionally persistent, observable.
///
/// Values are immutable snapshots; the store keeps the newest one per `id`, in the order
/// identities were first added.
///
/// ```swift
/// let store = IdentityStore<Person>()
/// let jack = Person(id: "123-45-6789", name: "Jack", salary: 50_000)
/// try store.add(jack)
/// try store.add(jack.update(salary: 60_000))   // same identity: replaced, count stays 1
/// store.latest(jack)?.salary                   // 60_000, asked with an outdated value
/// ```
///
/// Every method may be called from any thread. Reads never wait for another writer's disk I/O.
/// Writes are serialized; a persistent store writes through to its ``StoreStorage`` before the
/// change becomes visible, and a failed write throws and changes nothing.
public final class IdentityStore<Value: Identifiable & Sendable>: Sendable where Value.ID: Sendable {
    /// What readers see; its lock is held only for in-memory work.
    @usableFromInline let state: LockedValue<StoreState<Value>>
    /// Serializes writers, and is held while they persist, so reads never wait for I/O.
    @usableFromInline let writeLock = WriteLock()
    /// Changes waiting for main-actor observers, in commit order.
    let mainActorQueue = LockedValue(MainActorQueue<Value>())
    let observers: MainActorObservers<Value>
    @usableFromInline let persistence: Persistence<Value>?
    @usableFromInline let isEqual: (@Sendable (Value, Value) -> Bool)?

    /// Creates an empty store that lives in memory only.
    public init() {
        state = LockedValue(StoreState())
        persistence = nil
        isEqual = Equality.function(for: Value.self)
        observers = MainActorObservers()
    }

    /// Opens the store that `key` holds in `storage`, loading its values.
    ///
    /// From then on every write goes through to the storage before it is visible, and writes
    /// made to the same key by other processes (or other storage instances on the same file)
    /// arrive as changes with ``StoreChange/Origin/otherProcess``.
    ///
    /// Records that no longer decode are left on disk untouched and listed in ``undecodable``.
    ///
    /// - Parameters:
    ///   - key: The name of this store within the storage.
    ///   - storage: Where the values live, such as `SQLiteStorage` or ``FileStorage``.
    /// - Throws: ``StoreError`` when the storage cannot be read.
    public init(key: String, storage: any StoreStorage) throws where Value: Codable, Value.ID: Codable {
        let persistence = Persistence<Value>(key: key, storage: try storage.open(key: key))
        var initial = StoreState<Value>()
        for record in try persistence.storage.load() {
            do {
                let value = try persistence.decode(record.data)
                initial.values[value.id] = value
            } catch {
                initial.undecodable.append(UndecodableRecord(id: record.id, data: record.data, reason: "\(error)"))
            }
        }
        self.state = LockedValue(initial)
        self.persistence = persistence
        self.isEqual = Equality.function(for: Value.self)
        self.observers = MainActorObservers()
        persistence.storage.startWatching { [weak self] in
            self?.applyExternalChanges()
        }
    }

    deinit {
        persistence?.storage.stopWatching()
        state.withLock { state in
            for continuation in state.changeSubscribers.values { continuation.finish() }
            for continuations in state.valueSubscribers.values {
                for continuation in continuations.values { continuation.finish() }
            }
        }
    }
}

/// Everything readers of an ``IdentityStore`` may see, guarded by one lock.
@usableFromInline
struct StoreState<Value: Identifiable & Sendable>: Sendable where Value.ID: Sendable {
    @usableFromInline var values: OrderedDictionary<Value.ID, Value> = [:]
    var undecodable: [UndecodableRecord] = []
    @usableFromInline var changeSubscribers: [Int: AsyncStream<StoreChange<Value>>.Continuation] = [:]
    @usableFromInline var valueSubscribers: [Value.ID: [Int: AsyncStream<Value?>.Continuation]] = [:]
    var nextSubscriberID = 0
    /// Main-actor observers registered; when zero, commits skip the main-actor queue.
    @usableFromInline var mainActorObserverCount = 0

    mutating func makeSubscriberID() -> Int {
        nextSubscriberID += 1
        return nextSubscriberID
    }
}

/// The lock that serializes an ``IdentityStore``'s writers.
@usableFromInline
final class WriteLock: @unchecked Sendable {
    // @unchecked: `isHeld` is only touched by the thread holding `lock`.
    @usableFromInline let lock = NSRecursiveLock()
    @usableFromInline var isHeld = false

    @usableFromInline init() {}

    @inlinable
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock.lock()
        precondition(
            !isHeld,
            "An IdentityStore was written to from inside its own transaction or update; write through the transaction instead"
        )
        isHeld = true
        defer {
            isHeld = false
            lock.unlock()
        }
        return try body()
    }
}
