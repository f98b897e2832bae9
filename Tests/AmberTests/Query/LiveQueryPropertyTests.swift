import Amber
import AmberTestSupport
import Foundation
import PropertyBased
import Testing

/// A value with few distinct sort keys, so that ties (broken by store order) are common.
struct Row: Identifiable, Hashable, Sendable, CustomStringConvertible {
    let id: Int
    let rank: Int
    let group: Int

    var description: String { "\(id):\(rank)/\(group)" }
}

/// One write of the model-based test; `writes` are applied as one transaction.
enum RowOperation: Sendable, CustomStringConvertible {
    case add(Row)
    case addMany([Row])
    case remove(Int)
    case update(Int, rank: Int)
    case transaction([RowWrite])
    case removeAll

    var description: String {
        switch self {
        case .add(let row): "add(\(row))"
        case .addMany(let rows): "addMany(\(rows))"
        case .remove(let id): "remove(\(id))"
        case .update(let id, let rank): "update(\(id), rank: \(rank))"
        case .transaction(let writes): "transaction(\(writes))"
        case .removeAll: "removeAll"
        }
    }
}

/// A write inside a transaction.
enum RowWrite: Sendable, CustomStringConvertible {
    case add(Row)
    case remove(Int)

    var description: String {
        switch self {
        case .add(let row): "add(\(row))"
        case .remove(let id): "remove(\(id))"
        }
    }
}

private let ids = Gen.int(in: 0...29)
private let rows = zip(ids, Gen.int(in: 0...3), Gen.int(in: 0...2)).map { Row(id: $0, rank: $1, group: $2) }
private let writes = zip(Gen.int(in: 0...2), rows, ids).map { choice, row, id -> RowWrite in
    choice == 0 ? .remove(id) : .add(row)
}
private let operations = zip(
    Gen.int(in: 0...30), rows, rows.array(of: 0...24), ids, Gen.int(in: 0...3), writes.array(of: 1...24)
)
.map { choice, row, many, id, rank, writes -> RowOperation in
    switch choice {
    case 0...9: .add(row)
    case 10...12: .addMany(many)
    case 13...17: .remove(id)
    case 18...25: .update(id, rank: rank)
    case 26...29: .transaction(writes)
    default: .removeAll
    }
}

/// A query as the test states it: the filter and comparators given to the live query.
struct StatedQuery: Sendable {
    let name: String
    let filter: (@Sendable (Row) -> Bool)?
    let sort: [KeyPathComparator<Row>]

    /// What the live query must hold: `all` filtered, then stably sorted (ties in store order).
    func expected(from all: [Row]) -> [Row] {
        let kept = all.enumerated().filter { filter?($0.element) ?? true }
        return kept.sorted { a, b in
            for comparator in sort {
                let order = comparator.compare(a.element, b.element)
                if order != .orderedSame { return order == .orderedAscending }
            }
            return a.offset < b.offset
        }.map(\.element)
    }

    /// Whether the sort key of two values of one identity differs.
    func sortKeyChanged(_ old: Row, _ new: Row) -> Bool {
        sort.contains { $0.compare(old, new) != .orderedSame }
    }
}

private let statedQueries = [
    StatedQuery(name: "everything, store order", filter: nil, sort: []),
    StatedQuery(name: "group 1 or 2, store order", filter: { $0.group != 0 }, sort: []),
    StatedQuery(name: "by rank", filter: nil, sort: [KeyPathComparator(\.rank)]),
    StatedQuery(
        name: "group 1 or 2, by rank descending then group", filter: { $0.group != 0 },
        sort: [KeyPathComparator(\.rank, order: .reverse), KeyPathComparator(\.group)]
    ),
    StatedQuery(name: "even ids by group", filter: { $0.id.isMultiple(of: 2) }, sort: [KeyPathComparator(\.group)]),
]

@MainActor
@Suite(.boundedConcurrency) struct LiveQueryPropertyTests {
    /// After any sequence of writes, each live query holds filter + sort of `store.all`, and its diff
    /// replays the values before the write into the values after it.
    @Test func aLiveQueryIsAlwaysFilterAndSortOfTheStore() async {
        await propertyCheck(count: 300, input: rows.array(of: 0...20), operations.array(of: 1...40)) {
            initial, operations in
            let store = IdentityStore<Row>()
            try store.add(contentsOf: initial)
            let queries = statedQueries.map { stated in
                (stated, store.query(filter: stated.filter, sort: stated.sort))
            }
            for (stated, query) in queries {
                #expect(query.values == stated.expected(from: store.all), "\(stated.name), at the start")
            }
            for operation in operations {
                let before = queries.map(\.1.values)
                try apply(operation, to: store)
                let all = store.all
                for ((stated, query), old) in zip(queries, before) {
                    let new = query.values
                    #expect(new == stated.expected(from: all), "\(stated.name), after \(operation)")
                    check(query.diff, from: old, to: new, of: stated, after: operation)
                }
                // Lets other tests' main-actor work run: this one would hold the main actor for
                // seconds, and a test that times a main-actor hop would count them.
                await Task.yield()
            }
        }
    }

    private func apply(_ operation: RowOperation, to store: IdentityStore<Row>) throws {
        switch operation {
        case .add(let row): try store.add(row)
        case .addMany(let rows): try store.add(contentsOf: rows)
        case .remove(let id): try store.remove(id: id)
        case .update(let id, let rank): try store.update(id: id) { Row(id: $0.id, rank: rank, group: $0.group) }
        case .removeAll: try store.removeAll()
        case .transaction(let writes):
            try store.transaction { transaction in
                for write in writes {
                    switch write {
                    case .add(let row): transaction.add(row)
                    case .remove(let id): transaction.remove(id: id)
                    }
                }
            }
        }
    }

    /// When the values changed, `diff` is the diff of that update: it replays `old` into `new`,
    /// agrees with `IdentityDiff` on what was removed, inserted and updated, and moves only values
    /// whose sort key changed.
    private func check(
        _ diff: IdentityDiff, from old: [Row], to new: [Row], of stated: StatedQuery, after operation: RowOperation
    ) {
        let reference = IdentityDiff(from: old, to: new)
        // A write that leaves the values as they were is no update: `diff` is still the last one's.
        guard !reference.isEmpty else { return }
        #expect(diff.applied(to: old, new: new) == new, "\(stated.name): replaying the diff after \(operation)")
        #expect(diff.removed == reference.removed, "\(stated.name) after \(operation)")
        #expect(diff.inserted == reference.inserted, "\(stated.name) after \(operation)")
        #expect(diff.updated == reference.updated, "\(stated.name) after \(operation)")
        #expect(zip(diff.moved, diff.moved.dropFirst()).allSatisfy { $0.to < $1.to }, "moves sorted by destination")
        for move in diff.moved {
            #expect(
                old[move.from].id == new[move.to].id, "\(stated.name): \(move) is not one identity after \(operation)")
            #expect(
                stated.sortKeyChanged(old[move.from], new[move.to]),
                "\(stated.name): \(new[move.to]) moved but its sort key did not change, after \(operation)"
            )
        }
        if reference.moved.isEmpty {
            #expect(diff.moved.isEmpty, "\(stated.name): nothing changed order, yet \(diff.moved) after \(operation)")
        }
    }
}
