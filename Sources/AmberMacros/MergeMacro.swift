import SwiftSyntax
import SwiftSyntaxMacros

/// `@Merge(...)`: a marker that `@Immutable` reads when it generates `merge`; it adds nothing itself.
public struct MergeMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}
