import SwiftSyntax
import SwiftSyntaxBuilder

/// The members `@Immutable` adds to a model.
extension ModelDescription {
    var members: [DeclSyntax] {
        var members: [DeclSyntax] = hasMemberwiseInit ? [] : [memberwiseInit]
        members += fields.map(withMethod)
        members += [updateMethod, selfAliasDeclaration, draftStruct, draftInit, makeDraftMethod]
        // A field named `draft` keeps its name; generic code still reaches the draft through `ImmutableModel`.
        if !hasDraftField { members.append(draftProperty) }
        members += [updatingMethod, partialStruct, fieldNamesProperty]
        if isMergeable { members.append(mergeMethod) }
        if usesStorageWitnesses { members += deprecatedFieldWitnesses }
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

    private var memberwiseInit: DeclSyntax {
        let parameters =
            fields
            .map { "\($0.name): \($0.parameterType)\($0.isOptional ? " = nil" : "")" }
            .joined(separator: ", ")
        let assignments =
            usesStorageWitnesses
            ? "self = Amber._immutableModel(fields: Draft(\(arguments { $0.identifier })))"
            : fields.map { "self.\($0.identifier) = \($0.identifier)" }.joined(separator: "\n")
        return """
            \(raw: access(exposing: fields))nonisolated init(\(raw: parameters)) {
            \(raw: assignments)
            }
            """
    }

    private func withMethod(_ field: Field) -> DeclSyntax {
        let body =
            usesStorageWitnesses
            ? "updating { $0.\(field.identifier) = \(field.identifier) }"
            : "Self(\(arguments { $0.name == field.name ? $0.identifier : "self.\($0.identifier)" }))"
        return """
            /// A copy with `\(raw: field.name)` replaced\(raw: field.isOptional ? "; `nil` clears it" : "").
            \(raw: access(exposing: [field]))nonisolated func with(\(raw: field.name): \(raw: field.parameterType)) -> Self {
            \(raw: body)
            }
            """
    }

    private var updateMethod: DeclSyntax {
        let required = fields.filter { !$0.isOptional }
        let parameters = required.map { "\($0.name): \($0.optionalType) = nil" }.joined(separator: ", ")
        let body: String
        if !usesStorageWitnesses {
            body =
                "Self(\(arguments { $0.isOptional ? "self.\($0.identifier)" : "\($0.identifier) ?? self.\($0.identifier)" }))"
        } else if required.isEmpty {
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

    private var conformanceClause: String {
        mirroredConformances.isEmpty ? "" : ": " + mirroredConformances.joined(separator: ", ")
    }

    /// The `CodingKeys` of the model, so that its JSON decodes as its `Draft` and `Partial`.
    private var mirroredCodingKeys: String {
        codingKeys.map { "\n\n\($0.trimmedDescription)" } ?? ""
    }

    private var draftStruct: DeclSyntax {
        let properties = fields.map {
            "\(mirrorAccess(of: $0).modifier)var \($0.identifier): \($0.mirroredType.trimmedDescription)"
        }
        .joined(separator: "\n")
        let parameters = fields.map {
            "\($0.name): \($0.isFunction ? "@escaping \($0.mirroredType.unparenthesized.trimmedDescription)" : $0.mirroredType.trimmedDescription)"
        }.joined(separator: ", ")
        let assignments = fields.map { "self.\($0.identifier) = \($0.identifier)" }.joined(separator: "\n")
        let initAccess = fields.reduce(typeAccess) { min($0, mirrorAccess(of: $1)) }
        return """
            /// A mutable mirror of `\(raw: typeName)`, turned back into a value with `\(raw: typeName)(draft)`.
            \(raw: typeAccess.modifier)nonisolated struct Draft\(raw: conformanceClause) {
            \(raw: properties)

            \(raw: initAccess.modifier)init(\(raw: parameters)) {
            \(raw: assignments)
            }\(raw: mirroredCodingKeys)
            }
            """
    }

    private var draftInit: DeclSyntax {
        """
        /// Creates a value from a finished draft.
        \(raw: typeAccess.modifier)nonisolated init(_ draft: Draft) {
        self.init(\(raw: arguments { "draft.\($0.identifier)" }))
        }
        """
    }

    private var makeDraftMethod: DeclSyntax {
        """
        /// A mutable copy of this value's fields\(raw: hasDraftField ? "; `draft` in generic code" : ", as `draft`").
        \(raw: typeAccess.modifier)nonisolated func makeDraft() -> Draft {
        \(raw: usesStorageWitnesses ? "Amber._immutableFields(of: self)" : "Draft(\(arguments { "self.\($0.identifier)" }))")
        }
        """
    }

    private var draftProperty: DeclSyntax {
        """
        /// A mutable copy of this value's fields.
        \(raw: typeAccess.modifier)nonisolated var draft: Draft {
        makeDraft()
        }
        """
    }

    private var updatingMethod: DeclSyntax {
        """
        /// A copy with several fields edited at once through a `Draft`, optional fields included.
        \(raw: typeAccess.modifier)nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
        var draft = self.makeDraft()
        try edit(&draft)
        return Self(draft)
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
        let completion: String
        if required.isEmpty {
            completion = "return \(alias)(\(arguments { "self.\($0.identifier)" }))"
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
                return \(alias)(\(arguments { $0.isOptional ? "self.\($0.identifier)" : $0.identifier }))
                """
        }
        let access = typeAccess.modifier
        return """
            /// `\(raw: typeName)` under construction: every field optional until `completed()`.
            \(raw: access)nonisolated struct Partial\(raw: conformanceClause) {
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
            }\(raw: mirroredCodingKeys)
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
        let body =
            fields.isEmpty
            ? "Amber.MergeResult(value: mine, conflicts: [])"
            : """
            \(reads)var conflicts: [String] = []
            let value = Self(
            \(fields.map(mergedArgument).joined(separator: ",\n"))
            )
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

    /// The only generated code that names deprecated fields: deprecated witnesses, which do not warn
    /// themselves, called through `ImmutableModel` by the rest, so that their callers do not warn either.
    private var deprecatedFieldWitnesses: [DeclSyntax] {
        // An initializer the user wrote may set more than the fields (`@ImmutableIgnored` ones):
        // go through it. The generated one comes here itself, so this one stores the fields.
        let storingFields =
            hasMemberwiseInit
            ? "self.init(\(arguments { "fields.\($0.identifier)" }))"
            : fields.map { "self.\($0.identifier) = fields.\($0.identifier)" }.joined(separator: "\n")
        let message =
            "@available(*, deprecated, message: \"reads and writes deprecated fields for @Immutable; use init(_:) and makeDraft()\")"
        return [
            """
            \(raw: message)
            \(raw: typeAccess.modifier)nonisolated init(_immutableFields fields: Draft) {
            \(raw: storingFields)
            }
            """,
            """
            \(raw: message)
            \(raw: typeAccess.modifier)nonisolated func _immutableFields() -> Draft {
            Draft(\(raw: arguments { "self.\($0.identifier)" }))
            }
            """,
        ]
    }

    private func mergedArgument(_ field: Field) -> String {
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
        return "\(field.name): \(call)"
    }
}
