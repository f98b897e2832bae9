import AmberLock

extension IdentityStore {
    /// Every change committed from now on, in commit order, one element per write or transaction.
    ///
    /// ```swift
    /// for await change in store.changes() where change.origin == .otherProcess {
    ///     reloadTimeline()
    /// }
    /// ```
    ///
    /// The stream buffers what its consumer has not read yet, and ends (releasing everything)
    /// when the consuming task is cancelled or the stream is dropped.
    public func changes() -> AsyncStream<StoreChange<Value>> {
        let (stream, continuation) = AsyncStream.makeStream(of: StoreChange<Value>.self)
        let key = state.withLock { $0.makeSubscriberID() }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.changeSubscribers.removeValue(forKey: key) }
        }
        state.withLock { $0.changeSubscribers[key] = continuation }
        return stream
    }

    /// The value of one identity: the current value first, then each new value; `nil` once removed
    /// (and the new value if it is added again).
    ///
    /// ```swift
    /// for await person in store.values(for: jack.id) {
    ///     salaryLabel.text = person.map { "\($0.salary)" } ?? "gone"
    /// }
    /// ```
    public func values(for id: Value.ID) -> AsyncStream<Value?> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value?.self)
        let key = state.withLock { $0.makeSubscriberID() }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in
                state.valueSubscribers[id]?.removeValue(forKey: key)
                if state.valueSubscribers[id]?.isEmpty == true { state.valueSubscribers[id] = nil }
            }
        }
        // Under the state lock, so no commit falls between the current value and the registration.
        state.withLock { state in
            continuation.yield(state.values[id])
            state.valueSubscribers[id, default: [:]][key] = continuation
        }
        return stream
    }

    /// Calls `closure` on the main actor for every change, or for the changes of one identity,
    /// as long as `observer` lives.
    ///
    /// ```swift
    /// store.addObserver(self, id: note.id) { controller, change in
    ///     controller.show(change.updated.first?.new)
    /// }
    /// ```
    ///
    /// Observers of every identity are called first, then those of the changed identity, each
    /// in the order they were added. The observer is held weakly: when it goes away, the
    /// observation ends by itself, and the next write to the store, of any identity, drops its
    /// registration and `closure` (with more than 64 observers, one of the next few writes).
    /// A write made on the main actor has called the observers before it returns; a write made
    /// elsewhere calls them soon after, in commit order.
    ///
    /// - Parameters:
    ///   - observer: The owner of the observation, passed back to `closure`.
    ///   - id: When given, only changes of this identity are delivered, restricted to it.
    ///   - closure: Called with the observer and the change.
    /// - Returns: A token whose ``ObservationToken/cancel()`` ends the observation earlier.
    @MainActor @discardableResult
    public func addObserver<Observer: AnyObject>(
        _ observer: Observer,
        id: Value.ID? = nil,
        using closure: @escaping @MainActor (Observer, StoreChange<Value>) -> Void
    ) -> ObservationToken {
        let stamp = beginObserving(id).stamp
        return insertObserver(observer, id: id, since: stamp, using: closure)
    }

    /// An ``ObservableValue`` that follows the value of one identity: `nil` while it is absent.
    ///
    /// It is updated before a main-actor write returns, and soon after other writes.
    /// A write made by a main-actor observer while it is being notified is delivered right after
    /// the notification in progress, to keep every observer's view in commit order.
    /// Updating it yourself does not write to the store. When the observable value is released,
    /// the store forgets it.
    @MainActor
    public func observable(id: Value.ID) -> ObservableValue<Value?> {
        let (stamp, value) = beginObserving(id)
        let observable = ObservableValue<Value?>(value)
        let token = insertObserver(observable, id: id, since: stamp) { observable, change in
            observable.update(with: change.inserted.last ?? change.updated.last?.new)
        }
        observable.lifetime.onEnd { token.cancel() }
        return observable
    }

    /// The number of main-actor observers registered, those whose owner is gone included
    /// until they are dropped.
    @MainActor
    var mainActorObserverCount: Int {
        delivery.observers.count
    }

    /// Starts a main-actor observation: counts it, so commits from now on are queued for the
    /// main actor, and reads the commit stamp and the value of `id` at that same moment.
    ///
    /// Follow it with ``insertObserver(_:id:since:using:)``, or with ``endObserving()``.
    @MainActor
    func beginObserving(_ id: Value.ID?) -> (stamp: UInt64, value: Value?) {
        state.withLock { state in
            state.mainActorObserverCount += 1
            return (state.commitStamp, id.flatMap { state.values[$0] })
        }
    }

    /// Ends an observation counted by ``beginObserving(_:)`` that was not inserted.
    func endObserving(count: Int = 1) {
        state.withLock { $0.mainActorObserverCount -= count }
    }

    /// Registers an observer counted by ``beginObserving(_:)``: it is handed the changes
    /// committed after `stamp`.
    ///
    /// - Parameter followsOrder: Whether the observer is also handed the changes that only move
    ///   identities in the store's order, which have no value to show.
    @MainActor
    func insertObserver<Observer: AnyObject>(
        _ observer: Observer,
        id: Value.ID?,
        since stamp: UInt64,
        followsOrder: Bool = false,
        using closure: @escaping @MainActor (Observer, StoreChange<Value>) -> Void
    ) -> ObservationToken {
        let key = LockedValue<Int?>(nil)
        let token = ObservationToken { [weak self] in
            MainQueue.run {
                guard let self, let registered = key.withLock({ $0 }) else { return }
                if self.delivery.observers.remove(registered, id: id) { self.endObserving() }
            }
        }
        let entry = MainActorObservers<Value>.Entry(
            token: token, since: stamp, followsOrder: followsOrder,
            isAlive: { [weak observer] in observer != nil },
            notify: { [weak observer] change in
                guard let observer else { return false }
                closure(observer, change)
                return true
            })
        let (registered, swept) = delivery.observers.insert(entry, id: id)
        key.withLock { $0 = registered }
        if swept > 0 { endObserving(count: swept) }
        return token
    }

    /// Delivers after a write: what it queued, and on the main actor whatever is waiting.
    @usableFromInline
    func deliverAfterWrite(queued: Bool) {
        if queued || (MainQueue.isCurrent && delivery.pendingCount > 0) { deliverToMainActor() }
    }

    /// Delivers queued changes to main-actor observers: at once on the main actor, otherwise soon.
    @usableFromInline
    func deliverToMainActor() {
        delivery.deliver { [weak self] dropped in self?.endObserving(count: dropped) }
    }
}
