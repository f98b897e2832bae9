import Amber
import AmberTestSupport
import Testing

@Suite(.boundedConcurrency) struct ImmutableTests {
    let me = Person(id: "1", name: "Ryan", age: 29, job: "Engineer")

    @Test func memberwiseInitDefaultsOptionalsToNil() {
        let person = Person(id: "2", name: "Jack", age: 30)
        #expect(person.job == nil)
    }

    @Test func updateKeepsTheFieldsNotGiven() {
        let birthday = me.update(age: 30)
        #expect(birthday.name == "Ryan")
        #expect(birthday.age == 30)
        #expect(birthday.job == "Engineer")
        #expect(me.update() == me)
    }

    @Test func withReplacesOneFieldAndClearsOptionals() {
        #expect(me.with(job: nil).job == nil)
        #expect(me.with(job: "Manager").job == "Manager")
        #expect(me.with(name: "Ryan N.") == Person(id: "1", name: "Ryan N.", age: 29, job: "Engineer"))
    }

    @Test func updatingEditsSeveralFieldsAtOnce() {
        let edited = me.updating {
            $0.job = nil; $0.age += 1
        }
        #expect(edited == Person(id: "1", name: "Ryan", age: 30, job: nil))
        #expect(me.age == 29, "the original value never changes")
    }

    @Test func updatingRethrows() {
        struct Refused: Error {}
        #expect(throws: Refused.self) { try me.updating { _ in throw Refused() } }
    }

    @Test func draftRoundTrips() {
        var draft = me.draft
        #expect(Person(draft) == me)
        draft.name = "Someone"
        #expect(Person(draft).name == "Someone")
    }

    @Test func partialNamesMissingFieldsInDeclarationOrder() throws {
        var partial = Person.Partial()
        partial.name = "Jack"
        #expect(throws: IncompleteValueError(typeName: "Person", missingFields: ["id", "age"])) {
            try partial.completed()
        }
        do {
            _ = try partial.completed()
        } catch {
            #expect(error.description == "Person is missing id, age")
        }
        partial.id = "7"
        partial.age = 41
        #expect(try partial.completed() == Person(id: "7", name: "Jack", age: 41, job: nil))
        #expect(try Person.Partial(me).completed() == me)
    }

    @Test func fieldNamesAreInDeclarationOrder() {
        #expect(Person.fieldNames == ["id", "name", "age", "job"])
    }

    @Test func mergeTakesOneSidedChanges() {
        let mine = me.with(name: "Ryan N.")
        let theirs = me.with(job: "Manager")
        let result = Person.merge(base: me, mine: mine, theirs: theirs)
        #expect(result.value == Person(id: "1", name: "Ryan N.", age: 29, job: "Manager"))
        #expect(result.conflicts.isEmpty)
    }

    @Test func mergeOfTheSameChangeOnBothSidesIsNoConflict() {
        let both = me.update(age: 30)
        let result = Person.merge(base: me, mine: both, theirs: both)
        #expect(result.value == both)
        #expect(result.conflicts.isEmpty)
    }

    @Test func mergeKeepsMineAndListsConflicts() {
        let mine = me.update(name: "Mine", age: 40)
        let theirs = me.update(name: "Theirs", age: 40).with(job: nil)
        let result = Person.merge(base: me, mine: mine, theirs: theirs)
        #expect(result.value == Person(id: "1", name: "Mine", age: 40, job: nil))
        #expect(result.conflicts == ["name"])
    }

    @Test func identityIsNotEquality() {
        let raised = me.update(age: 30)
        #expect(raised != me)
        #expect(raised.hasSameIdentity(as: me))
        #expect(isSameIdentity(raised, me))
        #expect(!isSameIdentity(me, me.with(id: "2")))
    }
}
