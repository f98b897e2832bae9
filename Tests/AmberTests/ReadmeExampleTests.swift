import Amber
import AmberSQLite
import AmberTestSupport
import Foundation
import Testing

/// The README's first example, kept compiling and true.
@Immutable
struct ReadmePerson: Identifiable, Hashable, Codable, Sendable {
    let id: String
    let name: String
    let salary: Int
    let job: String?
}

@Test func readmeExample() throws {
    let storage = try SQLiteStorage(path: temporaryDirectory().appendingPathComponent("people.sqlite").path)
    let people = try IdentityStore<ReadmePerson>(key: "people", storage: storage)

    let jack = ReadmePerson(id: "123-45-6789", name: "Jack", salary: 50_000)
    try people.add(jack)
    let raised = jack.update(salary: jack.salary + 10_000)
    try people.add(raised)

    #expect(people.count == 1)
    #expect(people.latest(jack)?.salary == 60_000)
    #expect(raised != jack)
    #expect(raised.hasSameIdentity(as: jack))
    #expect(raised.with(job: nil).job == nil)
}
