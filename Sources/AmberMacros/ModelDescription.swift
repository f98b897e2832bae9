import SwiftDiagnostics
import SwiftSyntax

/// What `@Immutable` needs to know about the struct it is attached to.
struct ModelDescription {
    /// One settable stored property.
    struct Field {
        /// The name as written in source, backticks included, for use in code.
        let identifier: String
        /// The name without backticks, for argument labels, `fieldNames` and messages.
        let name: String
        let type: TypeSyntax
        let isOptional: Bool

        /// The type of this field in `Partial`: optional once, whatever the property's type.
        var partialType: String {
            isOptional ? type.trimmedDescription : optionalType
        }

        /// The type as a parameter of an initializer or `with`: closures stored in the value escape.
        var parameterType: String {
            let base = type.as(AttributedTypeSyntax.self)?.baseType ?? type
            return base.is(FunctionTypeSyntax.self) ? "@escaping \(type.trimmedDescription)" : type.trimmedDescription
        }

        /// `T?` for the field's type `T`, in parentheses where `?` would bind to part of it.
        var optionalType: String {
            let simple = type.is(IdentifierTypeSyntax.self) || type.is(MemberTypeSyntax.self)
                || type.is(ArrayTypeSyntax.self) || type.is(DictionaryTypeSyntax.self)
                || type.is(TupleTypeSyntax.self) || type.is(OptionalTypeSyntax.self)
            return simple ? "\(type.trimmedDescription)?" : "(\(type.trimmedDescription))?"
        }
    }

    let typeName: String
    /// The access modifier for generated members, followed by a space, or empty for internal.
    let access: String
    let fields: [Field]
    /// Protocols among Sendable, Equatable, Hashable, Codable, Encodable and Decodable
    /// that the struct declares, which `Draft` and `Partial` declare too.
    let mirroredConformances: [String]
    let declaresEquatable: Bool

    /// Reads a struct declaration, reporting what prevents the expansion.
    ///
    /// - Returns: `nil` when the declaration is not a struct or has invalid members;
    ///   the problems are then reported through `diagnose` when it is given.
    static func read(
        _ declaration: some DeclGroupSyntax,
        attribute: AttributeSyntax,
        diagnose: ((Diagnostic) -> Void)?
    ) -> ModelDescription? {
        guard let structDecl = declaration.as(StructDeclSyntax.self) else {
            diagnose?(Diagnostic(node: Syntax(attribute), message: ImmutableDiagnostic.notAStruct))
            return nil
        }
        var fields: [Field] = []
        var isValid = true
        for member in structDecl.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self), !variable.isStatic else { continue }
            let bindings = Array(variable.bindings)
            for (index, binding) in bindings.enumerated() where binding.isStored {
                guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else { continue }
                let identifier = pattern.identifier.trimmed.text
                let name = identifier.filter { $0 != "`" }
                if variable.bindingSpecifier.tokenKind == .keyword(.var) {
                    isValid = false
                    // `let` cannot have `willSet`/`didSet`, so there is no obvious edit for an observed `var`.
                    let fixIts = binding.accessorBlock != nil ? [] : [FixIt(
                        message: ImmutableFixIt.replaceVarWithLet,
                        changes: [.replace(
                            oldNode: Syntax(variable.bindingSpecifier),
                            newNode: Syntax(variable.bindingSpecifier.with(\.tokenKind, .keyword(.let)))
                        )]
                    )]
                    diagnose?(Diagnostic(
                        node: Syntax(pattern),
                        message: ImmutableDiagnostic.mutableStoredProperty(name: name),
                        fixIts: fixIts
                    ))
                    continue
                }
                // A property with an initial value cannot be set, so it is not a field.
                if binding.initializer != nil { continue }
                // `let a, b: Int` gives `a` the type written after `b`.
                let type = binding.typeAnnotation?.type
                    ?? bindings[index...].lazy.compactMap { $0.typeAnnotation?.type }.first
                guard let type else {
                    isValid = false
                    diagnose?(Diagnostic(node: Syntax(pattern), message: ImmutableDiagnostic.missingTypeAnnotation(name: name)))
                    continue
                }
                fields.append(Field(identifier: identifier, name: name, type: type.trimmed, isOptional: type.isOptional))
            }
        }
        guard isValid else { return nil }

        let declared = Set(structDecl.inheritanceClause?.inheritedTypes.map(\.type.lastNameComponent) ?? [])
        let mirrored = ["Sendable", "Equatable", "Hashable", "Codable", "Encodable", "Decodable"]
            .filter(declared.contains)
        return ModelDescription(
            typeName: structDecl.name.trimmed.text,
            access: structDecl.generatedAccessModifier,
            fields: fields,
            mirroredConformances: mirrored,
            declaresEquatable: declared.contains("Equatable") || declared.contains("Hashable")
        )
    }
}

extension VariableDeclSyntax {
    var isStatic: Bool {
        modifiers.contains { $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class) }
    }
}

extension PatternBindingSyntax {
    /// Whether the binding stores a value: no accessors, or only `willSet`/`didSet` observers.
    var isStored: Bool {
        switch accessorBlock?.accessors {
        case nil:
            return true
        case .getter:
            return false
        case .accessors(let accessors):
            return accessors.allSatisfy {
                $0.accessorSpecifier.tokenKind == .keyword(.willSet) || $0.accessorSpecifier.tokenKind == .keyword(.didSet)
            }
        }
    }
}

extension TypeSyntax {
    /// Whether the type is spelled as an optional: `T?`, `T!`, `Optional<T>` or `Swift.Optional<T>`.
    var isOptional: Bool {
        if self.is(OptionalTypeSyntax.self) || self.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return true }
        if let attributed = self.as(AttributedTypeSyntax.self) { return attributed.baseType.isOptional }
        if let identifier = self.as(IdentifierTypeSyntax.self) {
            return identifier.name.text == "Optional" && identifier.genericArgumentClause != nil
        }
        if let member = self.as(MemberTypeSyntax.self) {
            return member.baseType.trimmedDescription == "Swift" && member.name.text == "Optional"
                && member.genericArgumentClause != nil
        }
        return false
    }

    /// The last component of a type name: `Hashable` for `Swift.Hashable`.
    var lastNameComponent: String {
        if let identifier = self.as(IdentifierTypeSyntax.self) { return identifier.name.text }
        if let member = self.as(MemberTypeSyntax.self) { return member.name.text }
        return trimmedDescription
    }
}

extension StructDeclSyntax {
    /// The struct's access level as a modifier for generated members; `private` becomes `fileprivate`
    /// so that the members stay visible to the rest of the file.
    var generatedAccessModifier: String {
        for modifier in modifiers {
            switch modifier.name.tokenKind {
            case .keyword(.public), .keyword(.open): return "public "
            case .keyword(.package): return "package "
            case .keyword(.fileprivate), .keyword(.private): return "fileprivate "
            case .keyword(.internal): return ""
            default: continue
            }
        }
        return ""
    }
}
