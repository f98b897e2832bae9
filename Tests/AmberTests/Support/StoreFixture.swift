import Amber
import AmberTestSupport
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

let jack = Person(id: "123-45-6789", name: "Jack", age: 30, job: "Engineer")
let jill = Person(id: "987-65-4321", name: "Jill", age: 31, job: nil)

