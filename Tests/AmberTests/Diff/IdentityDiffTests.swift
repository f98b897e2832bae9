import Amber
import AmberTestSupport
import PropertyBased
import Testing

/// A row whose identity is `id` and whose content is `value`.
private struct Item: Identifiable, Equatable, Sendable, CustomStringConvertible {
    let id: Int
    let value: Int

    init(_ id: Int, _ value: Int = 0) {
        self.id = id
        self.value = value
    }

    var description: String { "\(id):\(value)" }
}

private func items(_ ids: [Int]) -> [Item] {
    ids.map { Item($0) }
}

private typealias Move = IdentityDiff.Move

@Suite(.boundedConcurrency) struct IdentityDiffTests {
    @Test func equalArraysGiveAnEmptyDiff() {
        let rows = [Item(1, 5), Item(2), Item(1, 5), Item(3, 7)]
        let diff = IdentityDiff(from: rows, to: rows)
        #expect(diff.isEmpty)
        #expect(diff == IdentityDiff(from: [Item](), to: []))
        #expect(diff.removed.isEmpty && diff.inserted.isEmpty && diff.moved.isEmpty && diff.updated.isEmpty)
    }

    @Test func movingOneElementGivesExactlyOneMove() {
        let old = items(Array(0..<10))
        var new = old
        new.insert(new.remove(at: 2), at: 7)
        let diff = IdentityDiff(from: old, to: new)
        #expect(diff.moved == [Move(from: 2, to: 7)])
        #expect(diff.removed.isEmpty && diff.inserted.isEmpty && diff.updated.isEmpty)

        let toFront = IdentityDiff(from: items([0, 1, 2, 3]), to: items([3, 0, 1, 2]))
        #expect(toFront.moved == [Move(from: 3, to: 0)])
        let toBack = IdentityDiff(from: items([0, 1, 2, 3]), to: items([1, 2, 3, 0]))
        #expect(toBack.moved == [Move(from: 0, to: 3)])
    }

    @Test func insertionsRemovalsAndUpdatesAtKnownOffsets() {
        let old = [Item(1), Item(2), Item(3), Item(4, 0), Item(5)]
        let new = [Item(1), Item(9), Item(3), Item(4, 1), Item(5), Item(8)]
        let diff = IdentityDiff(from: old, to: new)
        #expect(diff.removed == [1])
        #expect(diff.inserted == [1, 5])
        #expect(diff.moved.isEmpty)
        #expect(diff.updated == [3])
        #expect(!diff.isEmpty)
        #expect(diff.applied(to: old, new: new) == new)
    }

    @Test func aMovedElementWhoseValueChangedIsAlsoUpdated() {
        let old = [Item(1), Item(2), Item(3, 0)]
        let new = [Item(3, 1), Item(1), Item(2)]
        let diff = IdentityDiff(from: old, to: new)
        #expect(diff.moved == [Move(from: 2, to: 0)])
        #expect(diff.updated == [0])
        #expect(diff.applied(to: old, new: new) == new)
    }

    @Test func fromOrToAnEmptyArray() {
        let rows = items([4, 5, 4])
        #expect(IdentityDiff(from: [], to: rows).inserted == [0, 1, 2])
        #expect(IdentityDiff(from: rows, to: []).removed == [0, 1, 2])
        #expect(IdentityDiff(from: [], to: rows).applied(to: [], new: rows) == rows)
    }

    @Test func duplicateIdentitiesMatchInOrderOfOccurrence() {
        // id 1: old 0, 1, 3 against new 0, 3; id 2: old 2 against new 1, 2.
        let old = [Item(1, 1), Item(1, 2), Item(2), Item(1, 3)]
        let new = [Item(1, 2), Item(2), Item(2), Item(1, 1)]
        let diff = IdentityDiff(from: old, to: new)
        #expect(diff.removed == [3])
        #expect(diff.inserted == [2])
        #expect(diff.updated == [0, 3])
        #expect(diff.moved.count == 1)
        #expect(diff.applied(to: old, new: new) == new)

        let sameID = IdentityDiff(from: items([7, 7, 7, 7, 7]), to: items([7, 7, 7]))
        #expect(sameID.removed == [3, 4])
        #expect(sameID.inserted.isEmpty && sameID.moved.isEmpty && sameID.updated.isEmpty)
    }

    @Test func worksOnAnyRandomAccessCollection() {
        let old = items([1, 2, 3, 4])[1...]
        let new = items([0, 4, 3, 2])[1...]
        let diff = IdentityDiff(from: old, to: new)
        #expect(diff.moved.count == 2)
        #expect(diff.applied(to: Array(old), new: Array(new)) == Array(new))
    }

    @Test func batchUpdatesSpeakIndexPathsInOneSection() {
        let old = [Item(1), Item(2), Item(3), Item(4, 0)]
        let new = [Item(4, 1), Item(1), Item(3), Item(5)]
        let updates = IdentityDiff(from: old, to: new).batchUpdates(inSection: 2)
        #expect(updates.deletions == [[2, 1]])
        #expect(updates.insertions == [[2, 3]])
        #expect(updates.moves == [IdentityDiff.BatchUpdates.Move(from: [2, 3], to: [2, 0])])
        #expect(updates.reloads == [[2, 0]])
        #expect(IdentityDiff(from: old, to: old).batchUpdates() == IdentityDiff(from: new, to: new).batchUpdates())
    }

    @Test func oneHundredThousandElementsWithAFewChanges() {
        let old = (0..<100_000).map { Item($0) }
        var new = old
        new.remove(at: 50_000)
        new.remove(at: 10)
        new[69_998] = Item(70_000, 1)
        new.insert(new.removeLast(), at: 0)
        new.insert(Item(200_000), at: 1_000)

        let diff = IdentityDiff(from: old, to: new)
        #expect(diff.removed == [10, 50_000])
        #expect(diff.inserted == [1_000])
        #expect(diff.moved == [Move(from: 99_999, to: 0)])
        #expect(diff.updated == [new.firstIndex { $0.id == 70_000 }!])
        // Compared apart so that a failure does not print 100,000 rows twice.
        let appliedGivesNew = diff.applied(to: old, new: new) == new
        #expect(appliedGivesNew)
    }

    @Test func oneHundredThousandElementsReversed() {
        let old = (0..<100_000).map { Item($0) }
        let new = Array(old.reversed())
        let diff = IdentityDiff(from: old, to: new)
        #expect(diff.moved.count == 99_999)
        #expect(diff.removed.isEmpty && diff.inserted.isEmpty && diff.updated.isEmpty)
        let appliedGivesNew = diff.applied(to: old, new: new) == new
        #expect(appliedGivesNew)
    }
}

// MARK: - Properties

/// Rows with ids and values from small ranges, so duplicates, moves, insertions,
/// removals and value changes all happen.
private let rows = zip(Gen.int(in: 0...5), Gen.int(in: 0...1))
    .map { id, value in Item(id, value) }
    .array(of: 0...12)

/// For each offset in `new`, the offset in `old` of the same occurrence of its id, if any.
private func expectedMatches(from old: [Item], to new: [Item]) -> [Int?] {
    var oldOffsetsByID: [Int: [Int]] = [:]
    for (offset, item) in old.enumerated() { oldOffsetsByID[item.id, default: []].append(offset) }
    var occurrencesSoFar: [Int: Int] = [:]
    return new.map { item in
        let occurrence = occurrencesSoFar[item.id, default: 0]
        occurrencesSoFar[item.id] = occurrence + 1
        let candidates = oldOffsetsByID[item.id, default: []]
        return occurrence < candidates.count ? candidates[occurrence] : nil
    }
}

/// Length of a longest strictly increasing subsequence, the slow and obvious way.
private func longestIncreasingSubsequenceLength(_ sequence: [Int]) -> Int {
    var lengthEndingAt = [Int](repeating: 1, count: sequence.count)
    for end in sequence.indices {
        for start in 0..<end where sequence[start] < sequence[end] {
            lengthEndingAt[end] = max(lengthEndingAt[end], lengthEndingAt[start] + 1)
        }
    }
    return lengthEndingAt.max() ?? 0
}

/// Replays the diff on `old`'s ids step by step: take out what is removed or
/// moved, then put in, by ascending new offset, what is inserted or moved there.
private func replayIDs(of diff: IdentityDiff, from old: [Item], to new: [Item]) -> [Int] {
    var ids = old.map(\.id)
    for offset in Set(diff.removed + diff.moved.map(\.from)).sorted(by: >) { ids.remove(at: offset) }
    var arrivals = diff.inserted.map { (offset: $0, id: new[$0].id) }
    arrivals += diff.moved.map { (offset: $0.to, id: old[$0.from].id) }
    for arrival in arrivals.sorted(by: { $0.offset < $1.offset }) { ids.insert(arrival.id, at: arrival.offset) }
    return ids
}

private func isAscending(_ offsets: [Int]) -> Bool {
    zip(offsets, offsets.dropFirst()).allSatisfy { $0 < $1 }
}

@Suite(.boundedConcurrency) struct IdentityDiffPropertyTests {
    @Test func removalsInsertionsAndMovesTurnOldIdentitiesIntoNew() async {
        await propertyCheck(count: 1_000, input: rows, rows) { old, new in
            let diff = IdentityDiff(from: old, to: new)
            #expect(replayIDs(of: diff, from: old, to: new) == new.map(\.id))
            #expect(diff.applied(to: old, new: new) == new)
            #expect(diff.isEmpty == (old == new))
        }
    }

    @Test func offsetsAreTheOccurrenceMatchingAndUpdatedIsExactlyTheChangedValues() async {
        await propertyCheck(count: 1_000, input: rows, rows) { old, new in
            let diff = IdentityDiff(from: old, to: new)
            let matches = expectedMatches(from: old, to: new)
            let matchedOld = Set(matches.compactMap { $0 })

            #expect(diff.removed == old.indices.filter { !matchedOld.contains($0) })
            #expect(diff.inserted == new.indices.filter { matches[$0] == nil })
            #expect(
                diff.updated
                    == new.indices.filter { newOffset in
                        matches[newOffset].map { oldOffset in old[oldOffset] != new[newOffset] } ?? false
                    })
            for move in diff.moved {
                #expect(matches[move.to] == move.from, "\(move) is not a matched pair")
            }
            #expect(isAscending(diff.removed) && isAscending(diff.inserted) && isAscending(diff.updated))
            #expect(isAscending(diff.moved.map(\.to)))
        }
    }

    @Test func onlyElementsOutsideALongestOrderedRunMove() async {
        await propertyCheck(count: 1_000, input: rows, rows) { old, new in
            let diff = IdentityDiff(from: old, to: new)
            let matchedOldInNewOrder = expectedMatches(from: old, to: new).compactMap { $0 }
            let expectedMoves = matchedOldInNewOrder.count - longestIncreasingSubsequenceLength(matchedOldInNewOrder)
            #expect(diff.moved.count == expectedMoves)
        }
    }

    @Test func aPermutationWithOneElementMovedGivesExactlyOneMove() async {
        let shuffledIDs = Gen.shuffled(Array(0..<30))
        await propertyCheck(
            count: 500, input: shuffledIDs, Gen.int(in: 1...30), Gen.int(in: 0...29), Gen.int(in: 0...29)
        ) {
            ids, count, fromSeed, toSeed in
            let old = items(Array(ids.prefix(count)))
            let (from, to) = (fromSeed % count, toSeed % count)
            var new = old
            new.insert(new.remove(at: from), at: to)

            let diff = IdentityDiff(from: old, to: new)
            #expect(diff.removed.isEmpty && diff.inserted.isEmpty && diff.updated.isEmpty)
            if from == to {
                #expect(diff.isEmpty)
            } else if abs(from - to) == 1 {
                // Swapping neighbours: either one may be the one reported as moved.
                #expect(diff.moved == [Move(from: from, to: to)] || diff.moved == [Move(from: to, to: from)])
            } else {
                #expect(diff.moved == [Move(from: from, to: to)])
            }
            #expect(diff.applied(to: old, new: new) == new)
        }
    }
}
