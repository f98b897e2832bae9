import AmberMacros
import MacroTesting
import SwiftSyntaxMacroExpansion
import Testing

/// The three-way `merge`: chosen explicitly, per-field `@Merge(...)` strategies and their diagnostics.
@Suite(
    .macros(
        [
            "Immutable": MacroSpec(type: ImmutableMacro.self, conformances: ["ImmutableModel", "Mergeable"]),
            "Merge": MacroSpec(type: FieldMarkerMacro.self),
            "ImmutableIgnored": MacroSpec(type: FieldMarkerMacro.self),
        ]
    )
)
struct ImmutableMergeMacroTests {
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
