import SwiftSyntax
import SwiftSyntaxBuilder

/// The members `@Immutable` adds to a model.
extension ModelDescription {
    var members: [DeclSyntax] {
        var members: [DeclSyntax] = hasMemberwiseInit ? [] : [memberwiseInit]
        members.append(storingInit)
        members += fields.map(withMethod)
        members += [updateMethod, selfAliasDeclaration, draftStruct, draftInit, makeDraftMethod]
        // A field named `draft` keeps its name; generic code still reaches the draft through `ImmutableModel`.
        if !hasDraftField { members.append(draftProperty) }
        members += [updatingMethod, partialStruct]
        // Renamed, the builder is `ImmutableModel`'s `Partial` through this witness.
        if partialName != "Partial" { members.append(partialTypeProperty) }
        members.append(fieldNamesProperty)
        if isMergeable { members.append(mergeMethod) }
        if usesStorageWitnesses { members.append(deprecatedFieldsWitness) }
        return members
    }

    /// The access of a member that exposes `fields`: the most restrictive of the type's and theirs.
    private func access(exposing fields: some Sequence<Field>) -> String {
        fields.reduce(typeAccess) { min($0, $1.access) }.modifier
    }

    /// The access of a `Draft` or `Partial` property, which the model's members must still see.
    private func mirrorAccess(of field: Field) -> AccessLevel {
        min(typeAccess, field.access.visibleFromEnclosingType)
    }

    /// `name: name, age: age` — every field passed on as itself, or as `transform` makes it.
    private func arguments(_ value: (Field) -> String) -> String {
        fields.map { "\($0.name): \(value($0))" }.joined(separator: ", ")
    }

    /// The fields of `value` as a `Draft`: read through `ImmutableModel` where a field is deprecated.
    private func fields(of value: String) -> String {
        usesStorageWitnesses ? "Amber._immutableFields(of: \(value))" : "\(value).makeDraft()"
    }

    /// The model holding exactly the fields of the draft `fields`, through the generated storing
    /// initializer, never through one the app wrote (whose labels may match but whose meaning may not).
    private func model(from fields: String, named name: String = "Self") -> String {
        usesStorageWitnesses ? "Amber._immutableModel(fields: \(fields))" : "\(name)(_immutableFields: \(fields))"
    }

    private var memberwiseInit: DeclSyntax {
        let parameters =
            fields
            .map { field in
                let defaultValue = field.defaultValue ?? (field.isOptional ? "nil" : nil)
                return "\(field.name): \(field.parameterType)\(defaultValue.map { " = \($0)" } ?? "")"
            }
            .joined(separator: ", ")
        let assignments =
            usesStorageWitnesses
            ? "self = Amber._immutableModel(fields: \(draftName)(\(arguments { $0.argument })))"
            : fields.map { "self.\($0.identifier) = \($0.argument)" }.joined(separator: "\n")
        return """
            \(raw: access(exposing: fields))nonisolated init(\(raw: parameters)) {
            \(raw: assignments)
            }
            """
    }

    /// The one initializer every generated member builds values with.
    ///
    /// It stores each field as given; with `@ImmutableIgnored` properties, which only the app's
    /// initializer can compute, it goes through that initializer (checked to take the fields as declared).
    private var storingInit: DeclSyntax {
        let body =
            hasIgnoredProperties
            ? "self.init(\(arguments { "fields.\($0.identifier)" }))"
            : fields.map { "self.\($0.identifier) = fields.\($0.identifier)" }.joined(separator: "\n")
        let deprecation =
            usesStorageWitnesses
            ? "@available(*, deprecated, message: \"writes deprecated fields for @Immutable; use init(_:)\")\n" : ""
        return """
            /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
            \(raw: deprecation)\(raw: typeAccess.modifier)nonisolated init(_immutableFields fields: \(raw: draftName)) {
            \(raw: body)
            }
            """
    }

    private func withMethod(_ field: Field) -> DeclSyntax {
        """
        /// A copy with `\(raw: field.name)` replaced\(raw: field.isOptional ? "; `nil` clears it" : "").
        \(raw: access(exposing: [field]))nonisolated func with(\(raw: field.name): \(raw: field.parameterType)) -> Self {
        updating { $0.\(raw: field.identifier) = \(raw: field.argument) }
        }
        """
    }

    private var updateMethod: DeclSyntax {
        let required = fields.filter { !$0.isOptional }
        let parameters = required.map { "\($0.name): \($0.optionalType) = nil" }.joined(separator: ", ")
        let body: String
        if required.isEmpty {
            body = "self"
        } else {
            let assignments = required.map { "$0.\($0.identifier) = \($0.identifier) ?? $0.\($0.identifier)" }
            body = "updating {\n\(assignments.joined(separator: "\n"))\n}"
        }
        return """
            /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
            /// Use `with` to change or clear an optional field.
            \(raw: access(exposing: required))nonisolated func update(\(raw: parameters)) -> Self {
            \(raw: body)
            }
            """
    }

    private var selfAliasDeclaration: DeclSyntax {
        """
        /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
        \(raw: typeAccess.modifier)typealias \(raw: Self.selfAlias) = Self
        """
    }

    private func conformanceClause(_ conformances: [String]) -> String {
        conformances.isEmpty ? "" : ": " + conformances.joined(separator: ", ")
    }

    /// The `CodingKeys` of the model, so that its JSON decodes as its `Draft` and `Partial`.
    private var mirroredCodingKeys: String {
        codingKeys.map { "\n\n\($0.trimmedDescription)" } ?? ""
    }

    /// `Draft`'s `==`, `hash(into:)`, `encode(to:)` and `init(from:)` where it cannot synthesize
    /// them as the model does: through the model, so that a draft compares, hashes and codes as it.
    private var draftConformanceMembers: String {
        let access = typeAccess.modifier
        var members: [String] = []
        if draftEqualityThroughModel {
            members.append(
                """
                /// Compares as the model does.
                \(access)static func == (lhs: Self, rhs: Self) -> Bool {
                \(Self.selfAlias)(lhs) == \(Self.selfAlias)(rhs)
                }
                """)
            if draftConformances.contains("Hashable") {
                members.append(
                    """
                    /// Hashes as the model does.
                    \(access)func hash(into hasher: inout Hasher) {
                    \(Self.selfAlias)(self).hash(into: &hasher)
                    }
                    """)
            }
        }
        if draftCodingThroughModel {
            if draftConformances.contains("Codable") || draftConformances.contains("Encodable") {
                members.append(
                    """
                    /// Encodes as the model does.
                    \(access)func encode(to encoder: any Encoder) throws {
                    try \(Self.selfAlias)(self).encode(to: encoder)
                    }
                    """)
            }
            if draftConformances.contains("Codable") || draftConformances.contains("Decodable") {
                let read =
                    usesStorageWitnesses
                    ? "Amber._immutableFields(of: try \(Self.selfAlias)(from: decoder))"
                    : "try \(Self.selfAlias)(from: decoder).makeDraft()"
                members.append(
                    """
                    /// Decodes the model's encoding.
                    \(access)init(from decoder: any Decoder) throws {
                    self = \(read)
                    }
                    """)
            }
        }
        return members.map { "\n\n\($0)" }.joined()
    }

    private var draftStruct: DeclSyntax {
        let properties = fields.map {
            "\(mirrorAccess(of: $0).modifier)var \($0.identifier): \($0.mirroredType.trimmedDescription)"
        }
        .joined(separator: "\n")
        let parameters = fields.map { "\($0.name): \($0.mirroredParameterType)" }.joined(separator: ", ")
        let assignments = fields.map { "self.\($0.identifier) = \($0.argument)" }.joined(separator: "\n")
        let initAccess = fields.reduce(typeAccess) { min($0, mirrorAccess(of: $1)) }
        let codingKeys = draftCodingThroughModel ? "" : mirroredCodingKeys
        return """
            /// A mutable mirror of `\(raw: typeName)`, turned back into a value with `\(raw: typeName)(draft)`.
            \(raw: typeAccess.modifier)nonisolated struct \(raw: draftName)\(raw: conformanceClause(draftConformances)) {
            \(raw: properties)

            \(raw: initAccess.modifier)init(\(raw: parameters)) {
            \(raw: assignments)
            }\(raw: codingKeys)\(raw: draftConformanceMembers)
            }
            """
    }

    private var draftInit: DeclSyntax {
        """
        /// Creates a value from a finished draft.
        \(raw: typeAccess.modifier)nonisolated init(_ draft: \(raw: draftName)) {
        \(raw: usesStorageWitnesses ? "self = Amber._immutableModel(fields: draft)" : "self.init(_immutableFields: draft)")
        }
        """
    }

    private var makeDraftMethod: DeclSyntax {
        """
        /// A mutable copy of this value's fields\(raw: hasDraftField ? "; `draft` in generic code" : ", as `draft`").
        \(raw: typeAccess.modifier)nonisolated func makeDraft() -> \(raw: draftName) {
        \(raw: usesStorageWitnesses ? "Amber._immutableFields(of: self)" : "\(draftName)(\(arguments { "self.\($0.identifier)" }))")
        }
        """
    }

    private var draftProperty: DeclSyntax {
        """
        /// A mutable copy of this value's fields.
        \(raw: typeAccess.modifier)nonisolated var draft: \(raw: draftName) {
        makeDraft()
        }
        """
    }

    private var updatingMethod: DeclSyntax {
        """
        /// A copy with several fields edited at once through a `Draft`, optional fields included.
        \(raw: typeAccess.modifier)nonisolated func updating(_ edit: (inout \(raw: draftName)) throws -> Void) rethrows -> Self {
        var draft = \(raw: fields(of: "self"))
        try edit(&draft)
        return \(raw: model(from: "draft"))
        }
        """
    }

    private var partialStruct: DeclSyntax {
        let alias = Self.selfAlias
        let properties = fields.map { "\(mirrorAccess(of: $0).modifier)var \($0.identifier): \($0.partialType) = nil" }
            .joined(separator: "\n")
        let copies =
            (usesStorageWitnesses ? ["let value = Amber._immutableFields(of: value)"] : [])
            + fields.map { "self.\($0.identifier) = value.\($0.identifier)" }
        let copying = copies.joined(separator: "\n")
        let required = fields.filter { !$0.isOptional }
        let draft = "\(alias).\(draftName)(\(arguments { $0.isOptional ? "self.\($0.identifier)" : $0.identifier }))"
        let completion: String
        if required.isEmpty {
            completion = "return \(model(from: draft, named: alias))"
        } else {
            let bindings = required.map { "let \($0.identifier) = self.\($0.identifier)" }.joined(separator: ", ")
            let checks =
                required
                .map { "if self.\($0.identifier) == nil { missingFields.append(\"\($0.name)\") }" }
                .joined(separator: "\n")
            completion = """
                guard \(bindings) else {
                var missingFields: [String] = []
                \(checks)
                throw Amber.IncompleteValueError(typeName: "\(typeName)", missingFields: missingFields)
                }
                return \(model(from: draft, named: alias))
                """
        }
        let access = typeAccess.modifier
        return """
            /// `\(raw: typeName)` under construction: every field optional until `completed()`.
            \(raw: access)nonisolated struct \(raw: partialName)\(raw: conformanceClause(mirroredConformances)) {
            \(raw: properties)

            /// An empty partial value.
            \(raw: access)init() {
            }
            /// A partial value holding every field of `value`.
            \(raw: access)init(_ value: \(raw: alias)) {
            \(raw: copying)
            }
            /// The finished value.
            /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
            \(raw: access)func completed() throws(Amber.IncompleteValueError) -> \(raw: alias) {
            \(raw: completion)
            }\(raw: partialCodingThroughModel ? partialCodingMembers : mirroredCodingKeys)
            }
            """
    }

    /// `Partial`'s `encode(to:)` and `init(from:)` where it cannot synthesize them as the model
    /// does: the model's encoding, so only a complete partial encodes.
    private var partialCodingMembers: String {
        let access = typeAccess.modifier
        var members: [String] = []
        if mirroredConformances.contains("Codable") || mirroredConformances.contains("Encodable") {
            members.append(
                """
                /// Encodes the completed value as the model does.
                /// - Throws: `EncodingError.invalidValue` while a non-optional field is `nil`.
                \(access)func encode(to encoder: any Encoder) throws {
                let value: \(Self.selfAlias)
                do {
                value = try completed()
                } catch {
                throw EncodingError.invalidValue(
                self, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "\\(error)"))
                }
                try value.encode(to: encoder)
                }
                """)
        }
        if mirroredConformances.contains("Codable") || mirroredConformances.contains("Decodable") {
            members.append(
                """
                /// Decodes the model's encoding.
                \(access)init(from decoder: any Decoder) throws {
                self.init(try \(Self.selfAlias)(from: decoder))
                }
                """)
        }
        return members.map { "\n\n\($0)" }.joined()
    }

    private var partialTypeProperty: DeclSyntax {
        """
        /// The builder, `Partial` in `ImmutableModel`.
        \(raw: typeAccess.modifier)nonisolated static var _immutablePartialType: \(raw: partialName).Type {
        \(raw: partialName).self
        }
        """
    }

    private var fieldNamesProperty: DeclSyntax {
        let names = fields.map { "\"\($0.name)\"" }.joined(separator: ", ")
        return """
            /// The settable stored properties, in declaration order.
            \(raw: typeAccess.modifier)nonisolated static var fieldNames: [String] {
            [\(raw: names)]
            }
            """
    }

    private var mergeMethod: DeclSyntax {
        let reads =
            usesStorageWitnesses
            ? """
            let base = Amber._immutableFields(of: base)
            let mine = Amber._immutableFields(of: mine)
            let theirs = Amber._immutableFields(of: theirs)

            """ : ""
        let start = usesStorageWitnesses ? "mine" : "mine.makeDraft()"
        let body =
            fields.isEmpty
            ? "Amber.MergeResult(value: mine, conflicts: [])"
            : """
            \(reads)var conflicts: [String] = []
            var merged = \(start)
            \(fields.map(mergedAssignment).joined(separator: "\n"))
            let value: Self = \(model(from: "merged"))
            return Amber.MergeResult(value: value, conflicts: conflicts)
            """
        return """
            /// Three-way merge, field by field: a field changed on one side takes that side;
            /// changed on both sides, it is settled by its `@Merge` strategy, or takes `mine` and is listed in `conflicts`.
            \(raw: typeAccess.modifier)nonisolated static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
            \(raw: body)
            }
            """
    }

    /// The only generated code that reads deprecated fields: a deprecated witness, which does not
    /// warn itself, called through `ImmutableModel` by the rest, so that its callers do not warn
    /// either. The storing initializer is the one that writes them.
    private var deprecatedFieldsWitness: DeclSyntax {
        """
        @available(*, deprecated, message: "reads deprecated fields for @Immutable; use makeDraft()")
        \(raw: typeAccess.modifier)nonisolated func _immutableFields() -> \(raw: draftName) {
        \(raw: draftName)(\(raw: arguments { "self.\($0.identifier)" }))
        }
        """
    }

    private func mergedAssignment(_ field: Field) -> String {
        let sides = "base: base.\(field.identifier), mine: mine.\(field.identifier), theirs: theirs.\(field.identifier)"
        let call =
            switch field.mergeStrategy {
            case .standard: "Amber._mergeField(\"\(field.name)\", \(sides), conflicts: &conflicts)"
            case .union: "Amber._mergeUnion(\(sides))"
            case .counter: "Amber._mergeCounter(\(sides))"
            case .mine: "Amber._mergePreferring(\(sides), mineWins: true)"
            case .theirs: "Amber._mergePreferring(\(sides), mineWins: false)"
            case .latest(let by):
                "Amber._mergePreferring(\(sides), mineWins: mine.\(fields.first { $0.name == by }?.identifier ?? by) >= theirs.\(fields.first { $0.name == by }?.identifier ?? by))"
            }
        return "merged.\(field.identifier) = \(call)"
    }
}
