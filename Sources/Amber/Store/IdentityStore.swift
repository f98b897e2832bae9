import AmberLock
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
    /// Serializes writers, and is held while they persist, so reads never wait for I/O. A write
    /// from inside a write on the same thread throws ``StoreError/writeInsideTransaction``.
    @usableFromInline let writeLock = LockedValue(WriterState<Value.ID>())
    /// Hands committed changes to main-actor observers.
    @usableFromInline let delivery = MainActorDelivery<Value>()
    @usableFromInline let persistence: Persistence<Value>?
    @usableFromInline let isEqual: (@Sendable (Value, Value) -> Bool)?

    /// Creates an empty store that lives in memory only.
    public init() {
        state = LockedValue(StoreState())
        persistence = nil
        isEqual = Equality.function(for: Value.self)
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
        let loaded = persistence.reconcile(try persistence.storage.load())
        var initial = StoreState<Value>()
        initial.values = loaded.values
        initial.undecodable = loaded.undecodable
        self.state = LockedValue(initial)
        self.persistence = persistence
        self.isEqual = Equality.function(for: Value.self)
        writeLock.withLock { $0.recordIDs = loaded.recordIDs }
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
    @usableFromInline var undecodable: [UndecodableRecord] = []
    @usableFromInline var changeSubscribers: [Int: AsyncStream<StoreChange<Value>>.Continuation] = [:]
    @usableFromInline var valueSubscribers: [Value.ID: [Int: AsyncStream<Value?>.Continuation]] = [:]
    var nextSubscriberID = 0
    /// Counts committed changes: the stamp of the newest one. An observer registered at stamp
    /// *s* is handed only changes stamped after *s*.
    @usableFromInline var commitStamp: UInt64 = 0
    /// Main-actor observers registered. It lives here, not in ``MainActorDelivery``, so that a
    /// registration (count, stamp and current value) and a commit (values, stamp, whether to
    /// queue for the main actor) each happen under this one lock and always agree.
    @usableFromInline var mainActorObserverCount = 0

    /// Stamps a change applied to the values and hands it to the async subscribers.
    ///
    /// - Returns: The change's stamp when main-actor observers must be handed it too.
    @inlinable
    mutating func publish(_ committed: StoreChange<Value>) -> UInt64? {
        commitStamp &+= 1
        // A change taken in from another writer may only move identities: no subscriber hears it.
        if !changeSubscribers.isEmpty, !committed.isEmpty {
            for continuation in changeSubscribers.values { continuation.yield(committed) }
        }
        if !valueSubscribers.isEmpty {
            for (id, value) in committed.latestValues {
                guard let subscribers = valueSubscribers[id] else { continue }
                for continuation in subscribers.values { continuation.yield(value) }
            }
        }
        return mainActorObserverCount > 0 ? commitStamp : nil
    }

    mutating func makeSubscriberID() -> Int {
        nextSubscriberID += 1
        return nextSubscriberID
    }
}

/// What only the writer holding an ``IdentityStore``'s write lock reads or changes.
@usableFromInline
struct WriterState<ID: Hashable & Sendable>: Sendable {
    /// Stored record ids that differ from the store's own mapping of their identity.
    @usableFromInline var recordIDs = RecordIDs<ID>()

    @usableFromInline init() {}
}
