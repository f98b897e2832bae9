import SwiftSyntax
import SwiftSyntaxMacros

/// `@Merge(...)`, `@ImmutableIgnored` and `@ImmutableDefault(...)`: markers on a property that `@Immutable` reads; they add nothing themselves.
public struct FieldMarkerMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}
