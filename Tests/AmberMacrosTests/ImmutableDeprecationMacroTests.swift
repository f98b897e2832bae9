import AmberMacros
import MacroTesting
import SwiftSyntaxMacroExpansion
import Testing

/// Deprecated fields: named only where using them does not warn.
@Suite(
    .macros(
        [
            "Immutable": MacroSpec(type: ImmutableMacro.self, conformances: ["ImmutableModel", "Mergeable"]),
            "Merge": MacroSpec(type: FieldMarkerMacro.self),
            "ImmutableIgnored": MacroSpec(type: FieldMarkerMacro.self),
        ]
    )
)
struct ImmutableDeprecationMacroTests {
    @Test func deprecatedFieldIsNamedOnlyInDeprecatedWitnesses() {
        assertMacro {
            """
            @Immutable
            struct Legacy: Equatable {
                @available(*, deprecated, message: "use title")
                let name: String
                let title: String?
            }
            """
        } expansion: {
            """
            struct Legacy: Equatable {
                @available(*, deprecated, message: "use title")
                let name: String
                let title: String?

                nonisolated init(name: String, title: String? = nil) {
                    self = Amber._immutableModel(fields: Draft(name: name, title: title))
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                @available(*, deprecated, message: "writes deprecated fields for @Immutable; use init(_:)")
                nonisolated init(_immutableFields fields: Draft) {
                    self.name = fields.name
                    self.title = fields.title
                }

                /// A copy with `name` replaced.
                nonisolated func with(name: String) -> Self {
                    updating {
                        $0.name = name
                    }
                }

                /// A copy with `title` replaced; `nil` clears it.
                nonisolated func with(title: String?) -> Self {
                    updating {
                        $0.title = title
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(name: String? = nil) -> Self {
                    updating {
                        $0.name = name ?? $0.name
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Legacy`, turned back into a value with `Legacy(draft)`.
                nonisolated struct Draft: Equatable {
                    var name: String
                    var title: String?

                    init(name: String, title: String?) {
                        self.name = name
                        self.title = title
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self = Amber._immutableModel(fields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Amber._immutableFields(of: self)
                }

                /// A mutable copy of this value's fields.
                nonisolated var draft: Draft {
                    makeDraft()
                }

                /// A copy with several fields edited at once through a `Draft`, optional fields included.
                nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
                    var draft = Amber._immutableFields(of: self)
                    try edit(&draft)
                    return Amber._immutableModel(fields: draft)
                }

                /// `Legacy` under construction: every field optional until `completed()`.
                nonisolated struct Partial: Equatable {
                    var name: String? = nil
                    var title: String? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        let value = Amber._immutableFields(of: value)
                        self.name = value.name
                        self.title = value.title
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let name = self.name else {
                            var missingFields: [String] = []
                            if self.name == nil {
                                missingFields.append("name")
                            }
                            throw Amber.IncompleteValueError(typeName: "Legacy", missingFields: missingFields)
                        }
                        return Amber._immutableModel(fields: ImmutableSelf.Draft(name: name, title: self.title))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["name", "title"]
                }

                /// Three-way merge, field by field: a field changed on one side takes that side;
                /// changed on both sides, it is settled by its `@Merge` strategy, or takes `mine` and is listed in `conflicts`.
                nonisolated static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
                    let base = Amber._immutableFields(of: base)
                    let mine = Amber._immutableFields(of: mine)
                    let theirs = Amber._immutableFields(of: theirs)
                    var conflicts: [String] = []
                    var merged = mine
                    merged.name = Amber._mergeField("name", base: base.name, mine: mine.name, theirs: theirs.name, conflicts: &conflicts)
                    merged.title = Amber._mergeField("title", base: base.title, mine: mine.title, theirs: theirs.title, conflicts: &conflicts)
                    let value: Self = Amber._immutableModel(fields: merged)
                    return Amber.MergeResult(value: value, conflicts: conflicts)
                }

                @available(*, deprecated, message: "reads deprecated fields for @Immutable; use makeDraft()")
                nonisolated func _immutableFields() -> Draft {
                    Draft(name: self.name, title: self.title)
                }
            }

            nonisolated extension Legacy: Amber.ImmutableModel {
            }

            nonisolated extension Legacy: Amber.Mergeable {
            }
            """
        }
    }

    @Test func deprecatedFieldWithAWrittenInitializerGoesThroughIt() {
        assertMacro {
            """
            @Immutable
            struct Legacy {
                @available(*, deprecated)
                let body: String
                @ImmutableIgnored let length: Int

                init(body: String) {
                    self.body = body
                    self.length = body.count
                }
            }
            """
        } expansion: {
            """
            struct Legacy {
                @available(*, deprecated)
                let body: String
                let length: Int

                init(body: String) {
                    self.body = body
                    self.length = body.count
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                @available(*, deprecated, message: "writes deprecated fields for @Immutable; use init(_:)")
                nonisolated init(_immutableFields fields: Draft) {
                    self.init(body: fields.body)
                }

                /// A copy with `body` replaced.
                nonisolated func with(body: String) -> Self {
                    updating {
                        $0.body = body
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(body: String? = nil) -> Self {
                    updating {
                        $0.body = body ?? $0.body
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Legacy`, turned back into a value with `Legacy(draft)`.
                nonisolated struct Draft {
                    var body: String

                    init(body: String) {
                        self.body = body
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self = Amber._immutableModel(fields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Amber._immutableFields(of: self)
                }

                /// A mutable copy of this value's fields.
                nonisolated var draft: Draft {
                    makeDraft()
                }

                /// A copy with several fields edited at once through a `Draft`, optional fields included.
                nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
                    var draft = Amber._immutableFields(of: self)
                    try edit(&draft)
                    return Amber._immutableModel(fields: draft)
                }

                /// `Legacy` under construction: every field optional until `completed()`.
                nonisolated struct Partial {
                    var body: String? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        let value = Amber._immutableFields(of: value)
                        self.body = value.body
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let body = self.body else {
                            var missingFields: [String] = []
                            if self.body == nil {
                                missingFields.append("body")
                            }
                            throw Amber.IncompleteValueError(typeName: "Legacy", missingFields: missingFields)
                        }
                        return Amber._immutableModel(fields: ImmutableSelf.Draft(body: body))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["body"]
                }

                @available(*, deprecated, message: "reads deprecated fields for @Immutable; use makeDraft()")
                nonisolated func _immutableFields() -> Draft {
                    Draft(body: self.body)
                }
            }

            nonisolated extension Legacy: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func privateNestedModelWithoutTheConformanceNamesDeprecatedFieldsDirectly() {
        assertMacro {
            """
            enum Outer {
                @Immutable
                private struct Row {
                    @available(*, deprecated) let old: Int
                }
            }
            """
        } expansion: {
            """
            enum Outer {
                private struct Row {
                    @available(*, deprecated) let old: Int

                    nonisolated init(old: Int) {
                        self.old = old
                    }

                    /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                    nonisolated init(_immutableFields fields: Draft) {
                        self.old = fields.old
                    }

                    /// A copy with `old` replaced.
                    nonisolated func with(old: Int) -> Self {
                        updating {
                            $0.old = old
                        }
                    }

                    /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                    /// Use `with` to change or clear an optional field.
                    nonisolated func update(old: Int? = nil) -> Self {
                        updating {
                            $0.old = old ?? $0.old
                        }
                    }

                    /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                    typealias ImmutableSelf = Self

                    /// A mutable mirror of `Row`, turned back into a value with `Row(draft)`.
                    nonisolated struct Draft {
                        var old: Int

                        init(old: Int) {
                            self.old = old
                        }
                    }

                    /// Creates a value from a finished draft.
                    nonisolated init(_ draft: Draft) {
                        self.init(_immutableFields: draft)
                    }

                    /// A mutable copy of this value's fields, as `draft`.
                    nonisolated func makeDraft() -> Draft {
                        Draft(old: self.old)
                    }

                    /// A mutable copy of this value's fields.
                    nonisolated var draft: Draft {
                        makeDraft()
                    }

                    /// A copy with several fields edited at once through a `Draft`, optional fields included.
                    nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
                        var draft = self.makeDraft()
                        try edit(&draft)
                        return Self(_immutableFields: draft)
                    }

                    /// `Row` under construction: every field optional until `completed()`.
                    nonisolated struct Partial {
                        var old: Int? = nil

                        /// An empty partial value.
                        init() {
                        }
                        /// A partial value holding every field of `value`.
                        init(_ value: ImmutableSelf) {
                            self.old = value.old
                        }
                        /// The finished value.
                        /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                        func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                            guard let old = self.old else {
                                var missingFields: [String] = []
                                if self.old == nil {
                                    missingFields.append("old")
                                }
                                throw Amber.IncompleteValueError(typeName: "Row", missingFields: missingFields)
                            }
                            return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(old: old))
                        }
                    }

                    /// The settable stored properties, in declaration order.
                    nonisolated static var fieldNames: [String] {
                        ["old"]
                    }
                }
            }
            """
        }
    }
}
