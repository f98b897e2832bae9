import Foundation

/// What keeps a ``LiveQuery``'s values current: its filter, its sort order, and the place of each
/// identity in the store's order, which breaks ties.
///
/// The values themselves live in the live query's observed property. Each change is handled in two
/// steps, so that observers hear of it just before the values change: ``plan(_:in:)`` reads the
/// values and works out what the change does to them, ``perform(_:on:)`` does it.
///
/// Only the identities a change touched are looked at: each is found where it stood by binary
/// search, tested against the filter, and placed by binary search. Untouched values are neither
/// tested nor compared, except by those searches.
struct QueryResult<Value: Identifiable & Sendable> where Value.ID: Sendable {
    /// The sort order of the query; `nil` keeps the store's order.
    typealias Comparison = (Value, Value) -> ComparisonResult

    private let isIncluded: ((Value) -> Bool)?
    private let compare: Comparison?
    /// For every identity of the store, a number that grows with its place in the store's order.
    /// Kept for identities the filter leaves out too: an update may bring them in.
    private var storeOrder: [Value.ID: Int] = [:]
    private var nextStoreOrder = 0

    /// What a change does to the values.
    enum Plan {
        /// A few values leave, arrive or are replaced; the others keep their order.
        case edit(Edit)
        /// The values are replaced as a whole, after the store reloaded in another order.
        case replace(values: [Value], diff: IdentityDiff)
    }

    /// The values a change moves in or out, and where.
    struct Edit {
        /// Each identity the change touched that was or is among the values.
        var touches: [Touch] = []
        /// Offsets, before the change, of the values that leave their place; ascending.
        var leaving: [Int] = []
        /// The values that take a new place, with their store order, in the query's order.
        var arriving: [(value: Value, order: Int)] = []
        /// Values replaced where they stand: their sort key and store order did not change.
        var replacing: [(offset: Int, value: Value)] = []
    }

    /// One identity a change touched, that was or is among the values.
    struct Touch {
        /// Its offset among the values before the change; `nil` when it was not among them.
        let from: Int?
        /// Its value after the change when it is among the values, with its store order.
        let new: (value: Value, order: Int)?
        /// Whether it stays and kept its sort key and store order, so it kept its place.
        let keepsItsPlace: Bool
        /// Whether its value changed.
        let isUpdated: Bool
    }

    /// - Parameters:
    ///   - filter: Whether a value is shown; `nil` shows every value.
    ///   - compare: The sort order; `nil` keeps the store's order.
    init(filter: ((Value) -> Bool)?, compare: Comparison?) {
        self.isIncluded = filter
        self.compare = compare
    }

    /// Takes in every value of the store, in the store's order, and returns those of the query.
    ///
    /// - Complexity: O(*n* + *m* log *m*) for *n* values, *m* of which pass the filter.
    mutating func start(with all: [Value]) -> [Value] {
        storeOrder.removeAll(keepingCapacity: true)
        storeOrder.reserveCapacity(all.count)
        for (order, value) in all.enumerated() { storeOrder[value.id] = order }
        nextStoreOrder = all.count
        return sortedMembers(of: all)
    }

    /// The values of `all` (in store order, as numbered in ``storeOrder``) that pass the filter, sorted.
    private func sortedMembers(of all: [Value]) -> [Value] {
        var members: [(value: Value, order: Int)] = []
        for (order, value) in all.enumerated() where isIncluded?(value) ?? true {
            members.append((value, order))
        }
        if compare != nil {
            members.sort { precedes($0.value, $0.order, $1.value, $1.order) }
        }
        return members.map(\.value)
    }

    /// Works out what `change` does to `values`, and brings the store order up to date.
    ///
    /// - Returns: The plan, or `nil` when the values stay as they are.
    /// - Complexity: O(*k* log *n*) for *k* identities touched and *n* values, plus O(*k*) filter
    ///   tests; O(*s* log *s*) for *s* identities of the store when the store reloaded in another order.
    mutating func plan(_ change: StoreChange<Value>, in values: [Value]) -> Plan? {
        if case .replaced(let all)? = change.reordering {
            return replacement(by: all, updated: change.updated, in: values)
        }
        // Where the touched values stood, found with the store order they had.
        var touched: [(old: Value?, oldOrder: Int?, from: Int?, new: Value?, isUpdated: Bool)] = []
        func touch(old: Value?, new: Value?, isUpdated: Bool) {
            let oldOrder = (old ?? new).flatMap { storeOrder[$0.id] }
            let from = old.flatMap { old in oldOrder.flatMap { offset(of: old, order: $0, in: values) } }
            touched.append((old, oldOrder, from, new, isUpdated))
        }
        for value in change.removed { touch(old: value, new: nil, isUpdated: false) }
        for update in change.updated { touch(old: update.old, new: update.new, isUpdated: true) }
        var placedLast = change.inserted
        if case .placedLast(let last)? = change.reordering {
            placedLast = last
            // Another writer removed and added these again with an equal value: only their place changed.
            let listed = Set(change.inserted.map(\.id)).union(change.updated.map(\.new.id))
            for value in last where !listed.contains(value.id) { touch(old: value, new: value, isUpdated: false) }
        }
        for value in change.inserted { touch(old: nil, new: value, isUpdated: false) }

        for value in change.removed { storeOrder[value.id] = nil }
        for value in placedLast {
            storeOrder[value.id] = nextStoreOrder
            nextStoreOrder += 1
        }

        var edit = Edit()
        for entry in touched {
            let shown = entry.new.flatMap { isIncluded?($0) ?? true ? $0 : nil }
            switch (entry.from, shown) {
            case (nil, nil):
                continue
            case (let from?, nil):
                edit.leaving.append(from)
                edit.touches.append(Touch(from: from, new: nil, keepsItsPlace: false, isUpdated: entry.isUpdated))
            case (let from, let new?):
                let order = storeOrder(of: new.id)
                var keepsItsPlace = false
                if let from, let old = entry.old {
                    keepsItsPlace = entry.oldOrder == order && (compare?(old, new) ?? .orderedSame) == .orderedSame
                    if keepsItsPlace { edit.replacing.append((from, new)) } else { edit.leaving.append(from) }
                }
                if !keepsItsPlace { edit.arriving.append((new, order)) }
                edit.touches.append(
                    Touch(from: from, new: (new, order), keepsItsPlace: keepsItsPlace, isUpdated: entry.isUpdated))
            }
        }
        guard !edit.touches.isEmpty else { return nil }
        edit.leaving.sort()
        edit.arriving.sort { precedes($0.value, $0.order, $1.value, $1.order) }
        return .edit(edit)
    }

    /// Applies a plan made by ``plan(_:in:)`` to the values it was made for.
    ///
    /// - Returns: The diff from the values before to the values after.
    /// - Complexity: O(*k* log *n*) comparisons for *k* identities touched and *n* values, plus
    ///   moving the values between the places that changed in memory; O(*n*) when more than a few
    ///   values leave or arrive.
    func perform(_ plan: Plan, on values: inout [Value]) -> IdentityDiff {
        let edit: Edit
        switch plan {
        case .replace(let new, let diff):
            values = new
            return diff
        case .edit(let planned):
            edit = planned
        }
        for (offset, value) in edit.replacing { values[offset] = value }
        if edit.leaving.count == 1, let arriving = edit.arriving.first, edit.arriving.count == 1 {
            move(from: edit.leaving[0], to: arriving, in: &values)
        } else if edit.leaving.count + edit.arriving.count <= 16 {
            for offset in edit.leaving.reversed() { values.remove(at: offset) }
            for (value, order) in edit.arriving {
                let offset = insertionOffset(of: value, order: order, in: values)
                values.insert(value, at: offset)
            }
        } else {
            merge(edit, into: &values)
        }

        var removed: [Int] = []
        var inserted: [Int] = []
        var touched: [IdentityDiff.Touched] = []
        for touch in edit.touches {
            guard let new = touch.new else {
                if let from = touch.from { removed.append(from) }
                continue
            }
            guard let to = offset(of: new.value, order: new.order, in: values) else {
                preconditionFailure("A live query lost a value it just placed: its sort order is not consistent")
            }
            if let from = touch.from {
                touched.append(
                    .init(from: from, to: to, keepsItsOrder: touch.keepsItsPlace, isUpdated: touch.isUpdated))
            } else {
                inserted.append(to)
            }
        }
        return IdentityDiff(removed: removed, inserted: inserted, touched: touched)
    }

    /// Moves one value to its new place, shifting only the values between its old and new places.
    private func move(from: Int, to arriving: (value: Value, order: Int), in values: inout [Value]) {
        let to = insertionOffset(of: arriving.value, order: arriving.order, in: values, skipping: from)
        values.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            _ = (base + from).move()
            if to < from {
                (base + to + 1).moveInitialize(from: base + to, count: from - to)
            } else if to > from {
                (base + from).moveInitialize(from: base + from + 1, count: to - from)
            }
            (base + to).initialize(to: arriving.value)
        }
    }

    /// Rebuilds the values in one pass, for a change that moves many of them.
    private func merge(_ edit: Edit, into values: inout [Value]) {
        var merged: [Value] = []
        merged.reserveCapacity(values.count - edit.leaving.count + edit.arriving.count)
        var leaving = edit.leaving[...]
        var arriving = edit.arriving[...]
        for (offset, element) in values.enumerated() {
            if leaving.first == offset {
                leaving.removeFirst()
                continue
            }
            while let next = arriving.first, !isBefore(element, next.value, order: next.order) {
                merged.append(next.value)
                arriving.removeFirst()
            }
            merged.append(element)
        }
        merged.append(contentsOf: arriving.lazy.map(\.value))
        values = merged
    }

    /// The plan for a store that reloaded in another order: every place is worked out again.
    private mutating func replacement(by all: [Value], updated: [StoreChange<Value>.Update], in values: [Value])
        -> Plan?
    {
        let new = start(with: all)
        var oldOffsets: [Value.ID: Int] = [:]
        oldOffsets.reserveCapacity(values.count)
        for (offset, value) in values.enumerated() { oldOffsets[value.id] = offset }
        let updatedIDs = Set(updated.map(\.new.id))
        var updatedOffsets: [Int] = []
        let matched = new.enumerated().map { offset, value -> Int in
            guard let old = oldOffsets[value.id] else { return -1 }
            if updatedIDs.contains(value.id) { updatedOffsets.append(offset) }
            return old
        }
        let diff = IdentityDiff(oldCount: values.count, oldOffsetsInNewOrder: matched, updated: updatedOffsets)
        return diff.isEmpty ? nil : .replace(values: new, diff: diff)
    }

    /// The store order of an identity; one that has none (which a consistent store never leaves)
    /// is taken as placed last.
    private mutating func storeOrder(of id: Value.ID) -> Int {
        if let order = storeOrder[id] { return order }
        defer { nextStoreOrder += 1 }
        storeOrder[id] = nextStoreOrder
        return nextStoreOrder
    }

    /// Whether `a`, at store order `aOrder`, comes before `b` at `bOrder`.
    private func precedes(_ a: Value, _ aOrder: Int, _ b: Value, _ bOrder: Int) -> Bool {
        switch compare?(a, b) ?? .orderedSame {
        case .orderedAscending: true
        case .orderedDescending: false
        case .orderedSame: aOrder < bOrder
        }
    }

    /// Whether `element`, one of the values, comes before `value` at store order `order`.
    private func isBefore(_ element: Value, _ value: Value, order: Int) -> Bool {
        switch compare?(element, value) ?? .orderedSame {
        case .orderedAscending: return true
        case .orderedDescending: return false
        case .orderedSame:
            guard let elementOrder = storeOrder[element.id] else {
                preconditionFailure("A live query holds a value whose identity is not in its store")
            }
            return elementOrder < order
        }
    }

    /// The offset in the sorted `values` before which `value`, at store order `order`, goes; with
    /// `skipped`, the offset in `values` without the element at that offset.
    private func insertionOffset(of value: Value, order: Int, in values: [Value], skipping skipped: Int = .max) -> Int {
        var low = 0
        var high = skipped < values.count ? values.count - 1 : values.count
        while low < high {
            let middle = (low + high) / 2
            if isBefore(values[middle < skipped ? middle : middle + 1], value, order: order) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }

    /// The offset of `value`'s identity among the sorted `values`, found with `value`'s sort key
    /// and store order `order`; `nil` when it is not among them.
    private func offset(of value: Value, order: Int, in values: [Value]) -> Int? {
        let offset = insertionOffset(of: value, order: order, in: values)
        return offset < values.count && values[offset].id == value.id ? offset : nil
    }
}
