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
        if let structDecl = declaration.as(StructDeclSyntax.self),
            !isNameableAtFileScope(structDecl, lexicalContext: context.lexicalContext)
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
        // A private nested type, or one nested in a private type, cannot be named at file scope,
        // where extensions go. Its members are generated all the same, and satisfy the
        // conformances that the type declares itself.
        if let structDecl = declaration.as(StructDeclSyntax.self),
            !isNameableAtFileScope(structDecl, lexicalContext: context.lexicalContext)
        {
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

    /// Whether an extension at file scope can name the struct: no type on the way to it, itself
    /// included, is `private`, except the outermost, which a `private` at file scope leaves visible in the file.
    private static func isNameableAtFileScope(_ structDecl: StructDeclSyntax, lexicalContext: [Syntax]) -> Bool {
        // Innermost first.
        let enclosing = lexicalContext.compactMap { context -> AccessLevel? in
            if let decl = context.as(StructDeclSyntax.self) { return decl.accessLevel }
            if let decl = context.as(ClassDeclSyntax.self) { return decl.accessLevel }
            if let decl = context.as(EnumDeclSyntax.self) { return decl.accessLevel }
            if let decl = context.as(ActorDeclSyntax.self) { return decl.accessLevel }
            if context.is(ExtensionDeclSyntax.self) { return .internal }
            return nil
        }
        let path = [structDecl.accessLevel] + enclosing
        return !path.dropLast().contains(.private)
    }
}
