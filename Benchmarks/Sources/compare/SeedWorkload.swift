import Amber
import AmberSQLite
import Foundation

/// Seed 000's persistent identity store, as the article wrote it: the whole store is one
/// `UserDefaults` dictionary that every add reads, decodes, changes, encodes and writes back.
final class SeedIdentityStore<Value: Identifiable & Codable> where Value.ID: CustomStringConvertible {
    private let defaults: UserDefaults
    private let key: String

    init(defaults: UserDefaults, key: String) {
        self.defaults = defaults
        self.key = key
        if defaults.object(forKey: key) == nil {
            defaults.set([String: Data](), forKey: key)
        }
    }

    /// The article's `storage` getter: the property-list dictionary, each value decoded.
    private func storage() throws -> [Value.ID: Value] {
        let dictionary = defaults.dictionary(forKey: key) as? [String: Data] ?? [:]
        let decoder = JSONDecoder()
        var values: [Value.ID: Value] = [:]
        for data in dictionary.values {
            let value = try decoder.decode(Value.self, from: data)
            values[value.id] = value
        }
        return values
    }

    /// The article's `storage` setter: every value encoded into a property-list dictionary.
    private func setStorage(_ values: [Value.ID: Value]) throws {
        let encoder = JSONEncoder()
        var dictionary: [String: Data] = [:]
        for (id, value) in values {
            dictionary[id.description] = try encoder.encode(value)
        }
        defaults.set(dictionary, forKey: key)
    }

    func add(_ value: Value) throws {
        var values = try storage()
        values[value.id] = value
        try setStorage(values)
    }

    var count: Int {
        (try? storage().count) ?? 0
    }
}

enum SeedWorkload {
    /// Ours is the SQLite store here, and the seed's design the baseline: the target is a ratio far below 1.
    static var comparison: Comparison {
        let items = Item.samples(500)
        return Comparison(
            target: 0.02, rounds: 2,
            ours: {
                let directory = try ScratchDirectory()
                defer { directory.remove() }
                let store = try IdentityStore<Item>(
                    key: "items", storage: SQLiteStorage(path: directory.path("store.sqlite")))
                return try await milliseconds { for item in items { try store.add(item) } }
            },
            baseline: {
                let suiteName = "amber-benchmark-seed-\(UUID().uuidString)"
                guard let defaults = UserDefaults(suiteName: suiteName) else {
                    throw BenchmarkError("cannot open the UserDefaults suite \(suiteName)")
                }
                defer { defaults.removePersistentDomain(forName: suiteName) }
                let store = SeedIdentityStore<Item>(defaults: defaults, key: "items")
                let elapsed = try await milliseconds { for item in items { try store.add(item) } }
                precondition(store.count == items.count, "seed-userdefaults-500 baseline stored \(store.count) items")
                return elapsed
            }
        )
    }
}
