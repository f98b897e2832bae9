import Amber

/// The seed's model, used throughout the tests.
@Immutable
struct Person: Identifiable, Hashable, Codable, Sendable {
    let id: String
    let name: String
    let age: Int
    let job: String?
    var isAdult: Bool { age >= 18 }
    static let species = "human"
}
