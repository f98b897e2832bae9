import Amber
import AmberTestSupport
import Foundation
import Testing

/// A kind of storage the store tests run against: every test that takes one runs on each.
struct StoreFixture: CustomTestStringConvertible, Sendable {
    let name: String
    /// Makes a new place for stores, and returns how to open another storage instance on it
    /// (`nil` in memory). Two instances on one place are two writers, as two processes are.
    let makePlace: @Sendable () -> (@Sendable () throws -> any StoreStorage)?

    var testDescription: String { name }

    /// A store of `Model` on a new place, and a way to open another store on that place, through
    /// another storage instance (`nil` in memory).
    func make<Model: Identifiable & Codable & Sendable>(
        _ model: Model.Type, key: String = "people"
    ) throws -> (store: IdentityStore<Model>, reopen: (@Sendable () throws -> IdentityStore<Model>)?)
    where Model.ID: Codable & Sendable {
        guard let storage = makePlace() else { return (IdentityStore(), nil) }
        return (try IdentityStore(key: key, storage: storage()), { try IdentityStore(key: key, storage: storage()) })
    }

    /// A store of ``Person`` values on a new place, and a way to open another store on it.
    func make() throws -> (store: IdentityStore<Person>, reopen: (@Sendable () throws -> IdentityStore<Person>)?) {
        try make(Person.self)
    }

    static let memory = StoreFixture(name: "memory") { nil }

    static let file = StoreFixture(name: "file") {
        let directory = temporaryDirectory()
        return { FileStorage(directory: directory) }
    }

    static let userDefaults = StoreFixture(name: "userDefaults") {
        let suite = "amber-tests-\(UUID().uuidString)"
        return { UserDefaultsStorage(suiteName: suite) }
    }

    static let all: [StoreFixture] = [.memory, .file, .userDefaults] + extraFixtures
    static let persistent = all.filter { $0.name != "memory" }
}

let jack = Person(id: "123-45-6789", name: "Jack", age: 30, job: "Engineer")
let jill = Person(id: "987-65-4321", name: "Jill", age: 31, job: nil)
