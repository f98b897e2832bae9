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
        /// The type as written.
        let type: TypeSyntax
        /// The type for use inside `Draft` and `Partial`, where `Self` and the model's bare name
        /// would mean the nested struct: both are spelled through ``ModelDescription/selfAlias``.
        let mirroredType: TypeSyntax
        let isOptional: Bool
        /// Whether the type is spelled as a function type, so `@escaping` in parameters and no
        /// synthesized `Equatable`, `Hashable` or `Codable` for the mirrors.
        let isFunction: Bool
        /// The property's own access level; internal when it has no modifier.
        let access: AccessLevel
        /// How `merge` settles this field, from a `@Merge(...)` attribute.
        let mergeStrategy: MergeStrategy
        /// Whether the property is `@available(..., deprecated...)`: generated code must not name it
        /// outside a deprecated declaration, or every use would warn.
        let isDeprecated: Bool

        /// The type of this field in `Partial`: optional once, whatever the property's type.
        var partialType: String {
            isOptional ? mirroredType.trimmedDescription : mirroredType.optionalSpelling
        }

        /// The type as a parameter of an initializer or `with`: closures stored in the value escape.
        var parameterType: String {
            isFunction ? "@escaping \(type.unparenthesized.trimmedDescription)" : type.trimmedDescription
        }

        /// `T?` for the field's type `T`, in parentheses where `?` would bind to part of it.
        var optionalType: String { type.optionalSpelling }
    }

    /// How the generated `merge` settles one field.
    enum MergeStrategy: Equatable {
        /// Changed on both sides to different values: `mine`, listed as a conflict.
        case standard
        /// A three-way set merge of a collection.
        case union
        /// `base` plus both sides' deltas.
        case counter
        case mine
        case theirs
        /// The side whose `field` is greater; `mine` on a tie.
        case latest(field: String)
    }

    /// The name of the alias for the model that `Draft` and `Partial` use, where `Self` means themselves.
    static let selfAlias = "ImmutableSelf"

    let typeName: String
    /// The type's access level as seen by generated members: private and fileprivate types give
    /// members no modifier, which keeps them as visible as the type itself.
    let typeAccess: AccessLevel
    let fields: [Field]
    /// Protocols among Sendable, Equatable, Hashable, Codable, Encodable and Decodable
    /// that `Draft` and `Partial` declare too: those the struct declares and that the mirrors can synthesize.
    let mirroredConformances: [String]
    let isMergeable: Bool
    /// Whether the struct already declares an initializer with the memberwise labels.
    let hasMemberwiseInit: Bool
    /// A field is named `draft`: the user's property keeps the name, and `draft` comes from `ImmutableModel`.
    let hasDraftField: Bool
    /// Some field is deprecated: only deprecated witnesses of `ImmutableModel`'s storage requirements touch the fields.
    var hasDeprecatedField: Bool { fields.contains(where: \.isDeprecated) }
    /// The struct's `CodingKeys` restricted to the fields, for `Draft` and `Partial`.
    let codingKeys: DeclSyntax?

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
        let typeName = structDecl.name.trimmed.text
        var reader = FieldReader(typeName: typeName, members: structDecl.memberBlock.members, diagnose: diagnose)
        reader.read(structDecl.memberBlock.members, insideIfConfig: false)
        reader.checkMergeStrategies()
        let hasMemberwiseInit = structDecl.memberBlock.members.hasInitializer(labels: reader.fields.map(\.name))
        reader.checkIgnoredProperties(hasMemberwiseInit: hasMemberwiseInit)
        guard reader.isValid else { return nil }
        let fields = reader.fields

        let declared = Set(structDecl.inheritanceClause?.inheritedTypes.flatMap(\.type.protocolNames) ?? [])
        let handWritten = structDecl.memberBlock.members.handWrittenConformanceMembers
        let hasFunctionField = fields.contains(where: \.isFunction)
        let codingKeys = structDecl.memberBlock.members.codingKeys(for: fields)
        var mirrored: [String] = []
        if declared.contains("Sendable") { mirrored.append("Sendable") }
        if !hasFunctionField && !handWritten.equality {
            if declared.contains("Hashable") {
                mirrored.append("Hashable")
            } else if declared.contains("Equatable") || declared.contains("Comparable") {
                mirrored.append("Equatable")
            }
        }
        if !hasFunctionField && !handWritten.coding {
            // `Decodable` needs every field among the coding keys; a model that leaves one out decodes it some other way.
            let decodable = codingKeys?.coversEveryField ?? true
            if declared.contains("Codable") {
                mirrored.append(decodable ? "Codable" : "Encodable")
            } else {
                if declared.contains("Encodable") { mirrored.append("Encodable") }
                if declared.contains("Decodable") && decodable { mirrored.append("Decodable") }
            }
        }
        let declaresEquatable = ["Equatable", "Hashable", "Comparable"].contains(where: declared.contains)
        return ModelDescription(
            typeName: typeName,
            typeAccess: structDecl.accessLevel.visibleMemberLevel,
            fields: fields,
            mirroredConformances: mirrored,
            isMergeable: attribute.mergeableArgument ?? declaresEquatable,
            hasMemberwiseInit: hasMemberwiseInit,
            hasDraftField: fields.contains { $0.name == "draft" },
            codingKeys: codingKeys?.declaration
        )
    }
}

/// Walks a struct's members, `#if` blocks included, collecting fields and reporting what it cannot handle.
private struct FieldReader {
    let typeName: String
    let members: MemberBlockItemListSyntax
    let diagnose: ((Diagnostic) -> Void)?
    var fields: [ModelDescription.Field] = []
    var isValid = true
    /// The `.latest(by:)` strategies, checked once every field is known.
    var latestStrategies: [(field: String, node: Syntax)] = []
    /// Properties marked `@ImmutableIgnored` that something must still initialize.
    var ignoredProperties: [(name: String, attribute: AttributeSyntax)] = []

    init(typeName: String, members: MemberBlockItemListSyntax, diagnose: ((Diagnostic) -> Void)?) {
        self.typeName = typeName
        self.members = members
        self.diagnose = diagnose
    }

    mutating func fail(_ node: some SyntaxProtocol, _ message: ImmutableDiagnostic, fixIts: [FixIt] = []) {
        isValid = false
        diagnose?(Diagnostic(node: Syntax(node), message: message, fixIts: fixIts))
    }

    mutating func read(_ members: MemberBlockItemListSyntax, insideIfConfig: Bool) {
        for member in members {
            if let ifConfig = member.decl.as(IfConfigDeclSyntax.self) {
                for clause in ifConfig.clauses {
                    if case .decls(let nested) = clause.elements { read(nested, insideIfConfig: true) }
                }
                continue
            }
            guard let variable = member.decl.as(VariableDeclSyntax.self), !variable.isStatic else { continue }
            read(variable, insideIfConfig: insideIfConfig)
        }
    }

    private mutating func read(_ variable: VariableDeclSyntax, insideIfConfig: Bool) {
        let bindings = Array(variable.bindings)
        for (index, binding) in bindings.enumerated() where binding.isStored {
            let name = binding.pattern.trimmedDescription.filter { $0 != "`" }
            if variable.bindingSpecifier.tokenKind == .keyword(.var) {
                reportMutable(variable, binding: binding, name: name)
                continue
            }
            // A property with an initial value cannot be set, so it is not a field.
            if binding.initializer != nil { continue }
            if let ignored = variable.attributes.attribute(named: "ImmutableIgnored") {
                ignoredProperties.append((name, ignored))
                continue
            }
            guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else {
                fail(binding.pattern, .tuplePattern(pattern: binding.pattern.trimmedDescription))
                continue
            }
            if insideIfConfig {
                fail(pattern, .propertyInsideIfConfig(name: name))
                continue
            }
            if name == "self" || name == "Type" {
                fail(pattern, .reservedName(name: name))
                continue
            }
            // `let a, b: Int` gives `a` the type written after `b`.
            let annotation = binding.typeAnnotation?.type
                ?? bindings[index...].lazy.compactMap { $0.typeAnnotation?.type }.first
            guard let annotation else {
                fail(pattern, .missingTypeAnnotation(name: name))
                continue
            }
            let type = annotation.trimmed
            // Inside a model named `Draft` or `Partial`, its bare name means the generated nested struct.
            if ["Draft", "Partial"].contains(typeName) && type.mentions(typeName) {
                fail(annotation, .modelNamedLikeGeneratedType(name: typeName))
                continue
            }
            fields.append(ModelDescription.Field(
                identifier: pattern.identifier.trimmed.text,
                name: name,
                type: type,
                mirroredType: type.spellingModel(named: typeName, as: ModelDescription.selfAlias),
                isOptional: type.isOptional,
                isFunction: type.isFunction(aliases: members.functionTypeAliases),
                access: variable.accessLevel,
                mergeStrategy: mergeStrategy(of: variable),
                isDeprecated: variable.attributes.isDeprecated
            ))
        }
    }

    private mutating func reportMutable(_ variable: VariableDeclSyntax, binding: PatternBindingSyntax, name: String) {
        if variable.modifiers.contains(where: { $0.name.tokenKind == .keyword(.lazy) }) {
            fail(binding.pattern, .lazyProperty(name: name))
            return
        }
        if let wrapper = variable.attributes.propertyWrapperName {
            fail(binding.pattern, .propertyWrapper(name: name, wrapper: wrapper))
            return
        }
        // `let` cannot have `willSet`/`didSet`, so there is no obvious edit for an observed `var`.
        let fixIts = binding.accessorBlock != nil ? [] : [FixIt(
            message: ImmutableFixIt.replaceVarWithLet,
            changes: [.replace(
                oldNode: Syntax(variable.bindingSpecifier),
                newNode: Syntax(variable.bindingSpecifier.with(\.tokenKind, .keyword(.let)))
            )]
        )]
        fail(binding.pattern, .mutableStoredProperty(name: name), fixIts: fixIts)
    }

    private mutating func mergeStrategy(of variable: VariableDeclSyntax) -> ModelDescription.MergeStrategy {
        guard let attribute = variable.attributes.attribute(named: "Merge"),
              let argument = attribute.arguments?.as(LabeledExprListSyntax.self)?.first?.expression
        else { return .standard }
        if let member = argument.as(MemberAccessExprSyntax.self), member.base == nil {
            switch member.declName.baseName.text {
            case "union": return .union
            case "counter": return .counter
            case "mine": return .mine
            case "theirs": return .theirs
            default: break
            }
        }
        if let call = argument.as(FunctionCallExprSyntax.self),
           call.calledExpression.as(MemberAccessExprSyntax.self)?.declName.baseName.text == "latest",
           let field = call.arguments.first?.expression.as(StringLiteralExprSyntax.self)?.representedLiteralValue {
            latestStrategies.append((field, Syntax(call)))
            return .latest(field: field)
        }
        fail(argument, .unknownMergeStrategy(argument.trimmedDescription))
        return .standard
    }

    /// A property left out of the memberwise initializer must be set by an initializer the user wrote.
    mutating func checkIgnoredProperties(hasMemberwiseInit: Bool) {
        guard !hasMemberwiseInit else { return }
        let labels = fields.map { "\($0.name):" }.joined()
        for (name, attribute) in ignoredProperties {
            fail(attribute, .ignoredPropertyNotInitialized(name: name, initializer: "init(\(labels))"))
        }
    }

    /// `.latest(by:)` must name a field of the model.
    mutating func checkMergeStrategies() {
        let names = Set(fields.map(\.name))
        for (field, node) in latestStrategies where !names.contains(field) {
            fail(node, .unknownLatestField(name: field))
        }
    }
}

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
                  attribute.attributeName.lastNameComponent == "available" else { return false }
            return attribute.arguments?.tokens(viewMode: .sourceAccurate).contains { $0.text == "deprecated" } ?? false
        }
    }

    func attribute(named name: String) -> AttributeSyntax? {
        lazy.compactMap { $0.as(AttributeSyntax.self) }
            .first { $0.attributeName.lastNameComponent == name }
    }

    /// The first attribute that can only be a property wrapper: not a compiler attribute, not `@Merge`.
    var propertyWrapperName: String? {
        let known: Set = ["available", "Merge", "ImmutableIgnored", "MainActor", "preconcurrency", "objc", "nonobjc", "inlinable", "usableFromInline"]
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
                $0.accessorSpecifier.tokenKind == .keyword(.willSet) || $0.accessorSpecifier.tokenKind == .keyword(.didSet)
            }
        }
    }
}

extension MemberBlockItemListSyntax {
    /// Whether an initializer takes exactly these argument labels, in this order.
    func hasInitializer(labels: [String]) -> Bool {
        contains { member in
            guard let initializer = member.decl.as(InitializerDeclSyntax.self) else { return false }
            let parameters = initializer.signature.parameterClause.parameters
            return parameters.map { $0.firstName.text.filter { $0 != "`" } } == labels
        }
    }

    /// Names of typealiases in the struct that stand for function types.
    var functionTypeAliases: Set<String> {
        Set(compactMap { member -> String? in
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
               initializer.signature.parameterClause.parameters.first?.firstName.text == "from" {
                coding = true
            }
        }
        return (equality, coding)
    }

    /// The struct's `CodingKeys` enum with only the cases that name fields, and whether it names them all.
    func codingKeys(for fields: [ModelDescription.Field]) -> (declaration: DeclSyntax, coversEveryField: Bool)? {
        guard let keys = lazy.compactMap({ $0.decl.as(EnumDeclSyntax.self) }).first(where: { $0.name.text == "CodingKeys" })
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

    /// The type without redundant parentheses around it: `() -> Void` for `(() -> Void)`.
    var unparenthesized: TypeSyntax {
        if let tuple = self.as(TupleTypeSyntax.self), tuple.elements.count == 1,
           let only = tuple.elements.first, only.firstName == nil, only.ellipsis == nil {
            return only.type.unparenthesized
        }
        return self
    }

    /// Whether the type is a function type, written directly, in parentheses, with attributes,
    /// or as one of `aliases`.
    func isFunction(aliases: Set<String>) -> Bool {
        let type = unparenthesized
        if let attributed = type.as(AttributedTypeSyntax.self) { return attributed.baseType.isFunction(aliases: aliases) }
        if let identifier = type.as(IdentifierTypeSyntax.self) {
            return identifier.genericArgumentClause == nil && aliases.contains(identifier.name.text)
        }
        return type.is(FunctionTypeSyntax.self)
    }

    /// `T?` for this type `T`, in parentheses where `?` would bind to part of it.
    var optionalSpelling: String {
        let simple = self.is(IdentifierTypeSyntax.self) || self.is(MemberTypeSyntax.self)
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

    /// Whether the type names `name` unqualified, anywhere inside it.
    func mentions(_ name: String) -> Bool {
        tokens(viewMode: .sourceAccurate).contains { $0.text == name }
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
        return TypeSyntax(node.with(\.name, .identifier(alias, leadingTrivia: node.name.leadingTrivia, trailingTrivia: node.name.trailingTrivia)))
    }

    override func visit(_ node: MemberTypeSyntax) -> TypeSyntax {
        // Only the base of `A.B` can name the model; `B` is one of its members.
        TypeSyntax(node.with(\.baseType, rewrite(node.baseType).cast(TypeSyntax.self)))
    }
}
