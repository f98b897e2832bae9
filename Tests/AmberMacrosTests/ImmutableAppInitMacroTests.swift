import AmberMacros
import MacroTesting
import SwiftSyntaxMacroExpansion
import Testing

/// Expansions for models with initializers and names of their own: generated members build
/// values through `init(_immutableFields:)`, never through the app's initializers.
@Suite(
    .macros(
        [
            "Immutable": MacroSpec(type: ImmutableMacro.self, conformances: ["ImmutableModel", "Mergeable"]),
            "ImmutableIgnored": MacroSpec(type: FieldMarkerMacro.self),
            "ImmutableDefault": MacroSpec(type: FieldMarkerMacro.self),
        ]
    )
)
struct ImmutableAppInitMacroTests {
    @Test func failableInitializerOfOtherTypesIsNeverCalled() {
        assertMacro {
            """
            @Immutable
            struct FeedItem: Hashable {
                let link: URL
                let title: String

                init?(link: String, title: String) {
                    guard let url = URL(string: link) else { return nil }
                    self.link = url
                    self.title = title
                }
            }
            """
        } expansion: {
            """
            struct FeedItem: Hashable {
                let link: URL
                let title: String

                init?(link: String, title: String) {
                    guard let url = URL(string: link) else { return nil }
                    self.link = url
                    self.title = title
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.link = fields.link
                    self.title = fields.title
                }

                /// A copy with `link` replaced.
                nonisolated func with(link: URL) -> Self {
                    updating {
                        $0.link = link
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
                nonisolated func update(link: URL? = nil, title: String? = nil) -> Self {
                    updating {
                        $0.link = link ?? $0.link
                        $0.title = title ?? $0.title
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `FeedItem`, turned back into a value with `FeedItem(draft)`.
                nonisolated struct Draft: Hashable {
                    var link: URL
                    var title: String

                    init(link: URL, title: String) {
                        self.link = link
                        self.title = title
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(link: self.link, title: self.title)
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

                /// `FeedItem` under construction: every field optional until `completed()`.
                nonisolated struct Partial: Hashable {
                    var link: URL? = nil
                    var title: String? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.link = value.link
                        self.title = value.title
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let link = self.link, let title = self.title else {
                            var missingFields: [String] = []
                            if self.link == nil {
                                missingFields.append("link")
                            }
                            if self.title == nil {
                                missingFields.append("title")
                            }
                            throw Amber.IncompleteValueError(typeName: "FeedItem", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(link: link, title: title))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["link", "title"]
                }

                /// Three-way merge, field by field: a field changed on one side takes that side;
                /// changed on both sides, it is settled by its `@Merge` strategy, or takes `mine` and is listed in `conflicts`.
                nonisolated static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
                    var conflicts: [String] = []
                    var merged = mine.makeDraft()
                    merged.link = Amber._mergeField("link", base: base.link, mine: mine.link, theirs: theirs.link, conflicts: &conflicts)
                    merged.title = Amber._mergeField("title", base: base.title, mine: mine.title, theirs: theirs.title, conflicts: &conflicts)
                    let value: Self = Self(_immutableFields: merged)
                    return Amber.MergeResult(value: value, conflicts: conflicts)
                }
            }

            nonisolated extension FeedItem: Amber.ImmutableModel {
            }

            nonisolated extension FeedItem: Amber.Mergeable {
            }
            """
        }
    }

    @Test func appTypeNamedDraftKeepsItsMeaning() {
        assertMacro {
            """
            @Immutable
            struct Message: Codable {
                let id: Int
                let reply: Draft?
                let upload: Partial
            }
            """
        } expansion: {
            """
            struct Message: Codable {
                let id: Int
                let reply: Draft?
                let upload: Partial

                nonisolated init(id: Int, reply: Draft? = nil, upload: @autoclosure () -> Partial) {
                    self.id = id
                    self.reply = reply
                    self.upload = upload()
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: ImmutableDraft) {
                    self.id = fields.id
                    self.reply = fields.reply
                    self.upload = fields.upload
                }

                /// A copy with `id` replaced.
                nonisolated func with(id: Int) -> Self {
                    updating {
                        $0.id = id
                    }
                }

                /// A copy with `reply` replaced; `nil` clears it.
                nonisolated func with(reply: Draft?) -> Self {
                    updating {
                        $0.reply = reply
                    }
                }

                /// A copy with `upload` replaced.
                nonisolated func with(upload: @autoclosure () -> Partial) -> Self {
                    updating {
                        $0.upload = upload()
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(id: Int? = nil, upload: Partial? = nil) -> Self {
                    updating {
                        $0.id = id ?? $0.id
                        $0.upload = upload ?? $0.upload
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Message`, turned back into a value with `Message(draft)`.
                nonisolated struct ImmutableDraft: Codable {
                    var id: Int
                    var reply: Draft?
                    var upload: Partial

                    init(id: Int, reply: Draft?, upload: @autoclosure () -> Partial) {
                        self.id = id
                        self.reply = reply
                        self.upload = upload()
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: ImmutableDraft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> ImmutableDraft {
                    ImmutableDraft(id: self.id, reply: self.reply, upload: self.upload)
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

                /// `Message` under construction: every field optional until `completed()`.
                nonisolated struct ImmutablePartial: Codable {
                    var id: Int? = nil
                    var reply: Draft? = nil
                    var upload: Partial? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.id = value.id
                        self.reply = value.reply
                        self.upload = value.upload
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let id = self.id, let upload = self.upload else {
                            var missingFields: [String] = []
                            if self.id == nil {
                                missingFields.append("id")
                            }
                            if self.upload == nil {
                                missingFields.append("upload")
                            }
                            throw Amber.IncompleteValueError(typeName: "Message", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.ImmutableDraft(id: id, reply: self.reply, upload: upload))
                    }
                }

                /// The builder, `Partial` in `ImmutableModel`.
                nonisolated static var _immutablePartialType: ImmutablePartial.Type {
                    ImmutablePartial.self
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["id", "reply", "upload"]
                }
            }

            nonisolated extension Message: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func modelNestedInAPrivateTypeGetsNoExtension() {
        assertMacro {
            """
            struct ContentView {
                private struct Section {
                    @Immutable
                    struct Row: Equatable {
                        let title: String
                    }
                }
            }
            """
        } expansion: {
            """
            struct ContentView {
                private struct Section {
                    struct Row: Equatable {
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

                        /// A mutable mirror of `Row`, turned back into a value with `Row(draft)`.
                        nonisolated struct Draft: Equatable {
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

                        /// `Row` under construction: every field optional until `completed()`.
                        nonisolated struct Partial: Equatable {
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
                                    throw Amber.IncompleteValueError(typeName: "Row", missingFields: missingFields)
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
                }
            }
            """
        }
    }

    @Test func privateFieldTypeIsDiagnosedWithAFixIt() {
        assertMacro {
            """
            @Immutable
            public struct Gallery {
                private final class Cache {}
                private let cache: Cache
            }
            """
        } diagnostics: {
            """
            @Immutable
            public struct Gallery {
                private final class Cache {}
                ┬──────
                ╰─ 🛑 'cache' is mirrored in 'Draft' and 'Partial', which cannot hold a 'private' type of the model; make 'Cache' 'fileprivate'
                   ✏️ Make 'Cache' 'fileprivate'
                private let cache: Cache
            }
            """
        } fixes: {
            """
            @Immutable
            public struct Gallery {
                fileprivate final class Cache {}
                private let cache: Cache
            }
            """
        } expansion: {
            """
            public struct Gallery {
                fileprivate final class Cache {}
                private let cache: Cache

                private nonisolated init(cache: Cache) {
                    self.cache = cache
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                public nonisolated init(_immutableFields fields: Draft) {
                    self.cache = fields.cache
                }

                /// A copy with `cache` replaced.
                private nonisolated func with(cache: Cache) -> Self {
                    updating {
                        $0.cache = cache
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                private nonisolated func update(cache: Cache? = nil) -> Self {
                    updating {
                        $0.cache = cache ?? $0.cache
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                public typealias ImmutableSelf = Self

                /// A mutable mirror of `Gallery`, turned back into a value with `Gallery(draft)`.
                public nonisolated struct Draft {
                    fileprivate var cache: Cache

                    fileprivate init(cache: Cache) {
                        self.cache = cache
                    }
                }

                /// Creates a value from a finished draft.
                public nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                public nonisolated func makeDraft() -> Draft {
                    Draft(cache: self.cache)
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

                /// `Gallery` under construction: every field optional until `completed()`.
                public nonisolated struct Partial {
                    fileprivate var cache: Cache? = nil

                    /// An empty partial value.
                    public init() {
                    }
                    /// A partial value holding every field of `value`.
                    public init(_ value: ImmutableSelf) {
                        self.cache = value.cache
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    public func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let cache = self.cache else {
                            var missingFields: [String] = []
                            if self.cache == nil {
                                missingFields.append("cache")
                            }
                            throw Amber.IncompleteValueError(typeName: "Gallery", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(cache: cache))
                    }
                }

                /// The settable stored properties, in declaration order.
                public nonisolated static var fieldNames: [String] {
                    ["cache"]
                }
            }

            nonisolated extension Gallery: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func functionTypealiasDeclaredElsewhere() {
        assertMacro {
            """
            @Immutable
            struct Chip {
                let label: String
                let onTap: TapHandler
                let onHold: TapHandler?
            }
            """
        } expansion: {
            """
            struct Chip {
                let label: String
                let onTap: TapHandler
                let onHold: TapHandler?

                nonisolated init(label: String, onTap: @autoclosure () -> TapHandler, onHold: TapHandler? = nil) {
                    self.label = label
                    self.onTap = onTap()
                    self.onHold = onHold
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.label = fields.label
                    self.onTap = fields.onTap
                    self.onHold = fields.onHold
                }

                /// A copy with `label` replaced.
                nonisolated func with(label: String) -> Self {
                    updating {
                        $0.label = label
                    }
                }

                /// A copy with `onTap` replaced.
                nonisolated func with(onTap: @autoclosure () -> TapHandler) -> Self {
                    updating {
                        $0.onTap = onTap()
                    }
                }

                /// A copy with `onHold` replaced; `nil` clears it.
                nonisolated func with(onHold: TapHandler?) -> Self {
                    updating {
                        $0.onHold = onHold
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(label: String? = nil, onTap: TapHandler? = nil) -> Self {
                    updating {
                        $0.label = label ?? $0.label
                        $0.onTap = onTap ?? $0.onTap
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Chip`, turned back into a value with `Chip(draft)`.
                nonisolated struct Draft {
                    var label: String
                    var onTap: TapHandler
                    var onHold: TapHandler?

                    init(label: String, onTap: @autoclosure () -> TapHandler, onHold: TapHandler?) {
                        self.label = label
                        self.onTap = onTap()
                        self.onHold = onHold
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(label: self.label, onTap: self.onTap, onHold: self.onHold)
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

                /// `Chip` under construction: every field optional until `completed()`.
                nonisolated struct Partial {
                    var label: String? = nil
                    var onTap: TapHandler? = nil
                    var onHold: TapHandler? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.label = value.label
                        self.onTap = value.onTap
                        self.onHold = value.onHold
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let label = self.label, let onTap = self.onTap else {
                            var missingFields: [String] = []
                            if self.label == nil {
                                missingFields.append("label")
                            }
                            if self.onTap == nil {
                                missingFields.append("onTap")
                            }
                            throw Amber.IncompleteValueError(typeName: "Chip", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(label: label, onTap: onTap, onHold: self.onHold))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["label", "onTap", "onHold"]
                }
            }

            nonisolated extension Chip: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func handWrittenConformancesReachDraftThroughTheModel() {
        assertMacro {
            """
            @Immutable
            struct Event: Hashable, Codable {
                let id: Int
                let name: String

                init(from decoder: any Decoder) throws {
                    fatalError()
                }
                func encode(to encoder: any Encoder) throws {}
                static func == (lhs: Event, rhs: Event) -> Bool { lhs.id == rhs.id }
                func hash(into hasher: inout Hasher) { hasher.combine(id) }
            }
            """
        } expansion: {
            #"""
            struct Event: Hashable, Codable {
                let id: Int
                let name: String

                init(from decoder: any Decoder) throws {
                    fatalError()
                }
                func encode(to encoder: any Encoder) throws {}
                static func == (lhs: Event, rhs: Event) -> Bool { lhs.id == rhs.id }
                func hash(into hasher: inout Hasher) { hasher.combine(id) }

                nonisolated init(id: Int, name: String) {
                    self.id = id
                    self.name = name
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.id = fields.id
                    self.name = fields.name
                }

                /// A copy with `id` replaced.
                nonisolated func with(id: Int) -> Self {
                    updating {
                        $0.id = id
                    }
                }

                /// A copy with `name` replaced.
                nonisolated func with(name: String) -> Self {
                    updating {
                        $0.name = name
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(id: Int? = nil, name: String? = nil) -> Self {
                    updating {
                        $0.id = id ?? $0.id
                        $0.name = name ?? $0.name
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Event`, turned back into a value with `Event(draft)`.
                nonisolated struct Draft: Hashable, Codable {
                    var id: Int
                    var name: String

                    init(id: Int, name: String) {
                        self.id = id
                        self.name = name
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
                    Draft(id: self.id, name: self.name)
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

                /// `Event` under construction: every field optional until `completed()`.
                nonisolated struct Partial: Codable {
                    var id: Int? = nil
                    var name: String? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.id = value.id
                        self.name = value.name
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let id = self.id, let name = self.name else {
                            var missingFields: [String] = []
                            if self.id == nil {
                                missingFields.append("id")
                            }
                            if self.name == nil {
                                missingFields.append("name")
                            }
                            throw Amber.IncompleteValueError(typeName: "Event", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(id: id, name: name))
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
                    ["id", "name"]
                }

                /// Three-way merge, field by field: a field changed on one side takes that side;
                /// changed on both sides, it is settled by its `@Merge` strategy, or takes `mine` and is listed in `conflicts`.
                nonisolated static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
                    var conflicts: [String] = []
                    var merged = mine.makeDraft()
                    merged.id = Amber._mergeField("id", base: base.id, mine: mine.id, theirs: theirs.id, conflicts: &conflicts)
                    merged.name = Amber._mergeField("name", base: base.name, mine: mine.name, theirs: theirs.name, conflicts: &conflicts)
                    let value: Self = Self(_immutableFields: merged)
                    return Amber.MergeResult(value: value, conflicts: conflicts)
                }
            }

            nonisolated extension Event: Amber.ImmutableModel {
            }

            nonisolated extension Event: Amber.Mergeable {
            }
            """#
        }
    }

    @Test func varWithInitialValueGetsADefaultedLetFixIt() {
        assertMacro {
            """
            @Immutable
            struct Counter {
                var count = 0
                var tags: [String] = []
                var title: String
                var unknown = makeValue()
            }
            """
        } diagnostics: {
            """
            @Immutable
            struct Counter {
                var count = 0
                    ┬────
                    ╰─ 🛑 stored property 'count' of an immutable model must be 'let'
                       ✏️ Replace with 'let' of type 'Int', its initial value the default of the generated initializer
                var tags: [String] = []
                    ┬───
                    ╰─ 🛑 stored property 'tags' of an immutable model must be 'let'
                       ✏️ Replace with 'let' of type '[String]', its initial value the default of the generated initializer
                var title: String
                    ┬────
                    ╰─ 🛑 stored property 'title' of an immutable model must be 'let'
                       ✏️ Replace 'var' with 'let'
                var unknown = makeValue()
                    ┬──────
                    ╰─ 🛑 stored property 'unknown' of an immutable model must be 'let'
            }
            """
        }
    }

    @Test func varFixItKeepsTheFieldAField() {
        assertMacro {
            """
            @Immutable
            struct Counter {
                let name: String
                var tags: [String] = []
            }
            """
        } diagnostics: {
            """
            @Immutable
            struct Counter {
                let name: String
                var tags: [String] = []
                    ┬───
                    ╰─ 🛑 stored property 'tags' of an immutable model must be 'let'
                       ✏️ Replace with 'let' of type '[String]', its initial value the default of the generated initializer
            }
            """
        } fixes: {
            """
            @Immutable
            struct Counter {
                let name: String
                @ImmutableDefault([] as [String]) let tags: [String]
            }
            """
        } expansion: {
            """
            struct Counter {
                let name: String
                let tags: [String]

                nonisolated init(name: String, tags: [String] = [] as [String]) {
                    self.name = name
                    self.tags = tags
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.name = fields.name
                    self.tags = fields.tags
                }

                /// A copy with `name` replaced.
                nonisolated func with(name: String) -> Self {
                    updating {
                        $0.name = name
                    }
                }

                /// A copy with `tags` replaced.
                nonisolated func with(tags: [String]) -> Self {
                    updating {
                        $0.tags = tags
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(name: String? = nil, tags: [String]? = nil) -> Self {
                    updating {
                        $0.name = name ?? $0.name
                        $0.tags = tags ?? $0.tags
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Counter`, turned back into a value with `Counter(draft)`.
                nonisolated struct Draft {
                    var name: String
                    var tags: [String]

                    init(name: String, tags: [String]) {
                        self.name = name
                        self.tags = tags
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(name: self.name, tags: self.tags)
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

                /// `Counter` under construction: every field optional until `completed()`.
                nonisolated struct Partial {
                    var name: String? = nil
                    var tags: [String]? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.name = value.name
                        self.tags = value.tags
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let name = self.name, let tags = self.tags else {
                            var missingFields: [String] = []
                            if self.name == nil {
                                missingFields.append("name")
                            }
                            if self.tags == nil {
                                missingFields.append("tags")
                            }
                            throw Amber.IncompleteValueError(typeName: "Counter", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(name: name, tags: tags))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["name", "tags"]
                }
            }

            nonisolated extension Counter: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func defaultsOfTheGeneratedInitializer() {
        assertMacro {
            """
            @Immutable
            struct Counter {
                let name: String
                @ImmutableDefault(0) let count: Int
            }
            """
        } expansion: {
            """
            struct Counter {
                let name: String
                let count: Int

                nonisolated init(name: String, count: Int = 0) {
                    self.name = name
                    self.count = count
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.name = fields.name
                    self.count = fields.count
                }

                /// A copy with `name` replaced.
                nonisolated func with(name: String) -> Self {
                    updating {
                        $0.name = name
                    }
                }

                /// A copy with `count` replaced.
                nonisolated func with(count: Int) -> Self {
                    updating {
                        $0.count = count
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(name: String? = nil, count: Int? = nil) -> Self {
                    updating {
                        $0.name = name ?? $0.name
                        $0.count = count ?? $0.count
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Counter`, turned back into a value with `Counter(draft)`.
                nonisolated struct Draft {
                    var name: String
                    var count: Int

                    init(name: String, count: Int) {
                        self.name = name
                        self.count = count
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(name: self.name, count: self.count)
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

                /// `Counter` under construction: every field optional until `completed()`.
                nonisolated struct Partial {
                    var name: String? = nil
                    var count: Int? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.name = value.name
                        self.count = value.count
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let name = self.name, let count = self.count else {
                            var missingFields: [String] = []
                            if self.name == nil {
                                missingFields.append("name")
                            }
                            if self.count == nil {
                                missingFields.append("count")
                            }
                            throw Amber.IncompleteValueError(typeName: "Counter", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(name: name, count: count))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["name", "count"]
                }
            }

            nonisolated extension Counter: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func ignoredPropertyWithAFailableInitializerIsDiagnosed() {
        assertMacro {
            """
            @Immutable
            struct Document {
                let text: String
                @ImmutableIgnored let wordCount: Int

                init?(text: String) {
                    self.text = text
                    self.wordCount = 0
                }
            }
            """
        } diagnostics: {
            """
            @Immutable
            struct Document {
                let text: String
                @ImmutableIgnored let wordCount: Int
                ┬────────────────
                ╰─ 🛑 '@ImmutableIgnored' leaves 'wordCount' to the initializer with the fields' labels, which every copy goes through; it must be 'init(text: String)', taking each field as declared, and neither fail nor throw

                init?(text: String) {
                    self.text = text
                    self.wordCount = 0
                }
            }
            """
        }
    }
}
