import Amber
import AmberTestSupport
import PropertyBased
import Testing

/// A note shared between two phones, with a merge strategy on every field that has an obvious answer.
@Immutable
struct SharedNote: Identifiable, Hashable, Sendable {
    let id: String
    @Merge(.union) let tagIDs: [String]
    @Merge(.union) let readers: Set<String>
    @Merge(.counter) let views: Int
    @Merge(.mine) let color: String
    @Merge(.theirs) let isPinned: Bool
    @Merge(.latest(by: "modifiedAt")) let title: String
    let modifiedAt: Int
}

/// Notes drawn from small domains, so that the three sides often agree on a field.
private let notes = zip(
    Gen.int(in: 0...4).set(ofAtMost: 0...4).map { $0.sorted().map { "t\($0)" } },
    Gen.int(in: 0...3).set(ofAtMost: 0...3).map { Set($0.map { "r\($0)" }) },
    Gen.int(in: 0...5),
    Gen.int(in: 0...2),
    Gen.bool(),
    Gen.int(in: 0...2),
    Gen.int(in: 0...2)
).map { tags, readers, views, color, isPinned, title, modifiedAt in
    SharedNote(
        id: "n", tagIDs: tags, readers: readers, views: views, color: ["red", "green", "blue"][color],
        isPinned: isPinned, title: ["A", "B", "C"][title], modifiedAt: modifiedAt
    )
}

@Suite(.boundedConcurrency) struct MergeStrategyPropertyTests {
    @Test func mergeWithMineUnchangedGivesTheirs() async {
        await propertyCheck(count: 300, input: notes, notes) { base, theirs in
            let result = SharedNote.merge(base: base, mine: base, theirs: theirs)
            #expect(result.value == theirs)
            #expect(result.conflicts.isEmpty)
        }
    }

    @Test func mergeWithTheirsUnchangedGivesMine() async {
        await propertyCheck(count: 300, input: notes, notes) { base, mine in
            let result = SharedNote.merge(base: base, mine: mine, theirs: base)
            #expect(result.value == mine)
            #expect(result.conflicts.isEmpty)
        }
    }

    @Test func unionKeepsWhatEitherSideAddedAndDropsWhatEitherRemoved() async {
        await propertyCheck(count: 500, input: notes, notes, notes) { base, mine, theirs in
            let merged = SharedNote.merge(base: base, mine: mine, theirs: theirs).value
            for (field, merged, base, mine, theirs) in [
                ("tagIDs", Set(merged.tagIDs), Set(base.tagIDs), Set(mine.tagIDs), Set(theirs.tagIDs)),
                ("readers", merged.readers, base.readers, mine.readers, theirs.readers),
            ] {
                let added = mine.subtracting(base).union(theirs.subtracting(base))
                let removed = base.subtracting(mine).union(base.subtracting(theirs))
                #expect(merged == base.subtracting(removed).union(added), "\(field)")
            }
            #expect(Set(merged.tagIDs).count == merged.tagIDs.count, "no element twice")
        }
    }

    @Test func unionKeepsMineOrderThenTheirAdditions() {
        let base = SharedNote(
            id: "n", tagIDs: ["a", "b", "c"], readers: [], views: 0, color: "red", isPinned: false, title: "A",
            modifiedAt: 0)
        let mine = base.with(tagIDs: ["c", "a", "m"])
        let theirs = base.with(tagIDs: ["t", "a", "c", "u"])
        #expect(SharedNote.merge(base: base, mine: mine, theirs: theirs).value.tagIDs == ["c", "a", "m", "t", "u"])
    }

    @Test func counterAddsBothSidesChanges() async {
        await propertyCheck(count: 300, input: notes, notes, notes) { base, mine, theirs in
            let merged = SharedNote.merge(base: base, mine: mine, theirs: theirs).value
            #expect(merged.views == base.views + (mine.views - base.views) + (theirs.views - base.views))
        }
    }

    @Test func conflictsAreSettledByTheirStrategies() async {
        await propertyCheck(count: 500, input: notes, notes, notes) { base, mine, theirs in
            let result = SharedNote.merge(base: base, mine: mine, theirs: theirs)
            let merged = result.value
            let colorChangedOnBothSides = mine.color != base.color && theirs.color != base.color
            #expect(
                merged.color
                    == (colorChangedOnBothSides ? mine.color : (mine.color != base.color ? mine.color : theirs.color)))
            let pinChangedOnBothSides = mine.isPinned != base.isPinned && theirs.isPinned != base.isPinned
            #expect(
                merged.isPinned
                    == (pinChangedOnBothSides || theirs.isPinned != base.isPinned ? theirs.isPinned : mine.isPinned))
            if mine.title != base.title && theirs.title != base.title {
                #expect(merged.title == (mine.modifiedAt >= theirs.modifiedAt ? mine.title : theirs.title))
            }
            // Only the fields without a strategy can conflict.
            let conflictsOnModifiedAt =
                mine.modifiedAt != base.modifiedAt && theirs.modifiedAt != base.modifiedAt
                && mine.modifiedAt != theirs.modifiedAt
            #expect(result.conflicts == (conflictsOnModifiedAt ? ["modifiedAt"] : []))
        }
    }
}
