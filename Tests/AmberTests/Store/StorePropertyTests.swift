import Amber
import AmberTestSupport
import PropertyBased
import Testing

/// One operation of the model-based test.
enum StoreOperation: Sendable, CustomStringConvertible {
    case add(Person)
    case addMany([Person])
    case remove(String)
    case update(String, age: Int)
    case removeAll

    var description: String {
        switch self {
        case .add(let person): "add(\(person.id), \(person.age))"
        case .addMany(let people): "addMany(\(people.map { "\($0.id):\($0.age)" }))"
        case .remove(let id): "remove(\(id))"
        case .update(let id, let age): "update(\(id), \(age))"
        case .removeAll: "removeAll"
        }
    }
}

private let people = zip(Gen.int(in: 0...7), Gen.int(in: 0...3)).map { id, age in
    Person(id: "\(id)", name: "P\(id)", age: age)
}
private let operations = zip(Gen.int(in: 0...20), people, people.array(of: 0...4), Gen.int(in: 0...7)).map {
    choice, person, many, id -> StoreOperation in
    switch choice {
    case 0...8: .add(person)
    case 9...11: .addMany(many)
    case 12...15: .remove("\(id)")
    case 16...19: .update("\(id)", age: person.age)
    default: .removeAll
    }
}

@Suite(.boundedConcurrency) struct StorePropertyTests {
    /// The store against a plain model (an array of ids and a dictionary) under random operations.
    @Test func storeBehavesLikeAnArrayAndADictionary() async {
        await propertyCheck(count: 200, input: operations.array(of: 0...40)) { operations in
            let store = IdentityStore<Person>()
            var order: [String] = []
            var values: [String: Person] = [:]
            for operation in operations {
                switch operation {
                case .add(let person):
                    try store.add(person)
                    if values[person.id] == nil { order.append(person.id) }
                    values[person.id] = person
                case .addMany(let many):
                    try store.add(contentsOf: many)
                    for person in many {
                        if values[person.id] == nil { order.append(person.id) }
                        values[person.id] = person
                    }
                case .remove(let id):
                    let removed = try store.remove(id: id)
                    #expect(removed == values[id])
                    order.removeAll { $0 == id }
                    values[id] = nil
                case .update(let id, let age):
                    let updated = try store.update(id: id) { $0.update(age: age) }
                    #expect(updated == values[id]?.update(age: age))
                    values[id] = values[id]?.update(age: age)
                case .removeAll:
                    try store.removeAll()
                    order = []
                    values = [:]
                }
                #expect(store.all == order.map { values[$0]! }, "after \(operation)")
            }
        }
    }
}
