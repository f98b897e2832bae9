import AmberMacros
import MacroTesting
import SwiftSyntaxMacroExpansion
import Testing

/// Names that could capture generated code: a model named `Draft`, a field named `self`.
@Suite(
    .macros(
        [
            "Immutable": MacroSpec(type: ImmutableMacro.self, conformances: ["ImmutableModel", "Mergeable"]),
            "Merge": MacroSpec(type: FieldMarkerMacro.self),
            "ImmutableIgnored": MacroSpec(type: FieldMarkerMacro.self),
        ]
    )
)
struct ImmutableNamingMacroTests {
    @Test func modelNamedDraftWithFieldsNamingItself() {
        assertMacro {
            """
            @Immutable
            struct Draft: Codable {
                let draft: String
                let children: [Self]
                let parent: Self?
            }
            """
        } expansion: {
            """
            struct Draft: Codable {
                let draft: String
                let children: [Self]
                let parent: Self?

                nonisolated init(draft: String, children: [Self], parent: Self? = nil) {
                    self.draft = draft
                    self.children = children
                    self.parent = parent
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.draft = fields.draft
                    self.children = fields.children
                    self.parent = fields.parent
                }

                /// A copy with `draft` replaced.
                nonisolated func with(draft: String) -> Self {
                    updating {
                        $0.draft = draft
                    }
                }

                /// A copy with `children` replaced.
                nonisolated func with(children: [Self]) -> Self {
                    updating {
                        $0.children = children
                    }
                }

                /// A copy with `parent` replaced; `nil` clears it.
                nonisolated func with(parent: Self?) -> Self {
                    updating {
                        $0.parent = parent
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(draft: String? = nil, children: [Self]? = nil) -> Self {
                    updating {
                        $0.draft = draft ?? $0.draft
                        $0.children = children ?? $0.children
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Draft`, turned back into a value with `Draft(draft)`.
                nonisolated struct Draft: Codable {
                    var draft: String
                    var children: [ImmutableSelf]
                    var parent: ImmutableSelf?

                    init(draft: String, children: [ImmutableSelf], parent: ImmutableSelf?) {
                        self.draft = draft
                        self.children = children
                        self.parent = parent
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields; `draft` in generic code.
                nonisolated func makeDraft() -> Draft {
                    Draft(draft: self.draft, children: self.children, parent: self.parent)
                }

                /// A copy with several fields edited at once through a `Draft`, optional fields included.
                nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
                    var draft = self.makeDraft()
                    try edit(&draft)
                    return Self(_immutableFields: draft)
                }

                /// `Draft` under construction: every field optional until `completed()`.
                nonisolated struct Partial: Codable {
                    var draft: String? = nil
                    var children: [ImmutableSelf]? = nil
                    var parent: ImmutableSelf? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.draft = value.draft
                        self.children = value.children
                        self.parent = value.parent
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let draft = self.draft, let children = self.children else {
                            var missingFields: [String] = []
                            if self.draft == nil {
                                missingFields.append("draft")
                            }
                            if self.children == nil {
                                missingFields.append("children")
                            }
                            throw Amber.IncompleteValueError(typeName: "Draft", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(draft: draft, children: children, parent: self.parent))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["draft", "children", "parent"]
                }
            }

            nonisolated extension Draft: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func modelNamedDraftNamesItselfByName() {
        assertMacro {
            """
            @Immutable
            struct Draft {
                let parent: [Draft]
            }
            """
        } expansion: {
            """
            struct Draft {
                let parent: [Draft]

                nonisolated init(parent: [Draft]) {
                    self.parent = parent
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: ImmutableDraft) {
                    self.parent = fields.parent
                }

                /// A copy with `parent` replaced.
                nonisolated func with(parent: [Draft]) -> Self {
                    updating {
                        $0.parent = parent
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(parent: [Draft]? = nil) -> Self {
                    updating {
                        $0.parent = parent ?? $0.parent
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Draft`, turned back into a value with `Draft(draft)`.
                nonisolated struct ImmutableDraft {
                    var parent: [ImmutableSelf]

                    init(parent: [ImmutableSelf]) {
                        self.parent = parent
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: ImmutableDraft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> ImmutableDraft {
                    ImmutableDraft(parent: self.parent)
                }

                /// A mutable copy of this value's fields.
                nonisolated var draft: ImmutableDraft {
                    makeDraft()
                }

                /// A copy with several fields edited at once through a `Draft`, optional fields included.
                nonisolated func updating(_ edit: (inout ImmutableDraft) throws -> Void) rethrows -> Self {
                    var draft = self.makeDraft()
                    try edit(&draft)
                    return Self(_immutableFields: draft)
                }

                /// `Draft` under construction: every field optional until `completed()`.
                nonisolated struct Partial {
                    var parent: [ImmutableSelf]? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.parent = value.parent
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let parent = self.parent else {
                            var missingFields: [String] = []
                            if self.parent == nil {
                                missingFields.append("parent")
                            }
                            throw Amber.IncompleteValueError(typeName: "Draft", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.ImmutableDraft(parent: parent))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["parent"]
                }
            }

            nonisolated extension Draft: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func fieldNamedSelfIsDiagnosed() {
        assertMacro {
            """
            @Immutable
            struct Model {
                let `self`: Int
            }
            """
        } diagnostics: {
            """
            @Immutable
            struct Model {
                let `self`: Int
                    ┬─────
                    ╰─ 🛑 '@Immutable' cannot generate an initializer parameter named 'self'; rename the property
            }
            """
        }
    }
}
