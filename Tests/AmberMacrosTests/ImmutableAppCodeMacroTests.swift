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

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.title = fields.title
                }

                /// A copy with `title` replaced.
                nonisolated func with(title: String) -> Self {
                    updating {
                        $0.title = title
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(title: String? = nil) -> Self {
                    updating {
                        $0.title = title ?? $0.title
                    }
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
                    self.init(_immutableFields: draft)
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
                    return Self(_immutableFields: draft)
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
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(title: title))
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
                    var merged = mine.makeDraft()
                    merged.title = Amber._mergeField("title", base: base.title, mine: mine.title, theirs: theirs.title, conflicts: &conflicts)
                    let value: Self = Self(_immutableFields: merged)
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

                    /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                    nonisolated init(_immutableFields fields: Draft) {
                        self.id = fields.id
                    }

                    /// A copy with `id` replaced.
                    nonisolated func with(id: Int) -> Self {
                        updating {
                            $0.id = id
                        }
                    }

                    /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                    /// Use `with` to change or clear an optional field.
                    nonisolated func update(id: Int? = nil) -> Self {
                        updating {
                            $0.id = id ?? $0.id
                        }
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
                        self.init(_immutableFields: draft)
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
                        return Self(_immutableFields: draft)
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
                            return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(id: id))
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
                        var merged = mine.makeDraft()
                        merged.id = Amber._mergeField("id", base: base.id, mine: mine.id, theirs: theirs.id, conflicts: &conflicts)
                        let value: Self = Self(_immutableFields: merged)
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

                private nonisolated init(id: String, role: @autoclosure () -> Role, passwordHash: String) {
                    self.id = id
                    self.role = role()
                    self.passwordHash = passwordHash
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                public nonisolated init(_immutableFields fields: Draft) {
                    self.id = fields.id
                    self.role = fields.role
                    self.passwordHash = fields.passwordHash
                }

                /// A copy with `id` replaced.
                public nonisolated func with(id: String) -> Self {
                    updating {
                        $0.id = id
                    }
                }

                /// A copy with `role` replaced.
                nonisolated func with(role: @autoclosure () -> Role) -> Self {
                    updating {
                        $0.role = role()
                    }
                }

                /// A copy with `passwordHash` replaced.
                private nonisolated func with(passwordHash: String) -> Self {
                    updating {
                        $0.passwordHash = passwordHash
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                private nonisolated func update(id: String? = nil, role: Role? = nil, passwordHash: String? = nil) -> Self {
                    updating {
                        $0.id = id ?? $0.id
                        $0.role = role ?? $0.role
                        $0.passwordHash = passwordHash ?? $0.passwordHash
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                public typealias ImmutableSelf = Self

                /// A mutable mirror of `Account`, turned back into a value with `Account(draft)`.
                public nonisolated struct Draft: Equatable {
                    public var id: String
                    var role: Role
                    fileprivate var passwordHash: String

                    fileprivate init(id: String, role: @autoclosure () -> Role, passwordHash: String) {
                        self.id = id
                        self.role = role()
                        self.passwordHash = passwordHash
                    }
                }

                /// Creates a value from a finished draft.
                public nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
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
                    return Self(_immutableFields: draft)
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
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(id: id, role: role, passwordHash: passwordHash))
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
                    var merged = mine.makeDraft()
                    merged.id = Amber._mergeField("id", base: base.id, mine: mine.id, theirs: theirs.id, conflicts: &conflicts)
                    merged.role = Amber._mergeField("role", base: base.role, mine: mine.role, theirs: theirs.role, conflicts: &conflicts)
                    merged.passwordHash = Amber._mergeField("passwordHash", base: base.passwordHash, mine: mine.passwordHash, theirs: theirs.passwordHash, conflicts: &conflicts)
                    let value: Self = Self(_immutableFields: merged)
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

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.id = fields.id
                }

                /// A copy with `id` replaced.
                nonisolated func with(id: Int) -> Self {
                    updating {
                        $0.id = id
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(id: Int? = nil) -> Self {
                    updating {
                        $0.id = id ?? $0.id
                    }
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
                    self.init(_immutableFields: draft)
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
                    return Self(_immutableFields: draft)
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
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(id: id))
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
                    var merged = mine.makeDraft()
                    merged.id = Amber._mergeField("id", base: base.id, mine: mine.id, theirs: theirs.id, conflicts: &conflicts)
                    let value: Self = Self(_immutableFields: merged)
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

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.value = fields.value
                }

                /// A copy with `value` replaced.
                nonisolated func with(value: Int) -> Self {
                    updating {
                        $0.value = value
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(value: Int? = nil) -> Self {
                    updating {
                        $0.value = value ?? $0.value
                    }
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
                    self.init(_immutableFields: draft)
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
                    return Self(_immutableFields: draft)
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
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(value: value))
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
                    var merged = mine.makeDraft()
                    merged.value = Amber._mergeField("value", base: base.value, mine: mine.value, theirs: theirs.value, conflicts: &conflicts)
                    let value: Self = Self(_immutableFields: merged)
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

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.cache = fields.cache
                }

                /// A copy with `cache` replaced.
                nonisolated func with(cache: NSCache<NSString, NSString>) -> Self {
                    updating {
                        $0.cache = cache
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(cache: NSCache<NSString, NSString>? = nil) -> Self {
                    updating {
                        $0.cache = cache ?? $0.cache
                    }
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
                    self.init(_immutableFields: draft)
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
                    return Self(_immutableFields: draft)
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
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(cache: cache))
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

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.id = fields.id
                }

                /// A copy with `id` replaced.
                nonisolated func with(id: Int) -> Self {
                    updating {
                        $0.id = id
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(id: Int? = nil) -> Self {
                    updating {
                        $0.id = id ?? $0.id
                    }
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
                    self.init(_immutableFields: draft)
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
                    return Self(_immutableFields: draft)
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
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(id: id))
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
                    var merged = mine.makeDraft()
                    merged.id = Amber._mergeField("id", base: base.id, mine: mine.id, theirs: theirs.id, conflicts: &conflicts)
                    let value: Self = Self(_immutableFields: merged)
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

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.id = fields.id
                }

                /// A copy with `id` replaced.
                nonisolated func with(id: Int) -> Self {
                    updating {
                        $0.id = id
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(id: Int? = nil) -> Self {
                    updating {
                        $0.id = id ?? $0.id
                    }
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
                    self.init(_immutableFields: draft)
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
                    return Self(_immutableFields: draft)
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
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(id: id))
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
            #"""
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

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.id = fields.id
                    self.onTap = fields.onTap
                }

                /// A copy with `id` replaced.
                nonisolated func with(id: Int) -> Self {
                    updating {
                        $0.id = id
                    }
                }

                /// A copy with `onTap` replaced.
                nonisolated func with(onTap: @escaping Action) -> Self {
                    updating {
                        $0.onTap = onTap
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(id: Int? = nil, onTap: Action? = nil) -> Self {
                    updating {
                        $0.id = id ?? $0.id
                        $0.onTap = onTap ?? $0.onTap
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Tappable`, turned back into a value with `Tappable(draft)`.
                nonisolated struct Draft: Sendable, Hashable, Codable {
                    var id: Int
                    var onTap: Action

                    init(id: Int, onTap: @escaping Action) {
                        self.id = id
                        self.onTap = onTap
                    }

                    /// Compares as the model does.
                    static func == (lhs: Self, rhs: Self) -> Bool {
                        ImmutableSelf(lhs) == ImmutableSelf(rhs)
                    }

                    /// Hashes as the model does.
                    func hash(into hasher: inout Hasher) {
                        ImmutableSelf(self).hash(into: &hasher)
                    }

                    /// Encodes as the model does.
                    func encode(to encoder: any Encoder) throws {
                        try ImmutableSelf(self).encode(to: encoder)
                    }

                    /// Decodes the model's encoding.
                    init(from decoder: any Decoder) throws {
                        self = try ImmutableSelf(from: decoder).makeDraft()
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
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
                    return Self(_immutableFields: draft)
                }

                /// `Tappable` under construction: every field optional until `completed()`.
                nonisolated struct Partial: Sendable, Codable {
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
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(id: id, onTap: onTap))
                    }

                    /// Encodes the completed value as the model does.
                    /// - Throws: `EncodingError.invalidValue` while a non-optional field is `nil`.
                    func encode(to encoder: any Encoder) throws {
                        let value: ImmutableSelf
                        do {
                            value = try completed()
                        } catch {
                            throw EncodingError.invalidValue(
                                self, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "\(error)"))
                        }
                        try value.encode(to: encoder)
                    }

                    /// Decodes the model's encoding.
                    init(from decoder: any Decoder) throws {
                        self.init(try ImmutableSelf(from: decoder))
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
                    var merged = mine.makeDraft()
                    merged.id = Amber._mergeField("id", base: base.id, mine: mine.id, theirs: theirs.id, conflicts: &conflicts)
                    merged.onTap = Amber._mergeField("onTap", base: base.onTap, mine: mine.onTap, theirs: theirs.onTap, conflicts: &conflicts)
                    let value: Self = Self(_immutableFields: merged)
                    return Amber.MergeResult(value: value, conflicts: conflicts)
                }
            }

            nonisolated extension Tappable: Amber.ImmutableModel {
            }

            nonisolated extension Tappable: Amber.Mergeable {
            }
            """#
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

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.id = fields.id
                    self.title = fields.title
                }

                /// A copy with `id` replaced.
                nonisolated func with(id: Int) -> Self {
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
                nonisolated func update(id: Int? = nil, title: String? = nil) -> Self {
                    updating {
                        $0.id = id ?? $0.id
                        $0.title = title ?? $0.title
                    }
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
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(id: id, title: title))
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

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.id = fields.id
                    self.cache = fields.cache
                }

                /// A copy with `id` replaced.
                nonisolated func with(id: Int) -> Self {
                    updating {
                        $0.id = id
                    }
                }

                /// A copy with `cache` replaced.
                nonisolated func with(cache: String) -> Self {
                    updating {
                        $0.cache = cache
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(id: Int? = nil, cache: String? = nil) -> Self {
                    updating {
                        $0.id = id ?? $0.id
                        $0.cache = cache ?? $0.cache
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Article`, turned back into a value with `Article(draft)`.
                nonisolated struct Draft: Codable {
                    var id: Int
                    var cache: String

                    init(id: Int, cache: String) {
                        self.id = id
                        self.cache = cache
                    }

                    /// Encodes as the model does.
                    func encode(to encoder: any Encoder) throws {
                        try ImmutableSelf(self).encode(to: encoder)
                    }

                    /// Decodes the model's encoding.
                    init(from decoder: any Decoder) throws {
                        self = try ImmutableSelf(from: decoder).makeDraft()
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
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
                    return Self(_immutableFields: draft)
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
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(id: id, cache: cache))
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

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.tagIDs = fields.tagIDs
                    self.views = fields.views
                    self.color = fields.color
                    self.pinned = fields.pinned
                    self.title = fields.title
                    self.modifiedAt = fields.modifiedAt
                }

                /// A copy with `tagIDs` replaced.
                nonisolated func with(tagIDs: [String]) -> Self {
                    updating {
                        $0.tagIDs = tagIDs
                    }
                }

                /// A copy with `views` replaced.
                nonisolated func with(views: Int) -> Self {
                    updating {
                        $0.views = views
                    }
                }

                /// A copy with `color` replaced.
                nonisolated func with(color: String) -> Self {
                    updating {
                        $0.color = color
                    }
                }

                /// A copy with `pinned` replaced.
                nonisolated func with(pinned: Bool) -> Self {
                    updating {
                        $0.pinned = pinned
                    }
                }

                /// A copy with `title` replaced.
                nonisolated func with(title: String) -> Self {
                    updating {
                        $0.title = title
                    }
                }

                /// A copy with `modifiedAt` replaced.
                nonisolated func with(modifiedAt: Double) -> Self {
                    updating {
                        $0.modifiedAt = modifiedAt
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(tagIDs: [String]? = nil, views: Int? = nil, color: String? = nil, pinned: Bool? = nil, title: String? = nil, modifiedAt: Double? = nil) -> Self {
                    updating {
                        $0.tagIDs = tagIDs ?? $0.tagIDs
                        $0.views = views ?? $0.views
                        $0.color = color ?? $0.color
                        $0.pinned = pinned ?? $0.pinned
                        $0.title = title ?? $0.title
                        $0.modifiedAt = modifiedAt ?? $0.modifiedAt
                    }
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
                    self.init(_immutableFields: draft)
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
                    return Self(_immutableFields: draft)
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
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(tagIDs: tagIDs, views: views, color: color, pinned: pinned, title: title, modifiedAt: modifiedAt))
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
                    var merged = mine.makeDraft()
                    merged.tagIDs = Amber._mergeUnion(base: base.tagIDs, mine: mine.tagIDs, theirs: theirs.tagIDs)
                    merged.views = Amber._mergeCounter(base: base.views, mine: mine.views, theirs: theirs.views)
                    merged.color = Amber._mergePreferring(base: base.color, mine: mine.color, theirs: theirs.color, mineWins: true)
                    merged.pinned = Amber._mergePreferring(base: base.pinned, mine: mine.pinned, theirs: theirs.pinned, mineWins: false)
                    merged.title = Amber._mergePreferring(base: base.title, mine: mine.title, theirs: theirs.title, mineWins: mine.modifiedAt >= theirs.modifiedAt)
                    merged.modifiedAt = Amber._mergeField("modifiedAt", base: base.modifiedAt, mine: mine.modifiedAt, theirs: theirs.modifiedAt, conflicts: &conflicts)
                    let value: Self = Self(_immutableFields: merged)
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
