import Amber
import Foundation
import HeapStatistics

/// A note of a timeline: half of them archived, sorted by when they were last changed.
@Immutable
struct TimelineNote: Identifiable, Hashable, Sendable {
    let id: Int
    let text: String
    let isArchived: Bool
    let modified: Date
}

extension TimelineNote {
    static func samples(_ count: Int) -> [TimelineNote] {
        var generator = SeededGenerator(seed: 15)
        return (0..<count).map { id in
            TimelineNote(
                id: id,
                text: "Note \(id): a line or two that someone typed on a phone and kept.",
                isArchived: id.isMultiple(of: 2),
                // Spread over a year, in no particular order relative to the ids.
                modified: Date(
                    timeIntervalSince1970: 1_700_000_000 + Double.random(in: 0..<31_536_000, using: &generator))
            )
        }
    }
}

/// A live query kept current against re-running filter + sort + `IdentityDiff` on each change.
enum QueryWorkload {
    static let count = 100_000
    /// Updates per round: each edits one shown note, which then sorts first.
    static let updates = 20

    static let filter: @Sendable (TimelineNote) -> Bool = { !$0.isArchived }
    static let sort = [KeyPathComparator(\TimelineNote.modified, order: .reverse)]

    /// The same `updates` edits for both sides: shown notes, at seeded random places.
    static func edits(of notes: [TimelineNote]) -> [TimelineNote] {
        var generator = SeededGenerator(seed: 16)
        let shown = notes.filter(filter)
        var now = Date(timeIntervalSince1970: 1_800_000_000)
        return (0..<updates).map { index in
            now += 1
            let note = shown.randomElement(using: &generator)!
            return note.update(text: "\(note.text) (edit \(index))", modified: now)
        }
    }

    /// The baseline re-sorts with the query's own `KeyPathComparator`s, as an app that keeps its
    /// sort descriptors does.
    static var comparison: Comparison {
        comparison(baselineSort: { $0.sorted(using: sort) })
    }

    /// The baseline re-sorts with a closure, the fastest sort an app can write by hand; the query
    /// still takes `KeyPathComparator`s.
    static var closureComparison: Comparison {
        comparison(baselineSort: { $0.sorted { $0.modified > $1.modified } })
    }

    static func comparison(baselineSort: @escaping @MainActor ([TimelineNote]) -> [TimelineNote]) -> Comparison {
        let notes = TimelineNote.samples(count)
        let edits = edits(of: notes)
        return Comparison(
            target: 0.02, rounds: 5,
            ours: {
                let store = IdentityStore<TimelineNote>()
                try store.add(contentsOf: notes)
                let timeline = store.query(filter: filter, sort: sort)
                var moves = 0
                let elapsed = try await milliseconds {
                    for edit in edits {
                        try store.add(edit)
                        moves += timeline.diff.moved.count
                    }
                }
                try check(timeline.values, diffMoves: moves, against: store)
                return elapsed
            },
            baseline: {
                let store = IdentityStore<TimelineNote>()
                try store.add(contentsOf: notes)
                let timeline = RecomputedTimeline(store: store, sort: baselineSort)
                let elapsed = try await milliseconds {
                    for edit in edits { try store.add(edit) }
                }
                try check(timeline.values, diffMoves: timeline.moves, against: store)
                return elapsed
            }
        )
    }

    /// Both sides must end with filter + sort of the store, having reported each edit as a move.
    @MainActor
    static func check(_ values: [TimelineNote], diffMoves: Int, against store: IdentityStore<TimelineNote>) throws {
        guard values == store.all.filter(filter).sorted(using: sort) else {
            throw BenchmarkError("query-update-100k: the timeline differs from filter + sort of the store")
        }
        // An edit of the note already first moves nothing.
        guard diffMoves >= updates - 1 else {
            throw BenchmarkError("query-update-100k: \(diffMoves) moves reported for \(updates) edits")
        }
    }

    /// What the live query adds to the heap, with a store of `count` notes, half of them shown.
    static var memory: Check {
        Check(
            printed: ["query_bytes", "query_bytes_per_store_value", "shown_array_bytes", "recomputed_bytes"],
            ours: "query_bytes", baseline: "shown_array_bytes", unit: "B",
            target: "≤ the shown values + 64 B per identity of the store"
        ) {
            let notes = TimelineNote.samples(count)
            let store = IdentityStore<TimelineNote>()
            try store.add(contentsOf: notes)
            let shownCount = notes.filter(filter).count
            let shownArray = shownCount * MemoryLayout<TimelineNote>.stride

            let before = heapBytesInUse()
            let timeline = store.query(filter: filter, sort: sort)
            let withQuery = heapBytesInUse()
            precondition(
                timeline.values.count == shownCount, "query-memory-100k: the query shows \(timeline.values.count)")
            withExtendedLifetime(timeline) {}

            // The baseline keeps its own filtered, sorted array between changes.
            let recomputedBefore = heapBytesInUse()
            let recomputed = store.all.filter(filter).sorted(using: sort)
            let recomputedAfter = heapBytesInUse()
            withExtendedLifetime(recomputed) {}

            let queryBytes = withQuery - before
            let figures = [
                "query_bytes": queryBytes,
                "query_bytes_per_store_value": queryBytes / count,
                "shown_array_bytes": shownArray,
                "recomputed_bytes": recomputedAfter - recomputedBefore,
            ]
            // Its values array, and a store-order index of at most 64 bytes per identity of the store.
            return (figures, queryBytes <= shownArray + 64 * count)
        }
    }
}

/// The baseline: a timeline an app keeps by hand, re-running filter + sort + `IdentityDiff` on every change.
@MainActor
final class RecomputedTimeline {
    private(set) var values: [TimelineNote]
    private(set) var moves = 0

    init(store: IdentityStore<TimelineNote>, sort: @escaping @MainActor ([TimelineNote]) -> [TimelineNote]) {
        values = sort(store.all.filter(QueryWorkload.filter))
        store.addObserver(self) { [weak store] timeline, _ in
            guard let store else { return }
            let new = sort(store.all.filter(QueryWorkload.filter))
            let diff = IdentityDiff(from: timeline.values, to: new)
            timeline.moves += diff.moved.count
            timeline.values = new
        }
    }
}

/// The bytes the process's allocator has handed out and not yet taken back.
func heapBytesInUse() -> Int {
    Int(heap_bytes_in_use())
}
