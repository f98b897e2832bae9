import AmberMacros
import MacroTesting
import SwiftSyntaxMacroExpansion
import Testing

/// Which stored properties `@Immutable` reads, and how: an existing memberwise initializer, `#if` blocks, tuple patterns, closures, lazy and wrapped vars, ignored fields.
@Suite(
    .macros(
        [
            "Immutable": MacroSpec(type: ImmutableMacro.self, conformances: ["ImmutableModel", "Mergeable"]),
            "Merge": MacroSpec(type: FieldMarkerMacro.self),
            "ImmutableIgnored": MacroSpec(type: FieldMarkerMacro.self),
        ]
    )
)
struct ImmutableFieldMacroTests {
    @Test func existingMemberwiseInitializerIsKept() {
        assertMacro {
            """
            @Immutable
            struct Item {
                let id: UUID
                let title: String

                init(id: UUID = UUID(), title: String) {
                    self.id = id
                    self.title = title
                }
            }
            """
        } expansion: {
            """
            struct Item {
                let id: UUID
                let title: String

                init(id: UUID = UUID(), title: String) {
                    self.id = id
                    self.title = title
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.id = fields.id
                    self.title = fields.title
                }

                /// A copy with `id` replaced.
                nonisolated func with(id: UUID) -> Self {
                    updating {
                        $0.id = id
                    }
                }

                /// A copy with `title` replaced.
                nonisolated func with(title: String) -> Self {
                    updating {
                        $0.title = title
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(id: UUID? = nil, title: String? = nil) -> Self {
                    updating {
                        $0.id = id ?? $0.id
                        $0.title = title ?? $0.title
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Item`, turned back into a value with `Item(draft)`.
                nonisolated struct Draft {
                    var id: UUID
                    var title: String

                    init(id: UUID, title: String) {
                        self.id = id
                        self.title = title
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(id: self.id, title: self.title)
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

                /// `Item` under construction: every field optional until `completed()`.
                nonisolated struct Partial {
                    var id: UUID? = nil
                    var title: String? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.id = value.id
                        self.title = value.title
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let id = self.id, let title = self.title else {
                            var missingFields: [String] = []
                            if self.id == nil {
                                missingFields.append("id")
                            }
                            if self.title == nil {
                                missingFields.append("title")
                            }
                            throw Amber.IncompleteValueError(typeName: "Item", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(id: id, title: title))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["id", "title"]
                }
            }

            nonisolated extension Item: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func storedPropertiesInsideIfAreDiagnosed() {
        assertMacro {
            """
            @Immutable
            struct Build {
                let version: String
                #if DEBUG
                let channel: String
                var counter: Int
                let label = "debug"
                #endif
            }
            """
        } diagnostics: {
            """
            @Immutable
            struct Build {
                let version: String
                #if DEBUG
                let channel: String
                    ┬──────
                    ╰─ 🛑 '@Immutable' cannot generate members for stored property 'channel' inside '#if'; declare it outside the '#if', or give it an initial value
                var counter: Int
                    ┬──────
                    ╰─ 🛑 stored property 'counter' of an immutable model must be 'let'
                       ✏️ Replace 'var' with 'let'
                let label = "debug"
                #endif
            }
            """
        }
    }

    @Test func tuplePatternIsDiagnosed() {
        assertMacro {
            """
            @Immutable
            struct Point {
                let (x, y): (Double, Double)
                var (a, b): (Int, Int)
            }
            """
        } diagnostics: {
            """
            @Immutable
            struct Point {
                let (x, y): (Double, Double)
                    ┬─────
                    ╰─ 🛑 '@Immutable' needs one name per stored property; declare each name of '(x, y)' in its own 'let'
                var (a, b): (Int, Int)
                    ┬─────
                    ╰─ 🛑 stored property '(a, b)' of an immutable model must be 'let'
                       ✏️ Replace 'var' with 'let'
            }
            """
        }
    }

    @Test func closureFieldsEscape() {
        assertMacro {
            """
            @Immutable
            struct Button {
                typealias Action = () -> Void
                let action: Action
                let wrapped: (@Sendable () -> Void)
                let optional: (() -> Void)?
            }
            """
        } expansion: {
            """
            struct Button {
                typealias Action = () -> Void
                let action: Action
                let wrapped: (@Sendable () -> Void)
                let optional: (() -> Void)?

                nonisolated init(action: @escaping Action, wrapped: @escaping @Sendable () -> Void, optional: (() -> Void)? = nil) {
                    self.action = action
                    self.wrapped = wrapped
                    self.optional = optional
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.action = fields.action
                    self.wrapped = fields.wrapped
                    self.optional = fields.optional
                }

                /// A copy with `action` replaced.
                nonisolated func with(action: @escaping Action) -> Self {
                    updating {
                        $0.action = action
                    }
                }

                /// A copy with `wrapped` replaced.
                nonisolated func with(wrapped: @escaping @Sendable () -> Void) -> Self {
                    updating {
                        $0.wrapped = wrapped
                    }
                }

                /// A copy with `optional` replaced; `nil` clears it.
                nonisolated func with(optional: (() -> Void)?) -> Self {
                    updating {
                        $0.optional = optional
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(action: Action? = nil, wrapped: (@Sendable () -> Void)? = nil) -> Self {
                    updating {
                        $0.action = action ?? $0.action
                        $0.wrapped = wrapped ?? $0.wrapped
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Button`, turned back into a value with `Button(draft)`.
                nonisolated struct Draft {
                    var action: Action
                    var wrapped: (@Sendable () -> Void)
                    var optional: (() -> Void)?

                    init(action: @escaping Action, wrapped: @escaping @Sendable () -> Void, optional: (() -> Void)?) {
                        self.action = action
                        self.wrapped = wrapped
                        self.optional = optional
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(action: self.action, wrapped: self.wrapped, optional: self.optional)
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

                /// `Button` under construction: every field optional until `completed()`.
                nonisolated struct Partial {
                    var action: Action? = nil
                    var wrapped: (@Sendable () -> Void)? = nil
                    var optional: (() -> Void)? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.action = value.action
                        self.wrapped = value.wrapped
                        self.optional = value.optional
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let action = self.action, let wrapped = self.wrapped else {
                            var missingFields: [String] = []
                            if self.action == nil {
                                missingFields.append("action")
                            }
                            if self.wrapped == nil {
                                missingFields.append("wrapped")
                            }
                            throw Amber.IncompleteValueError(typeName: "Button", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(action: action, wrapped: wrapped, optional: self.optional))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["action", "wrapped", "optional"]
                }
            }

            nonisolated extension Button: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func lazyAndWrappedVarsHaveNoFixIt() {
        assertMacro {
            """
            @Immutable
            struct Model {
                lazy var cache: [Int] = []
                @State var flag: Bool
                @available(*, deprecated) var old: Int
            }
            """
        } diagnostics: {
            """
            @Immutable
            struct Model {
                lazy var cache: [Int] = []
                         ┬────
                         ╰─ 🛑 lazy property 'cache' changes on first use, which an immutable model cannot; make it a computed property
                @State var flag: Bool
                           ┬───
                           ╰─ 🛑 stored property 'flag' of an immutable model must be 'let', which '@State' does not allow; remove the wrapper or make 'flag' computed
                @available(*, deprecated) var old: Int
                                              ┬──
                                              ╰─ 🛑 stored property 'old' of an immutable model must be 'let'
                                                 ✏️ Replace 'var' with 'let'
            }
            """
        }
    }

    @Test func ignoredFieldsAreLeftOutOfEverything() {
        assertMacro {
            """
            @Immutable
            struct Document: Equatable {
                let text: String
                @ImmutableIgnored let wordCount: Int

                init(text: String) {
                    self.text = text
                    self.wordCount = text.count
                }
            }
            """
        } expansion: {
            """
            struct Document: Equatable {
                let text: String
                let wordCount: Int

                init(text: String) {
                    self.text = text
                    self.wordCount = text.count
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.init(text: fields.text)
                }

                /// A copy with `text` replaced.
                nonisolated func with(text: String) -> Self {
                    updating {
                        $0.text = text
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(text: String? = nil) -> Self {
                    updating {
                        $0.text = text ?? $0.text
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Document`, turned back into a value with `Document(draft)`.
                nonisolated struct Draft: Equatable {
                    var text: String

                    init(text: String) {
                        self.text = text
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(text: self.text)
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

                /// `Document` under construction: every field optional until `completed()`.
                nonisolated struct Partial: Equatable {
                    var text: String? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.text = value.text
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let text = self.text else {
                            var missingFields: [String] = []
                            if self.text == nil {
                                missingFields.append("text")
                            }
                            throw Amber.IncompleteValueError(typeName: "Document", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(text: text))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["text"]
                }

                /// Three-way merge, field by field: a field changed on one side takes that side;
                /// changed on both sides, it is settled by its `@Merge` strategy, or takes `mine` and is listed in `conflicts`.
                nonisolated static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
                    var conflicts: [String] = []
                    var merged = mine.makeDraft()
                    merged.text = Amber._mergeField("text", base: base.text, mine: mine.text, theirs: theirs.text, conflicts: &conflicts)
                    let value: Self = Self(_immutableFields: merged)
                    return Amber.MergeResult(value: value, conflicts: conflicts)
                }
            }

            nonisolated extension Document: Amber.ImmutableModel {
            }

            nonisolated extension Document: Amber.Mergeable {
            }
            """
        }
    }

    @Test func ignoredFieldWithoutInitializerIsDiagnosed() {
        assertMacro {
            """
            @Immutable
            struct Document {
                let text: String
                @ImmutableIgnored let wordCount: Int
                @ImmutableIgnored let kind = "document"
            }
            """
        } diagnostics: {
            """
            @Immutable
            struct Document {
                let text: String
                @ImmutableIgnored let wordCount: Int
                ┬────────────────
                ╰─ 🛑 '@ImmutableIgnored' leaves 'wordCount' out of the generated initializer; give it an initial value, or write 'init(text: String)' that sets it
                @ImmutableIgnored let kind = "document"
            }
            """
        }
    }
}
