import Observation
import OrderedCollections

/// UI state held as an immutable value, changed by pure transitions, with observers and undo.
///
/// ```swift
/// let state = ObservableValue(AppState.loggedOut, historyLimit: 20)
/// state.addObserver(self) { controller, state in controller.render(state) }  // called at once
/// state.update { $0.login(name: "Ann", target: 50) }
/// state.undo()
/// ```
///
/// It is `@Observable`, so SwiftUI views and `withObservationTracking` see ``value`` change.
/// Observers are held weakly and removed when their owner is gone. With an `Equatable` value,
/// an update to an equal value notifies nobody and records no history.
@MainActor @Observable
public final class ObservableValue<Value: Sendable> {
    /// The current value.
    public private(set) var value: Value

    /// How many earlier values ``undo()`` can go back to; `0` keeps no history.
    @ObservationIgnored public let historyLimit: Int
    private var undoStack: [Value] = []
    private var redoStack: [Value] = []
    /// In registration order, which is the order they are notified in.
    @ObservationIgnored private var observers: OrderedDictionary<Int, Observer> = [:]
    @ObservationIgnored private var nextObserverID = 0
    /// Counts values set, so a notification loop stops once an observer has set a newer value.
    @ObservationIgnored private var generation = 0
    @ObservationIgnored private let isEqual = Equality.function(for: Value.self)
    /// Ends the store observations made for this value and its `values` streams when it goes away.
    @ObservationIgnored let lifetime = Lifetime()

    private struct Observer {
        let token: ObservationToken
        /// Calls the observer; `false` when its owner is gone.
        let notify: @MainActor (Value) -> Bool
    }

    /// Creates a holder of `value`.
    ///
    /// - Parameters:
    ///   - value: The initial value.
    ///   - historyLimit: How many earlier values to keep for ``undo()``; `0` keeps none.
    public init(_ value: Value, historyLimit: Int = 0) {
        precondition(historyLimit >= 0, "ObservableValue's historyLimit must not be negative")
        self.value = value
        self.historyLimit = historyLimit
    }

    /// Replaces the value and notifies observers, unless it equals the current one.
    ///
    /// The replaced value goes on the undo history; the redo history is cleared.
    public func update(with newValue: Value) {
        guard isEqual?(value, newValue) != true else { return }
        if historyLimit > 0 {
            undoStack.append(value)
            if undoStack.count > historyLimit { undoStack.removeFirst(undoStack.count - historyLimit) }
        }
        redoStack.removeAll()
        set(newValue)
    }

    /// Replaces the value by a pure function of it.
    ///
    /// ```swift
    /// seller.update { $0.sell(boxes: 3) }
    /// ```
    public func update(_ transition: (Value) -> Value) {
        update(with: transition(value))
    }

    /// Calls `closure` at once with the current value, then with every new value, as long as
    /// `observer` lives. Observers are called in the order they were added.
    ///
    /// - Returns: A token whose ``ObservationToken/cancel()`` ends the observation earlier.
    @discardableResult
    public func addObserver<Owner: AnyObject>(
        _ observer: Owner,
        using closure: @escaping @MainActor (Owner, Value) -> Void
    ) -> ObservationToken {
        nextObserverID += 1
        let key = nextObserverID
        let token = ObservationToken { [weak self] in
            MainQueue.run { self?.observers[key] = nil }
        }
        observers[key] = Observer(token: token) { [weak observer] value in
            guard let observer else { return false }
            closure(observer, value)
            return true
        }
        closure(observer, value)
        return token
    }

    /// The current value first, then every new value.
    ///
    /// Ends when the consumer stops iterating, or when this observable value is released.
    public var values: AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self)
        let owner = StreamOwner()
        let token = addObserver(owner) { _, value in continuation.yield(value) }
        let ending = lifetime.onEnd { continuation.finish() }
        // Weakly: the stream must not keep the lifetime, whose end finishes the stream.
        continuation.onTermination = { [weak lifetime] _ in
            token.cancel()
            lifetime?.forget(ending)
            _ = owner
        }
        return stream
    }

    /// Whether ``undo()`` has an earlier value to go back to.
    public var canUndo: Bool { !undoStack.isEmpty }

    /// Whether ``redo()`` has an undone value to go forward to.
    public var canRedo: Bool { !redoStack.isEmpty }

    /// Goes back to the previous value, if any.
    public func undo() {
        guard let previous = undoStack.popLast() else { return }
        redoStack.append(value)
        set(previous)
    }

    /// Goes forward to the value last undone, if any.
    public func redo() {
        guard let next = redoStack.popLast() else { return }
        undoStack.append(value)
        set(next)
    }

    /// The number of observers registered, those whose owner is gone included until the next change.
    var observerCount: Int { observers.count }

    private func set(_ newValue: Value) {
        value = newValue
        generation += 1
        let current = generation
        for (key, observer) in observers where !observer.token.isCancelled {
            // An observer that updated the value has had every observer told the newer one.
            guard generation == current else { return }
            if !observer.notify(newValue) { observers[key] = nil }
        }
    }
}

/// Keeps a `values` stream's observation alive for as long as the stream.
private final class StreamOwner: Sendable {}
