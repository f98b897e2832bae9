import AmberMacros
import MacroTesting
import SwiftSyntaxMacroExpansion
import Testing

/// Expansions and diagnostics for model code shaped like real apps' (issue 12).
@Suite(
    .macros(
        [
            "Immutable": MacroSpec(type: ImmutableMacro.self, conformances: ["ImmutableModel", "Mergeable"]),
            "Merge": MacroSpec(type: FieldMarkerMacro.self),
            "ImmutableIgnored": MacroSpec(type: FieldMarkerMacro.self),
        ]
    )
)
struct ImmutableAppCodeMacroTests {
    @Test func mainActorModelGetsNonisolatedMembersAndConformances() {
        assertMacro {
            """
            @MainActor @Immutable
            struct Screen: Hashable {
                let title: String
            }
            """
        } expansion: {
            """
            @MainActor
            struct Screen: Hashable {
                let title: String

                nonisolated init(title: String) {
                    self.title = title
                }

                /// A copy with `title` replaced.
                nonisolated func with(title: String) -> Self {
                    Self(title: title)
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(title: String? = nil) -> Self {
                    Self(title: title ?? self.title)
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Screen`, turned back into a value with `Screen(draft)`.
                nonisolated struct Draft: Hashable {
                    var title: String

                    init(title: String) {
                        self.title = title
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(title: draft.title)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(title: self.title)
                }

                /// A mutable copy of this value's fields.
                nonisolated var draft: Draft {
                    makeDraft()
                }

                /// A copy with several fields edited at once through a `Draft`, optional fields included.
                nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
                    var draft = self.makeDraft()
                    try edit(&draft)
                    return Self(draft)
                }

                /// `Screen` under construction: every field optional until `completed()`.
                nonisolated struct Partial: Hashable {
                    var title: String? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.title = value.title
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let title = self.title else {
                            var missingFields: [String] = []
                            if self.title == nil {
                                missingFields.append("title")
                            }
                            throw Amber.IncompleteValueError(typeName: "Screen", missingFields: missingFields)
                        }
                        return ImmutableSelf(title: title)
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["title"]
                }

                /// Three-way merge, field by field: a field changed on one side takes that side;
                /// changed on both sides, it is settled by its `@Merge` strategy, or takes `mine` and is listed in `conflicts`.
                nonisolated static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
                    var conflicts: [String] = []
                    let value = Self(
                        title: Amber._mergeField("title", base: base.title, mine: mine.title, theirs: theirs.title, conflicts: &conflicts)
                    )
                    return Amber.MergeResult(value: value, conflicts: conflicts)
                }
            }

            nonisolated extension Screen: Amber.ImmutableModel {
            }

            nonisolated extension Screen: Amber.Mergeable {
            }
            """
        }
    }

    @Test func privateNestedModelGetsMembersButNoExtensions() {
        assertMacro {
            """
            enum Timeline {
                @Immutable
                private struct Row: Equatable, ImmutableModel, Mergeable {
                    let id: Int
                }
            }
            """
        } expansion: {
            """
            enum Timeline {
                private struct Row: Equatable, ImmutableModel, Mergeable {
                    let id: Int

                    nonisolated init(id: Int) {
                        self.id = id
                    }

                    /// A copy with `id` replaced.
                    nonisolated func with(id: Int) -> Self {
                        Self(id: id)
                    }

                    /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                    /// Use `with` to change or clear an optional field.
                    nonisolated func update(id: Int? = nil) -> Self {
                        Self(id: id ?? self.id)
                    }

                    /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                    typealias ImmutableSelf = Self

                    /// A mutable mirror of `Row`, turned back into a value with `Row(draft)`.
                    nonisolated struct Draft: Equatable {
                        var id: Int

                        init(id: Int) {
                            self.id = id
                        }
                    }

                    /// Creates a value from a finished draft.
                    nonisolated init(_ draft: Draft) {
                        self.init(id: draft.id)
                    }

                    /// A mutable copy of this value's fields, as `draft`.
                    nonisolated func makeDraft() -> Draft {
                        Draft(id: self.id)
                    }

                    /// A mutable copy of this value's fields.
                    nonisolated var draft: Draft {
                        makeDraft()
                    }

                    /// A copy with several fields edited at once through a `Draft`, optional fields included.
                    nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
                        var draft = self.makeDraft()
                        try edit(&draft)
                        return Self(draft)
                    }

                    /// `Row` under construction: every field optional until `completed()`.
                    nonisolated struct Partial: Equatable {
                        var id: Int? = nil

                        /// An empty partial value.
                        init() {
                        }
                        /// A partial value holding every field of `value`.
                        init(_ value: ImmutableSelf) {
                            self.id = value.id
                        }
                        /// The finished value.
                        /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                        func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                            guard let id = self.id else {
                                var missingFields: [String] = []
                                if self.id == nil {
                                    missingFields.append("id")
                                }
                                throw Amber.IncompleteValueError(typeName: "Row", missingFields: missingFields)
                            }
                            return ImmutableSelf(id: id)
                        }
                    }

                    /// The settable stored properties, in declaration order.
                    nonisolated static var fieldNames: [String] {
                        ["id"]
                    }

                    /// Three-way merge, field by field: a field changed on one side takes that side;
                    /// changed on both sides, it is settled by its `@Merge` strategy, or takes `mine` and is listed in `conflicts`.
                    nonisolated static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
                        var conflicts: [String] = []
                        let value = Self(
                            id: Amber._mergeField("id", base: base.id, mine: mine.id, theirs: theirs.id, conflicts: &conflicts)
                        )
                        return Amber.MergeResult(value: value, conflicts: conflicts)
                    }
                }
            }
            """
        }
    }

    @Test func membersAreNoMoreVisibleThanTheFieldsTheyExpose() {
        assertMacro {
            """
            @Immutable
            public struct Account: Equatable {
                public let id: String
                let role: Role
                private let passwordHash: String
            }
            """
        } expansion: {
            """
            public struct Account: Equatable {
                public let id: String
                let role: Role
                private let passwordHash: String

                private nonisolated init(id: String, role: Role, passwordHash: String) {
                    self.id = id
                    self.role = role
                    self.passwordHash = passwordHash
                }

                /// A copy with `id` replaced.
                public nonisolated func with(id: String) -> Self {
                    Self(id: id, role: self.role, passwordHash: self.passwordHash)
                }

                /// A copy with `role` replaced.
                nonisolated func with(role: Role) -> Self {
                    Self(id: self.id, role: role, passwordHash: self.passwordHash)
                }

                /// A copy with `passwordHash` replaced.
                private nonisolated func with(passwordHash: String) -> Self {
                    Self(id: self.id, role: self.role, passwordHash: passwordHash)
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                private nonisolated func update(id: String? = nil, role: Role? = nil, passwordHash: String? = nil) -> Self {
                    Self(id: id ?? self.id, role: role ?? self.role, passwordHash: passwordHash ?? self.passwordHash)
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                public typealias ImmutableSelf = Self

                /// A mutable mirror of `Account`, turned back into a value with `Account(draft)`.
                public nonisolated struct Draft: Equatable {
                    public var id: String
                    var role: Role
                    fileprivate var passwordHash: String

                    fileprivate init(id: String, role: Role, passwordHash: String) {
                        self.id = id
                        self.role = role
                        self.passwordHash = passwordHash
                    }
                }

                /// Creates a value from a finished draft.
                public nonisolated init(_ draft: Draft) {
                    self.init(id: draft.id, role: draft.role, passwordHash: draft.passwordHash)
                }

                /// A mutable copy of this value's fields, as `draft`.
                public nonisolated func makeDraft() -> Draft {
                    Draft(id: self.id, role: self.role, passwordHash: self.passwordHash)
                }

                /// A mutable copy of this value's fields.
                public nonisolated var draft: Draft {
                    makeDraft()
                }

                /// A copy with several fields edited at once through a `Draft`, optional fields included.
                public nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
                    var draft = self.makeDraft()
                    try edit(&draft)
                    return Self(draft)
                }

                /// `Account` under construction: every field optional until `completed()`.
                public nonisolated struct Partial: Equatable {
                    public var id: String? = nil
                    var role: Role? = nil
                    fileprivate var passwordHash: String? = nil

                    /// An empty partial value.
                    public init() {
                    }
                    /// A partial value holding every field of `value`.
                    public init(_ value: ImmutableSelf) {
                        self.id = value.id
                        self.role = value.role
                        self.passwordHash = value.passwordHash
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    public func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let id = self.id, let role = self.role, let passwordHash = self.passwordHash else {
                            var missingFields: [String] = []
                            if self.id == nil {
                                missingFields.append("id")
                            }
                            if self.role == nil {
                                missingFields.append("role")
                            }
                            if self.passwordHash == nil {
                                missingFields.append("passwordHash")
                            }
                            throw Amber.IncompleteValueError(typeName: "Account", missingFields: missingFields)
                        }
                        return ImmutableSelf(id: id, role: role, passwordHash: passwordHash)
                    }
                }

                /// The settable stored properties, in declaration order.
                public nonisolated static var fieldNames: [String] {
                    ["id", "role", "passwordHash"]
                }

                /// Three-way merge, field by field: a field changed on one side takes that side;
                /// changed on both sides, it is settled by its `@Merge` strategy, or takes `mine` and is listed in `conflicts`.
                public nonisolated static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
                    var conflicts: [String] = []
                    let value = Self(
                        id: Amber._mergeField("id", base: base.id, mine: mine.id, theirs: theirs.id, conflicts: &conflicts),
                        role: Amber._mergeField("role", base: base.role, mine: mine.role, theirs: theirs.role, conflicts: &conflicts),
                        passwordHash: Amber._mergeField("passwordHash", base: base.passwordHash, mine: mine.passwordHash, theirs: theirs.passwordHash, conflicts: &conflicts)
                    )
                    return Amber.MergeResult(value: value, conflicts: conflicts)
                }
            }

            nonisolated extension Account: Amber.ImmutableModel {
            }

            nonisolated extension Account: Amber.Mergeable {
            }
            """
        }
    }

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

                /// A copy with `draft` replaced.
                nonisolated func with(draft: String) -> Self {
                    Self(draft: draft, children: self.children, parent: self.parent)
                }

                /// A copy with `children` replaced.
                nonisolated func with(children: [Self]) -> Self {
                    Self(draft: self.draft, children: children, parent: self.parent)
                }

                /// A copy with `parent` replaced; `nil` clears it.
                nonisolated func with(parent: Self?) -> Self {
                    Self(draft: self.draft, children: self.children, parent: parent)
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(draft: String? = nil, children: [Self]? = nil) -> Self {
                    Self(draft: draft ?? self.draft, children: children ?? self.children, parent: self.parent)
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
                    self.init(draft: draft.draft, children: draft.children, parent: draft.parent)
                }

                /// A mutable copy of this value's fields; `draft` in generic code.
                nonisolated func makeDraft() -> Draft {
                    Draft(draft: self.draft, children: self.children, parent: self.parent)
                }

                /// A copy with several fields edited at once through a `Draft`, optional fields included.
                nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
                    var draft = self.makeDraft()
                    try edit(&draft)
                    return Self(draft)
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
                        return ImmutableSelf(draft: draft, children: children, parent: self.parent)
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
        }
    }

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

                /// A copy with `id` replaced.
                nonisolated func with(id: UUID) -> Self {
                    Self(id: id, title: self.title)
                }

                /// A copy with `title` replaced.
                nonisolated func with(title: String) -> Self {
                    Self(id: self.id, title: title)
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(id: UUID? = nil, title: String? = nil) -> Self {
                    Self(id: id ?? self.id, title: title ?? self.title)
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
                    self.init(id: draft.id, title: draft.title)
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
                    return Self(draft)
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
                        return ImmutableSelf(id: id, title: title)
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

    @Test func conformancesAreReadByMeaning() {
        assertMacro {
            """
            @Immutable
            struct Note: Identifiable & Hashable, Swift.Sendable {
                let id: Int
            }
            """
        } expansion: {
            """
            struct Note: Identifiable & Hashable, Swift.Sendable {
                let id: Int

                nonisolated init(id: Int) {
                    self.id = id
                }

                /// A copy with `id` replaced.
                nonisolated func with(id: Int) -> Self {
                    Self(id: id)
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(id: Int? = nil) -> Self {
                    Self(id: id ?? self.id)
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Note`, turned back into a value with `Note(draft)`.
                nonisolated struct Draft: Sendable, Hashable {
                    var id: Int

                    init(id: Int) {
                        self.id = id
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(id: draft.id)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(id: self.id)
                }

                /// A mutable copy of this value's fields.
                nonisolated var draft: Draft {
                    makeDraft()
                }

                /// A copy with several fields edited at once through a `Draft`, optional fields included.
                nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
                    var draft = self.makeDraft()
                    try edit(&draft)
                    return Self(draft)
                }

                /// `Note` under construction: every field optional until `completed()`.
                nonisolated struct Partial: Sendable, Hashable {
                    var id: Int? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.id = value.id
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let id = self.id else {
                            var missingFields: [String] = []
                            if self.id == nil {
                                missingFields.append("id")
                            }
                            throw Amber.IncompleteValueError(typeName: "Note", missingFields: missingFields)
                        }
                        return ImmutableSelf(id: id)
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["id"]
                }

                /// Three-way merge, field by field: a field changed on one side takes that side;
                /// changed on both sides, it is settled by its `@Merge` strategy, or takes `mine` and is listed in `conflicts`.
                nonisolated static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
                    var conflicts: [String] = []
                    let value = Self(
                        id: Amber._mergeField("id", base: base.id, mine: mine.id, theirs: theirs.id, conflicts: &conflicts)
                    )
                    return Amber.MergeResult(value: value, conflicts: conflicts)
                }
            }

            nonisolated extension Note: Amber.ImmutableModel {
            }

            nonisolated extension Note: Amber.Mergeable {
            }
            """
        }
        assertMacro {
            """
            @Immutable
            struct Rank: Comparable, Codable {
                let value: Int
            }
            """
        } expansion: {
            """
            struct Rank: Comparable, Codable {
                let value: Int

                nonisolated init(value: Int) {
                    self.value = value
                }

                /// A copy with `value` replaced.
                nonisolated func with(value: Int) -> Self {
                    Self(value: value)
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(value: Int? = nil) -> Self {
                    Self(value: value ?? self.value)
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Rank`, turned back into a value with `Rank(draft)`.
                nonisolated struct Draft: Equatable, Codable {
                    var value: Int

                    init(value: Int) {
                        self.value = value
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(value: draft.value)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(value: self.value)
                }

                /// A mutable copy of this value's fields.
                nonisolated var draft: Draft {
                    makeDraft()
                }

                /// A copy with several fields edited at once through a `Draft`, optional fields included.
                nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
                    var draft = self.makeDraft()
                    try edit(&draft)
                    return Self(draft)
                }

                /// `Rank` under construction: every field optional until `completed()`.
                nonisolated struct Partial: Equatable, Codable {
                    var value: Int? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.value = value.value
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let value = self.value else {
                            var missingFields: [String] = []
                            if self.value == nil {
                                missingFields.append("value")
                            }
                            throw Amber.IncompleteValueError(typeName: "Rank", missingFields: missingFields)
                        }
                        return ImmutableSelf(value: value)
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["value"]
                }

                /// Three-way merge, field by field: a field changed on one side takes that side;
                /// changed on both sides, it is settled by its `@Merge` strategy, or takes `mine` and is listed in `conflicts`.
                nonisolated static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
                    var conflicts: [String] = []
                    let value = Self(
                        value: Amber._mergeField("value", base: base.value, mine: mine.value, theirs: theirs.value, conflicts: &conflicts)
                    )
                    return Amber.MergeResult(value: value, conflicts: conflicts)
                }
            }

            nonisolated extension Rank: Amber.ImmutableModel {
            }

            nonisolated extension Rank: Amber.Mergeable {
            }
            """
        }
    }

    @Test func uncheckedSendableIsMirroredUnchecked() {
        assertMacro {
            """
            @Immutable
            struct Cached: @unchecked Sendable {
                let cache: NSCache<NSString, NSString>
            }
            """
        } expansion: {
            """
            struct Cached: @unchecked Sendable {
                let cache: NSCache<NSString, NSString>

                nonisolated init(cache: NSCache<NSString, NSString>) {
                    self.cache = cache
                }

                /// A copy with `cache` replaced.
                nonisolated func with(cache: NSCache<NSString, NSString>) -> Self {
                    Self(cache: cache)
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(cache: NSCache<NSString, NSString>? = nil) -> Self {
                    Self(cache: cache ?? self.cache)
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Cached`, turned back into a value with `Cached(draft)`.
                nonisolated struct Draft: @unchecked Sendable {
                    var cache: NSCache<NSString, NSString>

                    init(cache: NSCache<NSString, NSString>) {
                        self.cache = cache
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(cache: draft.cache)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(cache: self.cache)
                }

                /// A mutable copy of this value's fields.
                nonisolated var draft: Draft {
                    makeDraft()
                }

                /// A copy with several fields edited at once through a `Draft`, optional fields included.
                nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
                    var draft = self.makeDraft()
                    try edit(&draft)
                    return Self(draft)
                }

                /// `Cached` under construction: every field optional until `completed()`.
                nonisolated struct Partial: @unchecked Sendable {
                    var cache: NSCache<NSString, NSString>? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.cache = value.cache
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let cache = self.cache else {
                            var missingFields: [String] = []
                            if self.cache == nil {
                                missingFields.append("cache")
                            }
                            throw Amber.IncompleteValueError(typeName: "Cached", missingFields: missingFields)
                        }
                        return ImmutableSelf(cache: cache)
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["cache"]
                }
            }

            nonisolated extension Cached: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func mergeableCanBeChosenExplicitly() {
        assertMacro {
            """
            @Immutable(mergeable: true)
            struct Note: AppModel {
                let id: Int
            }
            """
        } expansion: {
            """
            struct Note: AppModel {
                let id: Int

                nonisolated init(id: Int) {
                    self.id = id
                }

                /// A copy with `id` replaced.
                nonisolated func with(id: Int) -> Self {
                    Self(id: id)
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(id: Int? = nil) -> Self {
                    Self(id: id ?? self.id)
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Note`, turned back into a value with `Note(draft)`.
                nonisolated struct Draft {
                    var id: Int

                    init(id: Int) {
                        self.id = id
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(id: draft.id)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(id: self.id)
                }

                /// A mutable copy of this value's fields.
                nonisolated var draft: Draft {
                    makeDraft()
                }

                /// A copy with several fields edited at once through a `Draft`, optional fields included.
                nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
                    var draft = self.makeDraft()
                    try edit(&draft)
                    return Self(draft)
                }

                /// `Note` under construction: every field optional until `completed()`.
                nonisolated struct Partial {
                    var id: Int? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.id = value.id
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let id = self.id else {
                            var missingFields: [String] = []
                            if self.id == nil {
                                missingFields.append("id")
                            }
                            throw Amber.IncompleteValueError(typeName: "Note", missingFields: missingFields)
                        }
                        return ImmutableSelf(id: id)
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["id"]
                }

                /// Three-way merge, field by field: a field changed on one side takes that side;
                /// changed on both sides, it is settled by its `@Merge` strategy, or takes `mine` and is listed in `conflicts`.
                nonisolated static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
                    var conflicts: [String] = []
                    let value = Self(
                        id: Amber._mergeField("id", base: base.id, mine: mine.id, theirs: theirs.id, conflicts: &conflicts)
                    )
                    return Amber.MergeResult(value: value, conflicts: conflicts)
                }
            }

            nonisolated extension Note: Amber.ImmutableModel {
            }

            nonisolated extension Note: Amber.Mergeable {
            }
            """
        }
        assertMacro {
            """
            @Immutable(mergeable: false)
            struct Note: Hashable {
                let id: Int
            }
            """
        } expansion: {
            """
            struct Note: Hashable {
                let id: Int

                nonisolated init(id: Int) {
                    self.id = id
                }

                /// A copy with `id` replaced.
                nonisolated func with(id: Int) -> Self {
                    Self(id: id)
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(id: Int? = nil) -> Self {
                    Self(id: id ?? self.id)
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Note`, turned back into a value with `Note(draft)`.
                nonisolated struct Draft: Hashable {
                    var id: Int

                    init(id: Int) {
                        self.id = id
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(id: draft.id)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(id: self.id)
                }

                /// A mutable copy of this value's fields.
                nonisolated var draft: Draft {
                    makeDraft()
                }

                /// A copy with several fields edited at once through a `Draft`, optional fields included.
                nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
                    var draft = self.makeDraft()
                    try edit(&draft)
                    return Self(draft)
                }

                /// `Note` under construction: every field optional until `completed()`.
                nonisolated struct Partial: Hashable {
                    var id: Int? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.id = value.id
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let id = self.id else {
                            var missingFields: [String] = []
                            if self.id == nil {
                                missingFields.append("id")
                            }
                            throw Amber.IncompleteValueError(typeName: "Note", missingFields: missingFields)
                        }
                        return ImmutableSelf(id: id)
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["id"]
                }
            }

            nonisolated extension Note: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func handWrittenEqualityAndCodingAreNotMirrored() {
        assertMacro {
            """
            @Immutable
            struct Tappable: Hashable, Codable, Sendable {
                let id: Int
                let onTap: Action

                typealias Action = @Sendable () -> Void
                static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id }
                func hash(into hasher: inout Hasher) { hasher.combine(id) }
                init(from decoder: any Decoder) throws { fatalError() }
                func encode(to encoder: any Encoder) throws {}
            }
            """
        } expansion: {
            """
            struct Tappable: Hashable, Codable, Sendable {
                let id: Int
                let onTap: Action

                typealias Action = @Sendable () -> Void
                static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id }
                func hash(into hasher: inout Hasher) { hasher.combine(id) }
                init(from decoder: any Decoder) throws { fatalError() }
                func encode(to encoder: any Encoder) throws {}

                nonisolated init(id: Int, onTap: @escaping Action) {
                    self.id = id
                    self.onTap = onTap
                }

                /// A copy with `id` replaced.
                nonisolated func with(id: Int) -> Self {
                    Self(id: id, onTap: self.onTap)
                }

                /// A copy with `onTap` replaced.
                nonisolated func with(onTap: @escaping Action) -> Self {
                    Self(id: self.id, onTap: onTap)
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(id: Int? = nil, onTap: Action? = nil) -> Self {
                    Self(id: id ?? self.id, onTap: onTap ?? self.onTap)
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Tappable`, turned back into a value with `Tappable(draft)`.
                nonisolated struct Draft: Sendable {
                    var id: Int
                    var onTap: Action

                    init(id: Int, onTap: @escaping Action) {
                        self.id = id
                        self.onTap = onTap
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(id: draft.id, onTap: draft.onTap)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(id: self.id, onTap: self.onTap)
                }

                /// A mutable copy of this value's fields.
                nonisolated var draft: Draft {
                    makeDraft()
                }

                /// A copy with several fields edited at once through a `Draft`, optional fields included.
                nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
                    var draft = self.makeDraft()
                    try edit(&draft)
                    return Self(draft)
                }

                /// `Tappable` under construction: every field optional until `completed()`.
                nonisolated struct Partial: Sendable {
                    var id: Int? = nil
                    var onTap: Action? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.id = value.id
                        self.onTap = value.onTap
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let id = self.id, let onTap = self.onTap else {
                            var missingFields: [String] = []
                            if self.id == nil {
                                missingFields.append("id")
                            }
                            if self.onTap == nil {
                                missingFields.append("onTap")
                            }
                            throw Amber.IncompleteValueError(typeName: "Tappable", missingFields: missingFields)
                        }
                        return ImmutableSelf(id: id, onTap: onTap)
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["id", "onTap"]
                }

                /// Three-way merge, field by field: a field changed on one side takes that side;
                /// changed on both sides, it is settled by its `@Merge` strategy, or takes `mine` and is listed in `conflicts`.
                nonisolated static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
                    var conflicts: [String] = []
                    let value = Self(
                        id: Amber._mergeField("id", base: base.id, mine: mine.id, theirs: theirs.id, conflicts: &conflicts),
                        onTap: Amber._mergeField("onTap", base: base.onTap, mine: mine.onTap, theirs: theirs.onTap, conflicts: &conflicts)
                    )
                    return Amber.MergeResult(value: value, conflicts: conflicts)
                }
            }

            nonisolated extension Tappable: Amber.ImmutableModel {
            }

            nonisolated extension Tappable: Amber.Mergeable {
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

                /// A copy with `action` replaced.
                nonisolated func with(action: @escaping Action) -> Self {
                    Self(action: action, wrapped: self.wrapped, optional: self.optional)
                }

                /// A copy with `wrapped` replaced.
                nonisolated func with(wrapped: @escaping @Sendable () -> Void) -> Self {
                    Self(action: self.action, wrapped: wrapped, optional: self.optional)
                }

                /// A copy with `optional` replaced; `nil` clears it.
                nonisolated func with(optional: (() -> Void)?) -> Self {
                    Self(action: self.action, wrapped: self.wrapped, optional: optional)
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(action: Action? = nil, wrapped: (@Sendable () -> Void)? = nil) -> Self {
                    Self(action: action ?? self.action, wrapped: wrapped ?? self.wrapped, optional: self.optional)
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
                    self.init(action: draft.action, wrapped: draft.wrapped, optional: draft.optional)
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
                    return Self(draft)
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
                        return ImmutableSelf(action: action, wrapped: wrapped, optional: self.optional)
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
                    self.init(name: draft.name, title: draft.title)
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
                    var draft = self.makeDraft()
                    try edit(&draft)
                    return Self(draft)
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
                        return ImmutableSelf(name: name, title: self.title)
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
                    let value = Self(
                        name: Amber._mergeField("name", base: base.name, mine: mine.name, theirs: theirs.name, conflicts: &conflicts),
                        title: Amber._mergeField("title", base: base.title, mine: mine.title, theirs: theirs.title, conflicts: &conflicts)
                    )
                    return Amber.MergeResult(value: value, conflicts: conflicts)
                }

                @available(*, deprecated, message: "reads and writes deprecated fields for @Immutable; use init(_:) and makeDraft()")
                nonisolated init(_immutableFields fields: Draft) {
                    self.name = fields.name
                    self.title = fields.title
                }

                @available(*, deprecated, message: "reads and writes deprecated fields for @Immutable; use init(_:) and makeDraft()")
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

                /// A copy with `text` replaced.
                nonisolated func with(text: String) -> Self {
                    Self(text: text)
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(text: String? = nil) -> Self {
                    Self(text: text ?? self.text)
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
                    self.init(text: draft.text)
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
                    return Self(draft)
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
                        return ImmutableSelf(text: text)
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
                    let value = Self(
                        text: Amber._mergeField("text", base: base.text, mine: mine.text, theirs: theirs.text, conflicts: &conflicts)
                    )
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
                ╰─ 🛑 '@ImmutableIgnored' leaves 'wordCount' out of the generated initializer; give it an initial value, or write 'init(text:)' that sets it
                @ImmutableIgnored let kind = "document"
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
                    self.init(body: draft.body)
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
                    var draft = self.makeDraft()
                    try edit(&draft)
                    return Self(draft)
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
                        return ImmutableSelf(body: body)
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["body"]
                }

                @available(*, deprecated, message: "reads and writes deprecated fields for @Immutable; use init(_:) and makeDraft()")
                nonisolated init(_immutableFields fields: Draft) {
                    self.init(body: fields.body)
                }

                @available(*, deprecated, message: "reads and writes deprecated fields for @Immutable; use init(_:) and makeDraft()")
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

                    /// A copy with `old` replaced.
                    nonisolated func with(old: Int) -> Self {
                        Self(old: old)
                    }

                    /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                    /// Use `with` to change or clear an optional field.
                    nonisolated func update(old: Int? = nil) -> Self {
                        Self(old: old ?? self.old)
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
                        self.init(old: draft.old)
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
                        return Self(draft)
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
                            return ImmutableSelf(old: old)
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

    @Test func codingKeysAreMirroredOntoDraftAndPartial() {
        assertMacro {
            """
            @Immutable
            struct Article: Codable {
                let id: Int
                let title: String
                let kind = "article"

                enum CodingKeys: String, CodingKey {
                    case id, title = "headline"
                    case kind
                }
            }
            """
        } expansion: {
            """
            struct Article: Codable {
                let id: Int
                let title: String
                let kind = "article"

                enum CodingKeys: String, CodingKey {
                    case id, title = "headline"
                    case kind
                }

                nonisolated init(id: Int, title: String) {
                    self.id = id
                    self.title = title
                }

                /// A copy with `id` replaced.
                nonisolated func with(id: Int) -> Self {
                    Self(id: id, title: self.title)
                }

                /// A copy with `title` replaced.
                nonisolated func with(title: String) -> Self {
                    Self(id: self.id, title: title)
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(id: Int? = nil, title: String? = nil) -> Self {
                    Self(id: id ?? self.id, title: title ?? self.title)
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Article`, turned back into a value with `Article(draft)`.
                nonisolated struct Draft: Codable {
                    var id: Int
                    var title: String

                    init(id: Int, title: String) {
                        self.id = id
                        self.title = title
                    }

                    enum CodingKeys: String, CodingKey {
                        case id
                        case title = "headline"
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(id: draft.id, title: draft.title)
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
                    return Self(draft)
                }

                /// `Article` under construction: every field optional until `completed()`.
                nonisolated struct Partial: Codable {
                    var id: Int? = nil
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
                            throw Amber.IncompleteValueError(typeName: "Article", missingFields: missingFields)
                        }
                        return ImmutableSelf(id: id, title: title)
                    }

                    enum CodingKeys: String, CodingKey {
                        case id
                        case title = "headline"
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["id", "title"]
                }
            }

            nonisolated extension Article: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func codingKeysLeavingAFieldOutMakeTheMirrorsEncodableOnly() {
        assertMacro {
            """
            @Immutable
            struct Article: Codable {
                let id: Int
                let cache: String

                enum CodingKeys: CodingKey {
                    case id
                }
            }
            """
        } expansion: {
            """
            struct Article: Codable {
                let id: Int
                let cache: String

                enum CodingKeys: CodingKey {
                    case id
                }

                nonisolated init(id: Int, cache: String) {
                    self.id = id
                    self.cache = cache
                }

                /// A copy with `id` replaced.
                nonisolated func with(id: Int) -> Self {
                    Self(id: id, cache: self.cache)
                }

                /// A copy with `cache` replaced.
                nonisolated func with(cache: String) -> Self {
                    Self(id: self.id, cache: cache)
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(id: Int? = nil, cache: String? = nil) -> Self {
                    Self(id: id ?? self.id, cache: cache ?? self.cache)
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Article`, turned back into a value with `Article(draft)`.
                nonisolated struct Draft: Encodable {
                    var id: Int
                    var cache: String

                    init(id: Int, cache: String) {
                        self.id = id
                        self.cache = cache
                    }

                    enum CodingKeys: CodingKey {
                        case id
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(id: draft.id, cache: draft.cache)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(id: self.id, cache: self.cache)
                }

                /// A mutable copy of this value's fields.
                nonisolated var draft: Draft {
                    makeDraft()
                }

                /// A copy with several fields edited at once through a `Draft`, optional fields included.
                nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
                    var draft = self.makeDraft()
                    try edit(&draft)
                    return Self(draft)
                }

                /// `Article` under construction: every field optional until `completed()`.
                nonisolated struct Partial: Encodable {
                    var id: Int? = nil
                    var cache: String? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.id = value.id
                        self.cache = value.cache
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let id = self.id, let cache = self.cache else {
                            var missingFields: [String] = []
                            if self.id == nil {
                                missingFields.append("id")
                            }
                            if self.cache == nil {
                                missingFields.append("cache")
                            }
                            throw Amber.IncompleteValueError(typeName: "Article", missingFields: missingFields)
                        }
                        return ImmutableSelf(id: id, cache: cache)
                    }

                    enum CodingKeys: CodingKey {
                        case id
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["id", "cache"]
                }
            }

            nonisolated extension Article: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func mergeStrategies() {
        assertMacro {
            """
            @Immutable
            struct Note: Hashable {
                @Merge(.union) let tagIDs: [String]
                @Merge(.counter) let views: Int
                @Merge(.mine) let color: String
                @Merge(.theirs) let pinned: Bool
                @Merge(.latest(by: "modifiedAt")) let title: String
                let modifiedAt: Double
            }
            """
        } expansion: {
            """
            struct Note: Hashable {
                let tagIDs: [String]
                let views: Int
                let color: String
                let pinned: Bool
                let title: String
                let modifiedAt: Double

                nonisolated init(tagIDs: [String], views: Int, color: String, pinned: Bool, title: String, modifiedAt: Double) {
                    self.tagIDs = tagIDs
                    self.views = views
                    self.color = color
                    self.pinned = pinned
                    self.title = title
                    self.modifiedAt = modifiedAt
                }

                /// A copy with `tagIDs` replaced.
                nonisolated func with(tagIDs: [String]) -> Self {
                    Self(tagIDs: tagIDs, views: self.views, color: self.color, pinned: self.pinned, title: self.title, modifiedAt: self.modifiedAt)
                }

                /// A copy with `views` replaced.
                nonisolated func with(views: Int) -> Self {
                    Self(tagIDs: self.tagIDs, views: views, color: self.color, pinned: self.pinned, title: self.title, modifiedAt: self.modifiedAt)
                }

                /// A copy with `color` replaced.
                nonisolated func with(color: String) -> Self {
                    Self(tagIDs: self.tagIDs, views: self.views, color: color, pinned: self.pinned, title: self.title, modifiedAt: self.modifiedAt)
                }

                /// A copy with `pinned` replaced.
                nonisolated func with(pinned: Bool) -> Self {
                    Self(tagIDs: self.tagIDs, views: self.views, color: self.color, pinned: pinned, title: self.title, modifiedAt: self.modifiedAt)
                }

                /// A copy with `title` replaced.
                nonisolated func with(title: String) -> Self {
                    Self(tagIDs: self.tagIDs, views: self.views, color: self.color, pinned: self.pinned, title: title, modifiedAt: self.modifiedAt)
                }

                /// A copy with `modifiedAt` replaced.
                nonisolated func with(modifiedAt: Double) -> Self {
                    Self(tagIDs: self.tagIDs, views: self.views, color: self.color, pinned: self.pinned, title: self.title, modifiedAt: modifiedAt)
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(tagIDs: [String]? = nil, views: Int? = nil, color: String? = nil, pinned: Bool? = nil, title: String? = nil, modifiedAt: Double? = nil) -> Self {
                    Self(tagIDs: tagIDs ?? self.tagIDs, views: views ?? self.views, color: color ?? self.color, pinned: pinned ?? self.pinned, title: title ?? self.title, modifiedAt: modifiedAt ?? self.modifiedAt)
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Note`, turned back into a value with `Note(draft)`.
                nonisolated struct Draft: Hashable {
                    var tagIDs: [String]
                    var views: Int
                    var color: String
                    var pinned: Bool
                    var title: String
                    var modifiedAt: Double

                    init(tagIDs: [String], views: Int, color: String, pinned: Bool, title: String, modifiedAt: Double) {
                        self.tagIDs = tagIDs
                        self.views = views
                        self.color = color
                        self.pinned = pinned
                        self.title = title
                        self.modifiedAt = modifiedAt
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(tagIDs: draft.tagIDs, views: draft.views, color: draft.color, pinned: draft.pinned, title: draft.title, modifiedAt: draft.modifiedAt)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(tagIDs: self.tagIDs, views: self.views, color: self.color, pinned: self.pinned, title: self.title, modifiedAt: self.modifiedAt)
                }

                /// A mutable copy of this value's fields.
                nonisolated var draft: Draft {
                    makeDraft()
                }

                /// A copy with several fields edited at once through a `Draft`, optional fields included.
                nonisolated func updating(_ edit: (inout Draft) throws -> Void) rethrows -> Self {
                    var draft = self.makeDraft()
                    try edit(&draft)
                    return Self(draft)
                }

                /// `Note` under construction: every field optional until `completed()`.
                nonisolated struct Partial: Hashable {
                    var tagIDs: [String]? = nil
                    var views: Int? = nil
                    var color: String? = nil
                    var pinned: Bool? = nil
                    var title: String? = nil
                    var modifiedAt: Double? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.tagIDs = value.tagIDs
                        self.views = value.views
                        self.color = value.color
                        self.pinned = value.pinned
                        self.title = value.title
                        self.modifiedAt = value.modifiedAt
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let tagIDs = self.tagIDs, let views = self.views, let color = self.color, let pinned = self.pinned, let title = self.title, let modifiedAt = self.modifiedAt else {
                            var missingFields: [String] = []
                            if self.tagIDs == nil {
                                missingFields.append("tagIDs")
                            }
                            if self.views == nil {
                                missingFields.append("views")
                            }
                            if self.color == nil {
                                missingFields.append("color")
                            }
                            if self.pinned == nil {
                                missingFields.append("pinned")
                            }
                            if self.title == nil {
                                missingFields.append("title")
                            }
                            if self.modifiedAt == nil {
                                missingFields.append("modifiedAt")
                            }
                            throw Amber.IncompleteValueError(typeName: "Note", missingFields: missingFields)
                        }
                        return ImmutableSelf(tagIDs: tagIDs, views: views, color: color, pinned: pinned, title: title, modifiedAt: modifiedAt)
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["tagIDs", "views", "color", "pinned", "title", "modifiedAt"]
                }

                /// Three-way merge, field by field: a field changed on one side takes that side;
                /// changed on both sides, it is settled by its `@Merge` strategy, or takes `mine` and is listed in `conflicts`.
                nonisolated static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
                    var conflicts: [String] = []
                    let value = Self(
                        tagIDs: Amber._mergeUnion(base: base.tagIDs, mine: mine.tagIDs, theirs: theirs.tagIDs),
                        views: Amber._mergeCounter(base: base.views, mine: mine.views, theirs: theirs.views),
                        color: Amber._mergePreferring(base: base.color, mine: mine.color, theirs: theirs.color, mineWins: true),
                        pinned: Amber._mergePreferring(base: base.pinned, mine: mine.pinned, theirs: theirs.pinned, mineWins: false),
                        title: Amber._mergePreferring(base: base.title, mine: mine.title, theirs: theirs.title, mineWins: mine.modifiedAt >= theirs.modifiedAt),
                        modifiedAt: Amber._mergeField("modifiedAt", base: base.modifiedAt, mine: mine.modifiedAt, theirs: theirs.modifiedAt, conflicts: &conflicts)
                    )
                    return Amber.MergeResult(value: value, conflicts: conflicts)
                }
            }

            nonisolated extension Note: Amber.ImmutableModel {
            }

            nonisolated extension Note: Amber.Mergeable {
            }
            """
        }
    }

    @Test func mergeStrategyOnAModelWithoutMergeIsDiagnosed() {
        assertMacro {
            """
            @Immutable
            struct Note {
                @Merge(.union) let tagIDs: [String]
            }
            """
        } diagnostics: {
            """
            @Immutable
            struct Note {
                @Merge(.union) let tagIDs: [String]
                ┬─────────────
                ╰─ 🛑 '@Merge' has no 'merge' to act on: 'Note' is not Mergeable; declare 'Equatable' or 'Hashable', or write '@Immutable(mergeable: true)'
            }
            """
        }
    }

    @Test func unknownMergeStrategiesAreDiagnosed() {
        assertMacro {
            """
            @Immutable
            struct Note: Hashable {
                @Merge(.latest(by: "updatedAt")) let title: String
                @Merge(.sometimes) let text: String
            }
            """
        } diagnostics: {
            """
            @Immutable
            struct Note: Hashable {
                @Merge(.latest(by: "updatedAt")) let title: String
                       ┬───────────────────────
                       ╰─ 🛑 '.latest(by:)' names 'updatedAt', which is not a settable stored property of this model
                @Merge(.sometimes) let text: String
                       ┬─────────
                       ╰─ 🛑 unknown merge strategy '.sometimes'; use .union, .counter, .mine, .theirs or .latest(by: "field")
            }
            """
        }
    }
}
