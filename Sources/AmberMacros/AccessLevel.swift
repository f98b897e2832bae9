import SwiftSyntax

/// Swift's access levels, ordered from the most restrictive.
enum AccessLevel: Int, Comparable {
    case `private`, `fileprivate`, `internal`, `package`, `public`

    static func < (lhs: AccessLevel, rhs: AccessLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The modifier for a generated declaration, followed by a space; empty for internal.
    var modifier: String {
        switch self {
        case .private: "private "
        case .fileprivate: "fileprivate "
        case .internal: ""
        case .package: "package "
        case .public: "public "
        }
    }

    /// The level of a member that must stay as visible as its private or fileprivate type:
    /// no modifier, which Swift caps at the type's own access.
    var visibleMemberLevel: AccessLevel { self < .internal ? .internal : self }

    /// A level that a nested struct's member can have and still be seen by its enclosing type.
    var visibleFromEnclosingType: AccessLevel { self == .private ? .fileprivate : self }

    init?(_ modifier: DeclModifierSyntax) {
        // `private(set)` and the like say nothing about reading.
        guard modifier.detail == nil else { return nil }
        switch modifier.name.tokenKind {
        case .keyword(.public), .keyword(.open): self = .public
        case .keyword(.package): self = .package
        case .keyword(.internal): self = .internal
        case .keyword(.fileprivate): self = .fileprivate
        case .keyword(.private): self = .private
        default: return nil
        }
    }
}

extension WithModifiersSyntax {
    /// The declared access level; internal without a modifier.
    var accessLevel: AccessLevel {
        modifiers.lazy.compactMap(AccessLevel.init).first ?? .internal
    }
}
