import Amber
import Foundation
import Testing

/// A kind of store the shared store tests run against.
struct StoreFixture: CustomTestStringConvertible, Sendable {
    let name: String
    /// Makes a store and a way to open it again on the same storage (`nil` in memory).
    let make: @Sendable () throws -> (store: IdentityStore<Person>, reopen: (@Sendable () throws -> IdentityStore<Person>)?)

    var testDescription: String { name }

    static let memory = StoreFixture(name: "memory") { (IdentityStore<Person>(), nil) }

    static let file = StoreFixture(name: "file") {
        let storage = FileStorage(directory: temporaryDirectory())
        return (try IdentityStore(key: "people", storage: storage), { try IdentityStore(key: "people", storage: storage) })
    }

    static let userDefaults = StoreFixture(name: "userDefaults") {
        let storage = UserDefaultsStorage(suiteName: "amber-tests-\(UUID().uuidString)")
        return (try IdentityStore(key: "people", storage: storage), { try IdentityStore(key: "people", storage: storage) })
    }

    static let all: [StoreFixture] = [.memory, .file, .userDefaults] + extraFixtures
    static let persistent = all.filter { $0.name != "memory" }
}

/// A new empty directory under the system's temporary directory.
func temporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("amber-tests-\(UUID().uuidString)")
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

let jack = Person(id: "123-45-6789", name: "Jack", age: 30, job: "Engineer")
let jill = Person(id: "987-65-4321", name: "Jill", age: 31, job: nil)

/// Waits until `condition` holds, for up to `seconds`.
func eventually(within seconds: Double = 5, _ condition: @Sendable () async -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if await condition() { return true }
        try? await Task.sleep(nanoseconds: 5_000_000)
    }
    return await condition()
}

/// Collects a stream's elements in the background.
final class Collected<Element: Sendable>: Sendable {
    private let elements = Locked<[Element]>([])
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<Element>) {
        let elements = self.elements
        task = Task { for await element in stream { elements.withLock { $0.append(element) } } }
    }

    var values: [Element] { elements.withLock { $0 } }

    func cancel() { task.cancel() }

    /// Waits until at least `count` elements arrived.
    func wait(for count: Int, within seconds: Double = 5) async -> [Element] {
        _ = await eventually(within: seconds) { self.values.count >= count }
        return values
    }
}

final class Locked<State>: @unchecked Sendable {
    // @unchecked: `state` is only touched while `lock` is held.
    private let lock = NSLock()
    private var state: State
    init(_ state: State) { self.state = state }
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
