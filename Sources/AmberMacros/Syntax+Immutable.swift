import SwiftSyntax

extension VariableDeclSyntax {
    var isStatic: Bool {
        modifiers.contains { $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class) }
    }
}

extension AttributeListSyntax {
    /// Whether an `@available` attribute deprecates the declaration.
    var isDeprecated: Bool {
        contains { element in
            guard let attribute = element.as(AttributeSyntax.self),
                attribute.attributeName.lastNameComponent == "available"
            else { return false }
            return attribute.arguments?.tokens(viewMode: .sourceAccurate).contains { $0.text == "deprecated" } ?? false
        }
    }

    func attribute(named name: String) -> AttributeSyntax? {
        lazy.compactMap { $0.as(AttributeSyntax.self) }
            .first { $0.attributeName.lastNameComponent == name }
    }

    /// The first attribute that can only be a property wrapper: not a compiler attribute, not `@Merge`.
    var propertyWrapperName: String? {
        let known: Set = [
            "available", "Merge", "ImmutableIgnored", "ImmutableDefault", "MainActor", "preconcurrency", "objc",
            "nonobjc", "inlinable",
            "usableFromInline",
        ]
        return lazy.compactMap { $0.as(AttributeSyntax.self)?.attributeName.lastNameComponent }
            .first { !known.contains($0) }
    }
}

extension AttributeSyntax {
    /// The value of `mergeable:` in `@Immutable(mergeable: true)`, when given as a literal.
    var mergeableArgument: Bool? {
        guard let arguments = arguments?.as(LabeledExprListSyntax.self),
            let argument = arguments.first(where: { $0.label?.text == "mergeable" }),
            let literal = argument.expression.as(BooleanLiteralExprSyntax.self)
        else { return nil }
        return literal.literal.tokenKind == .keyword(.true)
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
                $0.accessorSpecifier.tokenKind == .keyword(.willSet)
                    || $0.accessorSpecifier.tokenKind == .keyword(.didSet)
            }
        }
    }
}

extension MemberBlockItemListSyntax {
    /// The initializer that takes exactly these argument labels, in this order.
    func initializer(labels: [String]) -> InitializerDeclSyntax? {
        lazy.compactMap { $0.decl.as(InitializerDeclSyntax.self) }.first { initializer in
            let parameters = initializer.signature.parameterClause.parameters
            return parameters.map { $0.firstName.text.filter { $0 != "`" } } == labels
        }
    }

    /// The names of the types and typealiases declared in the struct.
    var nestedTypeNames: Set<String> {
        Set(compactMap { $0.decl.declaredTypeName })
    }

    /// The `private` types and typealiases declared in the struct, with their `private` modifier.
    var privateNestedTypes: [(name: String, modifier: DeclModifierSyntax)] {
        compactMap { member in
            guard let name = member.decl.declaredTypeName,
                let modifiers = member.decl.asProtocol(WithModifiersSyntax.self)?.modifiers,
                let modifier = modifiers.first(where: { AccessLevel($0) == .private })
            else { return nil }
            return (name, modifier)
        }
    }

    /// Names of typealiases in the struct that stand for function types.
    var functionTypeAliases: Set<String> {
        Set(
            compactMap { member -> String? in
                guard let alias = member.decl.as(TypeAliasDeclSyntax.self),
                    alias.initializer.value.isFunction(aliases: [])
                else { return nil }
                return alias.name.text
            })
    }

    /// Whether `==`/`hash(into:)` and `init(from:)`/`encode(to:)` are written by hand: then the
    /// model's conformance may skip fields that the mirrors' synthesized one could not.
    var handWrittenConformanceMembers: (equality: Bool, coding: Bool) {
        var equality = false
        var coding = false
        for member in self {
            if let function = member.decl.as(FunctionDeclSyntax.self) {
                let name = function.name.text
                if name == "==" || name == "hash" { equality = true }
                if name == "encode" { coding = true }
            }
            if let initializer = member.decl.as(InitializerDeclSyntax.self),
                initializer.signature.parameterClause.parameters.first?.firstName.text == "from"
            {
                coding = true
            }
        }
        return (equality, coding)
    }

    /// The struct's `CodingKeys` enum with only the cases that name fields, and whether it names them all.
    func codingKeys(for fields: [ModelDescription.Field]) -> (declaration: DeclSyntax, coversEveryField: Bool)? {
        guard
            let keys = lazy.compactMap({ $0.decl.as(EnumDeclSyntax.self) }).first(where: {
                $0.name.text == "CodingKeys"
            })
        else { return nil }
        let fieldNames = Set(fields.map(\.name))
        let cases = keys.memberBlock.members
            .compactMap { $0.decl.as(EnumCaseDeclSyntax.self) }
            .flatMap(\.elements)
            .filter { fieldNames.contains($0.name.text.filter { $0 != "`" }) }
        let covered = Set(cases.map { $0.name.text.filter { $0 != "`" } })
        let inheritance = keys.inheritanceClause?.trimmedDescription ?? ": CodingKey"
        let body = cases.map { "case \($0.with(\.trailingComma, nil).trimmedDescription)" }.joined(separator: "\n")
        let declaration: DeclSyntax = "enum CodingKeys\(raw: inheritance) {\n\(raw: body)\n}"
        return (declaration, covered == fieldNames)
    }
}

extension DeclSyntax {
    /// The name of a struct, class, enum, actor or typealias declaration.
    var declaredTypeName: String? {
        if let decl = self.as(StructDeclSyntax.self) { return decl.name.text }
        if let decl = self.as(ClassDeclSyntax.self) { return decl.name.text }
        if let decl = self.as(EnumDeclSyntax.self) { return decl.name.text }
        if let decl = self.as(ActorDeclSyntax.self) { return decl.name.text }
        if let decl = self.as(TypeAliasDeclSyntax.self) { return decl.name.text }
        return nil
    }
}

extension ExprSyntax {
    /// The type of a literal that needs no context: `Int` for `0`, `String` for `"a"`.
    var literalTypeName: String? {
        if self.is(IntegerLiteralExprSyntax.self) { return "Int" }
        if self.is(FloatLiteralExprSyntax.self) { return "Double" }
        if self.is(StringLiteralExprSyntax.self) { return "String" }
        if self.is(BooleanLiteralExprSyntax.self) { return "Bool" }
        if let prefix = self.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" {
            return prefix.expression.literalTypeName
        }
        return nil
    }
}

/// Types of the standard library and Foundation that fields often have: never function types.
private let knownValueTypes: Set<String> = [
    "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Double", "Float",
    "Float16", "CGFloat", "Bool", "String", "Substring", "Character", "UUID", "Date", "URL", "Data", "Decimal",
    "TimeInterval", "Locale", "TimeZone", "Calendar", "DateComponents", "AttributedString", "Duration",
    "Void", "Never", "Any", "AnyHashable", "Self",
]

extension TypeSyntax {
    /// The type as written, without attributes such as `@escaping` or `@Sendable`.
    var withoutAttributes: String {
        if let attributed = self.as(AttributedTypeSyntax.self) { return attributed.baseType.withoutAttributes }
        return trimmedDescription
    }

    /// Whether the type is a plain name that could be a function typealias declared outside the
    /// struct: not one of `known`, not a type of the standard library or Foundation.
    func mayBeFunctionAlias(known: Set<String>) -> Bool {
        if let identifier = self.as(IdentifierTypeSyntax.self) {
            return identifier.genericArgumentClause == nil && !known.contains(identifier.name.text)
                && !knownValueTypes.contains(identifier.name.text)
        }
        if let member = self.as(MemberTypeSyntax.self) {
            return member.genericArgumentClause == nil && member.baseType.trimmedDescription != "Swift"
                && member.baseType.trimmedDescription != "Foundation"
        }
        return false
    }

    /// Whether a type named `name` is named unqualified anywhere in this type, which a member
    /// of the model with that name would then capture.
    func namesUnqualified(_ name: String) -> Bool {
        final class Finder: SyntaxVisitor {
            let name: String
            var found = false
            init(name: String) {
                self.name = name
                super.init(viewMode: .sourceAccurate)
            }
            override func visit(_ node: IdentifierTypeSyntax) -> SyntaxVisitorContinueKind {
                if node.name.text == name { found = true }
                return .visitChildren
            }
        }
        let finder = Finder(name: name)
        finder.walk(self)
        return finder.found
    }

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

    /// The type without redundant parentheses around it: `() -> Void` for `(() -> Void)`.
    var unparenthesized: TypeSyntax {
        if let tuple = self.as(TupleTypeSyntax.self), tuple.elements.count == 1,
            let only = tuple.elements.first, only.firstName == nil, only.ellipsis == nil
        {
            return only.type.unparenthesized
        }
        return self
    }

    /// Whether the type is a function type, written directly, in parentheses, with attributes,
    /// or as one of `aliases`.
    func isFunction(aliases: Set<String>) -> Bool {
        let type = unparenthesized
        if let attributed = type.as(AttributedTypeSyntax.self) {
            return attributed.baseType.isFunction(aliases: aliases)
        }
        if let identifier = type.as(IdentifierTypeSyntax.self) {
            return identifier.genericArgumentClause == nil && aliases.contains(identifier.name.text)
        }
        return type.is(FunctionTypeSyntax.self)
    }

    /// `T?` for this type `T`, in parentheses where `?` would bind to part of it.
    var optionalSpelling: String {
        let simple =
            self.is(IdentifierTypeSyntax.self) || self.is(MemberTypeSyntax.self)
            || self.is(ArrayTypeSyntax.self) || self.is(DictionaryTypeSyntax.self)
            || self.is(TupleTypeSyntax.self) || self.is(OptionalTypeSyntax.self)
        return simple ? "\(trimmedDescription)?" : "(\(trimmedDescription))?"
    }

    /// The last component of a type name: `Hashable` for `Swift.Hashable`.
    var lastNameComponent: String {
        if let identifier = self.as(IdentifierTypeSyntax.self) { return identifier.name.text }
        if let member = self.as(MemberTypeSyntax.self) { return member.name.text }
        return trimmedDescription
    }

    /// The protocols an inheritance clause entry names: each member of a composition `A & B`.
    var protocolNames: [String] {
        if let composition = self.as(CompositionTypeSyntax.self) {
            return composition.elements.flatMap(\.type.protocolNames)
        }
        if let attributed = self.as(AttributedTypeSyntax.self) { return attributed.baseType.protocolNames }
        return [lastNameComponent]
    }

    /// This type with `Self` and the model's own bare name replaced by `alias`, for use inside a nested struct.
    func spellingModel(named typeName: String, as alias: String) -> TypeSyntax {
        ModelNameRewriter(typeName: typeName, alias: alias).rewrite(self).cast(TypeSyntax.self)
    }
}

/// Replaces `Self` and `Model` (without generic arguments, so meaning the model itself) by an alias.
private final class ModelNameRewriter: SyntaxRewriter {
    let typeName: String
    let alias: String

    init(typeName: String, alias: String) {
        self.typeName = typeName
        self.alias = alias
        super.init(viewMode: .sourceAccurate)
    }

    override func visit(_ node: IdentifierTypeSyntax) -> TypeSyntax {
        guard node.genericArgumentClause == nil,
            node.name.tokenKind == .keyword(.Self) || node.name.text == typeName
        else { return super.visit(node) }
        return TypeSyntax(
            node.with(
                \.name,
                .identifier(alias, leadingTrivia: node.name.leadingTrivia, trailingTrivia: node.name.trailingTrivia)))
    }

    override func visit(_ node: MemberTypeSyntax) -> TypeSyntax {
        // Only the base of `A.B` can name the model; `B` is one of its members.
        TypeSyntax(node.with(\.baseType, rewrite(node.baseType).cast(TypeSyntax.self)))
    }
}
