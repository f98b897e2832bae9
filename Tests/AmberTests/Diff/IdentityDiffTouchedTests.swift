import AmberTestSupport
import PropertyBased
import Testing

@testable import Amber

/// A row whose identity is `id` and whose content is `value`.
private struct Cell: Identifiable, Equatable, Sendable, CustomStringConvertible {
    let id: Int
    let value: Int

    var description: String { "\(id):\(value)" }
}

/// What happens to one element of the old array.
private enum ElementRole: Int, CaseIterable {
    /// Keeps its order and is not listed, as an untouched value.
    case untouched
    /// Keeps its order and is listed as touched, as a value updated without a new sort key.
    case keepsItsOrder
    /// Is listed as touched and may go anywhere, as a value whose sort key changed.
    case placedAgain
    /// Leaves.
    case removed
}

/// An update of a sorted array as a live query sees it: the old and new arrays, and what it knows.
private struct TouchedUpdate: CustomStringConvertible {
    var old: [Cell] = []
    var new: [Cell] = []
    var removed: [Int] = []
    var inserted: [Int] = []
    var touched: [IdentityDiff.Touched] = []

    var description: String {
        "\(old) -> \(new), touched \(touched.map { "\($0.from)->\($0.to)\($0.keepsItsOrder ? "" : "*")" })"
    }

    /// Builds the update from each old element's role, the places where the elements placed again
    /// and the inserted ones go, and which touched elements change value.
    init(roles: [ElementRole], places: [Int], insertions: Int, updates: [Bool]) {
        old = roles.indices.map { Cell(id: $0, value: 0) }
        var places = places.makeIterator()
        var placedAgain: [Cell] = []
        for (offset, role) in roles.enumerated() {
            let changes = updates[offset % updates.count]
            switch role {
            case .untouched: new.append(old[offset])
            case .keepsItsOrder: new.append(Cell(id: offset, value: changes ? 1 : 0))
            case .placedAgain: placedAgain.append(Cell(id: offset, value: changes ? 1 : 0))
            case .removed: removed.append(offset)
            }
        }
        for cell in placedAgain + (0..<insertions).map({ Cell(id: 100 + $0, value: 0) }) {
            new.insert(cell, at: (places.next() ?? 0) % (new.count + 1))
        }
        for (to, cell) in new.enumerated() {
            guard cell.id < 100 else {
                inserted.append(to)
                continue
            }
            let role = roles[cell.id]
            guard role != .untouched else { continue }
            touched.append(
                .init(from: cell.id, to: to, keepsItsOrder: role == .keepsItsOrder, isUpdated: cell.value == 1))
        }
        inserted.shuffle()
    }
}

private let updates = zip(
    Gen.int(in: 0...3).array(of: 0...14), Gen.int(in: 0...1_000).array(of: 20...20), Gen.int(in: 0...4),
    Gen.bool.array(of: 1...5)
).map { roles, places, insertions, updates in
    TouchedUpdate(
        roles: roles.map { ElementRole(rawValue: $0)! }, places: places, insertions: insertions, updates: updates)
}

@Suite(.boundedConcurrency) struct IdentityDiffTouchedTests {
    /// The diff a live query builds from the touched elements alone replays the old array into the
    /// new one, moves only elements placed again, and moves as few of them as the untouched
    /// elements allow.
    @Test func theDiffOfTouchedElementsReplaysAndMovesAsFewAsPossible() async {
        await propertyCheck(count: 2_000, input: updates) { update in
            let diff = IdentityDiff(removed: update.removed, inserted: update.inserted, touched: update.touched)
            #expect(diff.applied(to: update.old, new: update.new) == update.new, "\(update): \(diff)")
            let placedAgain = Set(update.touched.filter { !$0.keepsItsOrder }.map(\.from))
            #expect(diff.moved.allSatisfy { placedAgain.contains($0.from) }, "\(update): \(diff.moved)")
            #expect(diff.moved.count == fewestMoves(update), "\(update): \(diff.moved)")
            #expect(diff.removed == update.removed.sorted())
            #expect(diff.inserted == update.inserted.sorted())
            #expect(diff.updated == update.new.indices.filter { update.new[$0].value == 1 })
            let reference = IdentityDiff(from: update.old, to: update.new)
            #expect(
                diff.removed == reference.removed && diff.inserted == reference.inserted
                    && diff.updated == reference.updated)
            if reference.moved.isEmpty { #expect(diff.moved.isEmpty, "\(update)") }
        }
    }
}

/// How many elements placed again must move when every other element of both arrays stays: those
/// outside a heaviest increasing run of old offsets (in new order) that holds every other element.
private func fewestMoves(_ update: TouchedUpdate) -> Int {
    let placedAgain = Set(update.touched.filter { !$0.keepsItsOrder }.map(\.from))
    let matched = update.new.filter { $0.id < 100 }.map(\.id)
    let heavy = 1_000
    let weights = matched.map { placedAgain.contains($0) ? 1 : heavy }
    var best = [Int](repeating: 0, count: matched.count)
    for index in matched.indices {
        best[index] = weights[index]
        for earlier in 0..<index where matched[earlier] < matched[index] {
            best[index] = max(best[index], best[earlier] + weights[index])
        }
    }
    let stayingWeight = best.max() ?? 0
    let steady = matched.count - placedAgain.count
    return placedAgain.count - (stayingWeight - heavy * steady)
}
