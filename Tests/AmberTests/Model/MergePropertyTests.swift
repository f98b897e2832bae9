import Amber
import AmberTestSupport
import PropertyBased
import Testing

/// Persons drawn from small domains, so that the three sides often agree on a field.
private let persons = zip(
    Gen.int(in: 0...2), Gen.int(in: 0...2), Gen.int(in: 0...2)
).map { name, age, job in
    Person(id: "p", name: ["Ann", "Bob", "Cy"][name], age: 20 + age, job: [nil, "Cook", "Pilot"][job])
}

@Suite(.boundedConcurrency) struct MergePropertyTests {
    @Test func mergeWithMineUnchangedGivesTheirs() async {
        await propertyCheck(count: 300, input: persons, persons) { base, theirs in
            let result = Person.merge(base: base, mine: base, theirs: theirs)
            #expect(result.value == theirs)
            #expect(result.conflicts.isEmpty)
        }
    }

    @Test func mergeWithTheirsUnchangedGivesMine() async {
        await propertyCheck(count: 300, input: persons, persons) { base, mine in
            let result = Person.merge(base: base, mine: mine, theirs: base)
            #expect(result.value == mine)
            #expect(result.conflicts.isEmpty)
        }
    }

    @Test func conflictsAreExactlyTheFieldsChangedOnBothSidesDifferently() async {
        await propertyCheck(count: 500, input: persons, persons, persons) { base, mine, theirs in
            let result = Person.merge(base: base, mine: mine, theirs: theirs)
            let fields: [(String, (Person) -> AnyHashable?)] = [
                ("id", { $0.id }), ("name", { $0.name }), ("age", { $0.age }), ("job", { $0.job }),
            ]
            var expectedConflicts: [String] = []
            for (name, field) in fields {
                let (b, m, t, merged) = (field(base), field(mine), field(theirs), field(result.value))
                if m != b && t != b && m != t { expectedConflicts.append(name) }
                // Every field comes from the side that changed it, and from mine on a conflict.
                #expect(merged == (m != b ? m : t), "field \(name)")
            }
            #expect(result.conflicts == expectedConflicts)
        }
    }
}
