import Amber

enum DiffWorkload {
    static let count = 100_000
    /// 1% of `count`: as many inserts, deletes, moves and updates.
    static let changes = 1_000

    static var comparison: Comparison {
        let (old, new) = arrays()
        return Comparison(
            target: 0.1, rounds: 3,
            ours: {
                var diff: IdentityDiff?
                let elapsed = await milliseconds { diff = IdentityDiff(from: old, to: new) }
                precondition(
                    diff?.removed.count == changes && diff?.inserted.count == changes && diff?.updated.count == changes,
                    "diff-100k found another change than the one made"
                )
                return elapsed
            },
            baseline: {
                var found = (removed: 0, inserted: 0, updated: 0)
                let elapsed = await milliseconds {
                    let difference = new.map(\.id).difference(from: old.map(\.id)).inferringMoves()
                    var oldByID: [Int: Item] = [:]
                    oldByID.reserveCapacity(old.count)
                    for item in old { oldByID[item.id] = item }
                    var updated = 0
                    for item in new {
                        if let previous = oldByID[item.id], previous != item { updated += 1 }
                    }
                    // Moves show as a removal and an insertion associated with each other.
                    found = (difference.removals.count - changes, difference.insertions.count - changes, updated)
                }
                precondition(found.updated == changes, "diff-100k baseline found \(found.updated) updates")
                return elapsed
            }
        )
    }

    /// `count` items, and the same with 1% deleted, 1% inserted, 1% moved and 1% updated, at seeded random places.
    static func arrays() -> (old: [Item], new: [Item]) {
        var generator = SeededGenerator(seed: 8)
        let old = Item.samples(count)
        let picked = Array(old.indices).shuffled(using: &generator)
        let deleted = Set(picked[0..<changes])
        let moved = Array(picked[changes..<(2 * changes)])
        let movedSet = Set(moved)
        let updated = Set(picked[(2 * changes)..<(3 * changes)])
        var new: [Item] = []
        new.reserveCapacity(count)
        for (index, item) in old.enumerated() where !deleted.contains(index) && !movedSet.contains(index) {
            new.append(updated.contains(index) ? item.with(count: item.count + 1) : item)
        }
        for index in moved {
            new.insert(old[index], at: Int.random(in: 0...new.count, using: &generator))
        }
        for item in Item.samples(changes, from: count) {
            new.insert(item, at: Int.random(in: 0...new.count, using: &generator))
        }
        return (old, new)
    }
}
