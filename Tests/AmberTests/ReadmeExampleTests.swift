import Amber
import AmberSQLite
import AmberTestSupport
import Foundation
import Testing

/// The README's tour, kept compiling and true: each test is one of its Swift blocks.
@Immutable
struct ReadmePerson: Identifiable, Hashable, Codable, Sendable {
    let id: String
    let name: String
    let salary: Int
    let job: String?
}

@MainActor @Suite(.boundedConcurrency) struct ReadmeExampleTests {
    let jack = ReadmePerson(id: "123-45-6789", name: "Jack", salary: 50_000)

    /// "Models".
    @Test func models() {
        let raised = jack.update(salary: jack.salary + 10_000)
        #expect(jack.salary == 50_000)
        #expect(raised != jack)
        #expect(raised.hasSameIdentity(as: jack))
        #expect(raised.with(job: nil).job == nil)
        #expect(jack.updating { $0.job = "chef" }.job == "chef")
    }

    /// "The store", then "The editor" and "A live query" on that store, in the README's order.
    @Test func storeEditorAndLiveQuery() throws {
        let storage = try SQLiteStorage(path: temporaryDirectory().appendingPathComponent("people.sqlite").path)
        let people = try IdentityStore<ReadmePerson>(key: "people", storage: storage)
        let raised = jack.update(salary: jack.salary + 10_000)

        try people.add(jack)
        try people.add(raised)
        #expect(people.count == 1)
        #expect(people.latest(jack)?.salary == 60_000)

        let editor = try people.editor(id: jack.id)
        editor.update { $0.name = "Jack Jr." }
        try people.update(id: jack.id) { $0.update(salary: 70_000) }
        #expect(editor.value.salary == 70_000)
        try editor.save()
        #expect(people[id: jack.id]?.name == "Jack Jr.")
        #expect(people[id: jack.id]?.salary == 70_000)

        let wellPaid = people.query(filter: { $0.salary >= 60_000 }, sort: \.name)
        #expect(wellPaid.values.map(\.name) == ["Jack Jr."])
        try people.add(ReadmePerson(id: "987-65-4321", name: "Ann", salary: 90_000))
        #expect(wellPaid.values.map(\.name) == ["Ann", "Jack Jr."])
        #expect(wellPaid.diff.inserted == [0])
    }
}
