import AmberMacros
import MacroTesting
import SwiftSyntaxMacroExpansion
import Testing

/// How isolation and access levels carry over to what `@Immutable` generates: main-actor models, private nested models, members no more visible than their fields.
@Suite(
    .macros(
        [
            "Immutable": MacroSpec(type: ImmutableMacro.self, conformances: ["ImmutableModel", "Mergeable"]),
            "Merge": MacroSpec(type: FieldMarkerMacro.self),
            "ImmutableIgnored": MacroSpec(type: FieldMarkerMacro.self),
        ]
    )
)
struct ImmutableIsolationMacroTests {
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
}
