import Amber

/// The model every workload stores: a small record with a body of about 100 characters.
@Immutable
struct Item: Identifiable, Codable, Hashable, Sendable {
    let id: Int
    let title: String
    let body: String
    let count: Int
    let modified: Double
}

extension Item {
    /// The item of identity `id`, the same on every call.
    static func sample(_ id: Int) -> Item {
        Item(
            id: id,
            title: "Item \(id)",
            body: "The body of item \(id), long enough to look like a short note that someone typed on a phone.",
            count: id % 97,
            modified: 1_700_000_000 + Double(id) * 0.25
        )
    }

    static func samples(_ count: Int, from first: Int = 0) -> [Item] {
        (first..<(first + count)).map(sample)
    }
}

/// A seeded random number generator (SplitMix64), so every run builds the same inputs.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
