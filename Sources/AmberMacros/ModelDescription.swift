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
        /// Whether the type is a plain name that may stand for a function type declared elsewhere:
        /// a parameter of that type would not escape, and `@escaping` is invalid on other types, so
        /// parameters take it as `@autoclosure () -> T`, which fits both.
        let mayBeFunctionAlias: Bool
        /// The expression of `@ImmutableDefault(...)`: the default of the generated `init`'s parameter.
        let defaultValue: String?
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
        var parameterType: String { parameterType(of: type) }

        /// The type as a parameter of `Draft`'s initializer.
        var mirroredParameterType: String { parameterType(of: mirroredType) }

        private func parameterType(of type: TypeSyntax) -> String {
            if isFunction { return "@escaping \(type.unparenthesized.trimmedDescription)" }
            if mayBeFunctionAlias { return "@autoclosure () -> \(type.trimmedDescription)" }
            return type.trimmedDescription
        }

        /// The value of the parameter named as the field, in the body of the member that takes it.
        var argument: String { mayBeFunctionAlias ? "\(identifier)()" : identifier }

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
    /// that `Partial` declares too: those the struct declares and that it can synthesize, and
    /// the coding ones through the model where it cannot.
    let mirroredConformances: [String]
    /// The protocols `Draft` declares: every one of those the struct declares.
    let draftConformances: [String]
    /// Whether `Draft` compares and hashes through the model: the model writes `==` or
    /// `hash(into:)` itself, or a field cannot be compared.
    let draftEqualityThroughModel: Bool
    /// Whether `Draft` encodes and decodes through the model: the model writes `init(from:)` or
    /// `encode(to:)` itself, or a field cannot be coded, or `CodingKeys` leaves a field out.
    let draftCodingThroughModel: Bool
    /// Whether `Partial` encodes (once complete) and decodes through the model: it cannot synthesize them.
    let partialCodingThroughModel: Bool
    /// The names of the nested mirrors: `Draft` and `Partial`, unless a field's type names an
    /// app type so (then `ImmutableDraft`, `ImmutablePartial`, reached as `Model.Draft` through
    /// `ImmutableModel`), which a nested `Draft` would capture.
    let draftName: String
    let partialName: String
    /// Properties left out by `@ImmutableIgnored`: the fields are then stored through the
    /// struct's own initializer with the memberwise labels, which sets them.
    let hasIgnoredProperties: Bool
    let isMergeable: Bool
    /// Whether the struct already declares an initializer with the memberwise labels.
    let hasMemberwiseInit: Bool
    /// A field is named `draft`: the user's property keeps the name, and `draft` comes from `ImmutableModel`.
    let hasDraftField: Bool
    /// Whether the model will conform to `ImmutableModel`: not a type that no extension can name
    /// (nested in a private type, or private itself) and that does not declare it.
    var conformsToImmutableModel = true
    /// Some field is deprecated: only deprecated witnesses of `ImmutableModel`'s storage
    /// requirements touch the fields, and the rest reaches them through the protocol.
    /// Without the conformance, the fields are named directly, and their uses warn.
    var usesStorageWitnesses: Bool { conformsToImmutableModel && fields.contains(where: \.isDeprecated) }
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
        let members = structDecl.memberBlock.members
        let genericParameters = Set(structDecl.genericParameterClause?.parameters.map(\.name.text) ?? [])
        var reader = FieldReader(
            typeName: typeName, members: members,
            knownTypes: members.nestedTypeNames.union(genericParameters), diagnose: diagnose)
        reader.read(members, insideIfConfig: false)
        let declared = Set(structDecl.inheritanceClause?.inheritedTypes.flatMap(\.type.protocolNames) ?? [])
        let declaresEquatable = ["Equatable", "Hashable", "Comparable"].contains(where: declared.contains)
        let isMergeable = attribute.mergeableArgument ?? declaresEquatable
        reader.checkMergeStrategies(modelIsMergeable: isMergeable)
        let memberwiseInit = members.initializer(labels: reader.fields.map(\.name))
        reader.checkIgnoredProperties(memberwiseInit: memberwiseInit)
        reader.checkPrivateTypes(members.privateNestedTypes)
        guard reader.isValid else { return nil }
        let fields = reader.fields

        let handWritten = members.handWrittenConformanceMembers
        let hasFunctionField = fields.contains(where: \.isFunction)
        let codingKeys = members.codingKeys(for: fields)
        var mirrored: [String] = []
        var draft: [String] = []
        if declared.contains("Sendable") {
            // The user vouched for the fields; the mirrors hold the same fields.
            let unchecked =
                structDecl.inheritanceClause?.inheritedTypes
                .contains { $0.type.trimmedDescription.hasPrefix("@unchecked") } ?? false
            mirrored.append(unchecked ? "@unchecked Sendable" : "Sendable")
            draft.append(unchecked ? "@unchecked Sendable" : "Sendable")
        }
        let equality =
            declared.contains("Hashable")
            ? "Hashable" : declared.contains("Equatable") || declared.contains("Comparable") ? "Equatable" : nil
        if let equality {
            draft.append(equality)
            if !hasFunctionField && !handWritten.equality { mirrored.append(equality) }
        }
        // `Decodable` needs every field among the coding keys; a model that leaves one out decodes it some other way.
        let decodable = codingKeys?.coversEveryField ?? true
        let synthesizesCoding = !hasFunctionField && !handWritten.coding
        let coding =
            declared.contains("Codable")
            ? ["Codable"] : ["Encodable", "Decodable"].filter(declared.contains)
        draft += coding
        if !synthesizesCoding {
            // Through the model, as `Draft`.
            mirrored += coding
        } else {
            if declared.contains("Codable") {
                mirrored.append(decodable ? "Codable" : "Encodable")
            } else {
                if declared.contains("Encodable") { mirrored.append("Encodable") }
                if declared.contains("Decodable") && decodable { mirrored.append("Decodable") }
            }
        }
        let mentions = { (name: String) in fields.contains { $0.type.namesUnqualified(name) } }
        return ModelDescription(
            typeName: typeName,
            typeAccess: structDecl.accessLevel.visibleMemberLevel,
            fields: fields,
            mirroredConformances: mirrored,
            draftConformances: draft,
            draftEqualityThroughModel: equality != nil && (hasFunctionField || handWritten.equality),
            draftCodingThroughModel: !coding.isEmpty && (!synthesizesCoding || !decodable),
            partialCodingThroughModel: !coding.isEmpty && !synthesizesCoding,
            draftName: mentions("Draft") ? "ImmutableDraft" : "Draft",
            partialName: mentions("Partial") ? "ImmutablePartial" : "Partial",
            hasIgnoredProperties: !reader.ignoredProperties.isEmpty,
            isMergeable: isMergeable,
            hasMemberwiseInit: memberwiseInit != nil,
            hasDraftField: fields.contains { $0.name == "draft" },
            codingKeys: codingKeys?.declaration
        )
    }
}
