import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Immutable`: the members and conformances of an immutable model.
///
/// Everything generated is `nonisolated`, so that a model in a module built with
/// `defaultIsolation(MainActor.self)`, or an explicitly `@MainActor` one, still merges and
/// edits off the main actor and satisfies `Sendable` generic requirements.
public struct ImmutableMacro: MemberMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard var model = ModelDescription.read(declaration, attribute: node, diagnose: context.diagnose) else {
            return []
        }
        if let structDecl = declaration.as(StructDeclSyntax.self), structDecl.accessLevel == .private,
            !context.lexicalContext.isEmpty
        {
            let declared = structDecl.inheritanceClause?.inheritedTypes.flatMap(\.type.protocolNames) ?? []
            model.conformsToImmutableModel = declared.contains("ImmutableModel")
        }
        return model.members
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        // The member role reports the problems; reporting them twice helps nobody.
        guard let model = ModelDescription.read(declaration, attribute: node, diagnose: nil) else { return [] }
        // A private nested type cannot be named at file scope, where extensions go. Its members are
        // generated all the same, and satisfy the conformances that the type declares itself.
        if declaration.as(StructDeclSyntax.self)?.accessLevel == .private && type.is(MemberTypeSyntax.self) {
            return []
        }
        let requested = Set(protocols.map(\.lastNameComponent))
        var extensions: [ExtensionDeclSyntax] = []
        if requested.contains("ImmutableModel") {
            extensions.append(try ExtensionDeclSyntax("nonisolated extension \(type.trimmed): Amber.ImmutableModel {}"))
        }
        if requested.contains("Mergeable"), model.isMergeable {
            extensions.append(try ExtensionDeclSyntax("nonisolated extension \(type.trimmed): Amber.Mergeable {}"))
        }
        return extensions
    }
}
