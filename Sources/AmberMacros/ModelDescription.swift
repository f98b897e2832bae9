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
    /// Whether the model will conform to `ImmutableModel`: not a private nested type that does
    /// not declare it, since no extension can name such a type.
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
        var reader = FieldReader(typeName: typeName, members: structDecl.memberBlock.members, diagnose: diagnose)
        reader.read(structDecl.memberBlock.members, insideIfConfig: false)
        let declared = Set(structDecl.inheritanceClause?.inheritedTypes.flatMap(\.type.protocolNames) ?? [])
        let declaresEquatable = ["Equatable", "Hashable", "Comparable"].contains(where: declared.contains)
        let isMergeable = attribute.mergeableArgument ?? declaresEquatable
        reader.checkMergeStrategies(modelIsMergeable: isMergeable)
        let hasMemberwiseInit = structDecl.memberBlock.members.hasInitializer(labels: reader.fields.map(\.name))
        reader.checkIgnoredProperties(hasMemberwiseInit: hasMemberwiseInit)
        guard reader.isValid else { return nil }
        let fields = reader.fields

        let handWritten = structDecl.memberBlock.members.handWrittenConformanceMembers
        let hasFunctionField = fields.contains(where: \.isFunction)
        let codingKeys = structDecl.memberBlock.members.codingKeys(for: fields)
        var mirrored: [String] = []
        if declared.contains("Sendable") {
            // The user vouched for the fields; the mirrors hold the same fields.
            let unchecked =
                structDecl.inheritanceClause?.inheritedTypes
                .contains { $0.type.trimmedDescription.hasPrefix("@unchecked") } ?? false
            mirrored.append(unchecked ? "@unchecked Sendable" : "Sendable")
        }
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
        return ModelDescription(
            typeName: typeName,
            typeAccess: structDecl.accessLevel.visibleMemberLevel,
            fields: fields,
            mirroredConformances: mirrored,
            isMergeable: isMergeable,
            hasMemberwiseInit: hasMemberwiseInit,
            hasDraftField: fields.contains { $0.name == "draft" },
            codingKeys: codingKeys?.declaration
        )
    }
}
