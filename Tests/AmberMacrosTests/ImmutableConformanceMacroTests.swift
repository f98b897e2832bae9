import AmberMacros
import MacroTesting
import SwiftSyntaxMacroExpansion
import Testing

/// Which conformances `Draft` and `Partial` mirror from the model: read by meaning, `@unchecked Sendable`, hand-written equality and coding, `CodingKeys`.
@Suite(
    .macros(
        [
            "Immutable": MacroSpec(type: ImmutableMacro.self, conformances: ["ImmutableModel", "Mergeable"]),
            "Merge": MacroSpec(type: FieldMarkerMacro.self),
            "ImmutableIgnored": MacroSpec(type: FieldMarkerMacro.self),
        ]
    )
)
struct ImmutableConformanceMacroTests {
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
}
