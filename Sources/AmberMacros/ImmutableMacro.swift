import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Immutable`: the members and conformances of an immutable model.
public struct ImmutableMacro: MemberMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let model = ModelDescription.read(declaration, attribute: node, diagnose: context.diagnose) else {
            return []
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
        let requested = Set(protocols.map(\.lastNameComponent))
        var extensions: [ExtensionDeclSyntax] = []
        if requested.contains("ImmutableModel") {
            extensions.append(try ExtensionDeclSyntax("extension \(type.trimmed): Amber.ImmutableModel {}"))
        }
        if requested.contains("Mergeable"), model.declaresEquatable {
            extensions.append(try model.mergeableExtension(for: type.trimmed))
        }
        return extensions
    }
}

extension ModelDescription {
    var members: [DeclSyntax] {
        var members: [DeclSyntax] = [memberwiseInit]
        members += fields.map(withMethod)
        members += [updateMethod, draftStruct, draftInit, draftProperty, updatingMethod, partialStruct, fieldNamesProperty]
        return members
    }

    /// `name: name, age: age` — every field passed on as itself, or as `transform` makes it.
    private func arguments(_ value: (Field) -> String) -> String {
        fields.map { "\($0.name): \(value($0))" }.joined(separator: ", ")
    }

    private var memberwiseInit: DeclSyntax {
        let parameters = fields
            .map { "\($0.name): \($0.parameterType)\($0.isOptional ? " = nil" : "")" }
            .joined(separator: ", ")
        let assignments = fields.map { "self.\($0.identifier) = \($0.identifier)" }.joined(separator: "\n")
        return """
            \(raw: access)init(\(raw: parameters)) {
            \(raw: assignments)
            }
            """
    }

    private func withMethod(_ field: Field) -> DeclSyntax {
        let arguments = arguments { $0.name == field.name ? $0.identifier : "self.\($0.identifier)" }
        return """
            /// A copy with `\(raw: field.name)` replaced\(raw: field.isOptional ? "; `nil` clears it" : "").
            \(raw: access)func with(\(raw: field.name): \(raw: field.parameterType)) -> \(raw: typeName) {
            \(raw: typeName)(\(raw: arguments))
            }
            """
    }

    private var updateMethod: DeclSyntax {
        let parameters = fields.filter { !$0.isOptional }
            .map { "\($0.name): \($0.optionalType) = nil" }
            .joined(separator: ", ")
        let arguments = arguments { $0.isOptional ? "self.\($0.identifier)" : "\($0.identifier) ?? self.\($0.identifier)" }
        return """
            /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
            /// Use `with` to change or clear an optional field.
            \(raw: access)func update(\(raw: parameters)) -> \(raw: typeName) {
            \(raw: typeName)(\(raw: arguments))
            }
            """
    }

    private var conformanceClause: String {
        mirroredConformances.isEmpty ? "" : ": " + mirroredConformances.joined(separator: ", ")
    }

    private var draftStruct: DeclSyntax {
        let properties = fields.map { "\(access)var \($0.identifier): \($0.type.trimmedDescription)" }
            .joined(separator: "\n")
        let parameters = fields.map { "\($0.name): \($0.parameterType)" }.joined(separator: ", ")
        let assignments = fields.map { "self.\($0.identifier) = \($0.identifier)" }.joined(separator: "\n")
        return """
            /// A mutable mirror of `\(raw: typeName)`, turned back into a value with `\(raw: typeName)(draft)`.
            \(raw: access)struct Draft\(raw: conformanceClause) {
            \(raw: properties)

            \(raw: access)init(\(raw: parameters)) {
            \(raw: assignments)
            }
            }
            """
    }

    private var draftInit: DeclSyntax {
        """
        /// Creates a value from a finished draft.
        \(raw: access)init(_ draft: Draft) {
        self.init(\(raw: arguments { "draft.\($0.identifier)" }))
        }
        """
    }

    private var draftProperty: DeclSyntax {
        """
        /// A mutable copy of this value's fields.
        \(raw: access)var draft: Draft {
        Draft(\(raw: arguments { "self.\($0.identifier)" }))
        }
        """
    }

    private var updatingMethod: DeclSyntax {
        """
        /// A copy with several fields edited at once through a `Draft`, optional fields included.
        \(raw: access)func updating(_ edit: (inout Draft) throws -> Void) rethrows -> \(raw: typeName) {
        var draft = self.draft
        try edit(&draft)
        return \(raw: typeName)(draft)
        }
        """
    }

    private var partialStruct: DeclSyntax {
        let properties = fields.map { "\(access)var \($0.identifier): \($0.partialType) = nil" }.joined(separator: "\n")
        let copies = fields.map { "self.\($0.identifier) = value.\($0.identifier)" }.joined(separator: "\n")
        let required = fields.filter { !$0.isOptional }
        let completion: String
        if required.isEmpty {
            completion = "return \(typeName)(\(arguments { "self.\($0.identifier)" }))"
        } else {
            let bindings = required.map { "let \($0.identifier) = self.\($0.identifier)" }.joined(separator: ", ")
            let checks = required
                .map { "if self.\($0.identifier) == nil { missingFields.append(\"\($0.name)\") }" }
                .joined(separator: "\n")
            completion = """
                guard \(bindings) else {
                var missingFields: [String] = []
                \(checks)
                throw Amber.IncompleteValueError(typeName: "\(typeName)", missingFields: missingFields)
                }
                return \(typeName)(\(arguments { $0.isOptional ? "self.\($0.identifier)" : $0.identifier }))
                """
        }
        return """
            /// `\(raw: typeName)` under construction: every field optional until `completed()`.
            \(raw: access)struct Partial\(raw: conformanceClause) {
            \(raw: properties)

            /// An empty partial value.
            \(raw: access)init() {
            }
            /// A partial value holding every field of `value`.
            \(raw: access)init(_ value: \(raw: typeName)) {
            \(raw: copies)
            }
            /// The finished value.
            /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
            \(raw: access)func completed() throws(Amber.IncompleteValueError) -> \(raw: typeName) {
            \(raw: completion)
            }
            }
            """
    }

    private var fieldNamesProperty: DeclSyntax {
        let names = fields.map { "\"\($0.name)\"" }.joined(separator: ", ")
        return """
            /// The settable stored properties, in declaration order.
            \(raw: access)static var fieldNames: [String] {
            [\(raw: names)]
            }
            """
    }

    func mergeableExtension(for type: some TypeSyntaxProtocol) throws -> ExtensionDeclSyntax {
        let body = fields.isEmpty ? "Amber.MergeResult(value: mine, conflicts: [])" : """
            var conflicts: [String] = []
            let value = Self(
            \(mergedArguments)
            )
            return Amber.MergeResult(value: value, conflicts: conflicts)
            """
        return try ExtensionDeclSyntax(
            """
            extension \(type): Amber.Mergeable {
            /// Three-way merge, field by field: a field changed on one side takes that side;
            /// changed on both sides to different values it takes `mine` and is listed in `conflicts`.
            \(raw: access)static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
            \(raw: body)
            }
            }
            """
        )
    }

    private var mergedArguments: String {
        fields.map {
            "\($0.name): Amber._mergeField(\"\($0.name)\", base: base.\($0.identifier), mine: mine.\($0.identifier), theirs: theirs.\($0.identifier), conflicts: &conflicts)"
        }.joined(separator: ",\n")
    }
}
