import AmberMacros
import MacroTesting
import SwiftSyntaxMacroExpansion
import Testing

@Suite(
    .macros(
        ["Immutable": MacroSpec(type: ImmutableMacro.self, conformances: ["ImmutableModel", "Mergeable"])]
    )
)
struct ImmutableMacroTests {
    @Test func plainStruct() {
        assertMacro {
            """
            @Immutable
            struct Person: Identifiable, Hashable, Codable, Sendable {
                let id: String
                let name: String
                let age: Int
                let job: String?
            }
            """
        } expansion: {
            """
            struct Person: Identifiable, Hashable, Codable, Sendable {
                let id: String
                let name: String
                let age: Int
                let job: String?

                nonisolated init(id: String, name: String, age: Int, job: String? = nil) {
                    self.id = id
                    self.name = name
                    self.age = age
                    self.job = job
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.id = fields.id
                    self.name = fields.name
                    self.age = fields.age
                    self.job = fields.job
                }

                /// A copy with `id` replaced.
                nonisolated func with(id: String) -> Self {
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

                /// A copy with `age` replaced.
                nonisolated func with(age: Int) -> Self {
                    updating {
                        $0.age = age
                    }
                }

                /// A copy with `job` replaced; `nil` clears it.
                nonisolated func with(job: String?) -> Self {
                    updating {
                        $0.job = job
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(id: String? = nil, name: String? = nil, age: Int? = nil) -> Self {
                    updating {
                        $0.id = id ?? $0.id
                        $0.name = name ?? $0.name
                        $0.age = age ?? $0.age
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Person`, turned back into a value with `Person(draft)`.
                nonisolated struct Draft: Sendable, Hashable, Codable {
                    var id: String
                    var name: String
                    var age: Int
                    var job: String?

                    init(id: String, name: String, age: Int, job: String?) {
                        self.id = id
                        self.name = name
                        self.age = age
                        self.job = job
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(id: self.id, name: self.name, age: self.age, job: self.job)
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

                /// `Person` under construction: every field optional until `completed()`.
                nonisolated struct Partial: Sendable, Hashable, Codable {
                    var id: String? = nil
                    var name: String? = nil
                    var age: Int? = nil
                    var job: String? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.id = value.id
                        self.name = value.name
                        self.age = value.age
                        self.job = value.job
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let id = self.id, let name = self.name, let age = self.age else {
                            var missingFields: [String] = []
                            if self.id == nil {
                                missingFields.append("id")
                            }
                            if self.name == nil {
                                missingFields.append("name")
                            }
                            if self.age == nil {
                                missingFields.append("age")
                            }
                            throw Amber.IncompleteValueError(typeName: "Person", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(id: id, name: name, age: age, job: self.job))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["id", "name", "age", "job"]
                }

                /// Three-way merge, field by field: a field changed on one side takes that side;
                /// changed on both sides, it is settled by its `@Merge` strategy, or takes `mine` and is listed in `conflicts`.
                nonisolated static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
                    var conflicts: [String] = []
                    var merged = mine.makeDraft()
                    merged.id = Amber._mergeField("id", base: base.id, mine: mine.id, theirs: theirs.id, conflicts: &conflicts)
                    merged.name = Amber._mergeField("name", base: base.name, mine: mine.name, theirs: theirs.name, conflicts: &conflicts)
                    merged.age = Amber._mergeField("age", base: base.age, mine: mine.age, theirs: theirs.age, conflicts: &conflicts)
                    merged.job = Amber._mergeField("job", base: base.job, mine: mine.job, theirs: theirs.job, conflicts: &conflicts)
                    let value: Self = Self(_immutableFields: merged)
                    return Amber.MergeResult(value: value, conflicts: conflicts)
                }
            }

            nonisolated extension Person: Amber.ImmutableModel {
            }

            nonisolated extension Person: Amber.Mergeable {
            }
            """
        }
    }

    @Test func publicStruct() {
        assertMacro {
            """
            @Immutable
            public struct Tag: Equatable {
                public let id: Int
                public let name: String
            }
            """
        } expansion: {
            """
            public struct Tag: Equatable {
                public let id: Int
                public let name: String

                public nonisolated init(id: Int, name: String) {
                    self.id = id
                    self.name = name
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                public nonisolated init(_immutableFields fields: Draft) {
                    self.id = fields.id
                    self.name = fields.name
                }

                /// A copy with `id` replaced.
                public nonisolated func with(id: Int) -> Self {
                    updating {
                        $0.id = id
                    }
                }

                /// A copy with `name` replaced.
                public nonisolated func with(name: String) -> Self {
                    updating {
                        $0.name = name
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                public nonisolated func update(id: Int? = nil, name: String? = nil) -> Self {
                    updating {
                        $0.id = id ?? $0.id
                        $0.name = name ?? $0.name
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                public typealias ImmutableSelf = Self

                /// A mutable mirror of `Tag`, turned back into a value with `Tag(draft)`.
                public nonisolated struct Draft: Equatable {
                    public var id: Int
                    public var name: String

                    public init(id: Int, name: String) {
                        self.id = id
                        self.name = name
                    }
                }

                /// Creates a value from a finished draft.
                public nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                public nonisolated func makeDraft() -> Draft {
                    Draft(id: self.id, name: self.name)
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

                /// `Tag` under construction: every field optional until `completed()`.
                public nonisolated struct Partial: Equatable {
                    public var id: Int? = nil
                    public var name: String? = nil

                    /// An empty partial value.
                    public init() {
                    }
                    /// A partial value holding every field of `value`.
                    public init(_ value: ImmutableSelf) {
                        self.id = value.id
                        self.name = value.name
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    public func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let id = self.id, let name = self.name else {
                            var missingFields: [String] = []
                            if self.id == nil {
                                missingFields.append("id")
                            }
                            if self.name == nil {
                                missingFields.append("name")
                            }
                            throw Amber.IncompleteValueError(typeName: "Tag", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(id: id, name: name))
                    }
                }

                /// The settable stored properties, in declaration order.
                public nonisolated static var fieldNames: [String] {
                    ["id", "name"]
                }

                /// Three-way merge, field by field: a field changed on one side takes that side;
                /// changed on both sides, it is settled by its `@Merge` strategy, or takes `mine` and is listed in `conflicts`.
                public nonisolated static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
                    var conflicts: [String] = []
                    var merged = mine.makeDraft()
                    merged.id = Amber._mergeField("id", base: base.id, mine: mine.id, theirs: theirs.id, conflicts: &conflicts)
                    merged.name = Amber._mergeField("name", base: base.name, mine: mine.name, theirs: theirs.name, conflicts: &conflicts)
                    let value: Self = Self(_immutableFields: merged)
                    return Amber.MergeResult(value: value, conflicts: conflicts)
                }
            }

            nonisolated extension Tag: Amber.ImmutableModel {
            }

            nonisolated extension Tag: Amber.Mergeable {
            }
            """
        }
    }

    @Test func privateStructGetsFileprivateMembers() {
        assertMacro {
            """
            @Immutable
            private struct Secret {
                let value: String
            }
            """
        } expansion: {
            """
            private struct Secret {
                let value: String

                nonisolated init(value: String) {
                    self.value = value
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.value = fields.value
                }

                /// A copy with `value` replaced.
                nonisolated func with(value: String) -> Self {
                    updating {
                        $0.value = value
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(value: String? = nil) -> Self {
                    updating {
                        $0.value = value ?? $0.value
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Secret`, turned back into a value with `Secret(draft)`.
                nonisolated struct Draft {
                    var value: String

                    init(value: String) {
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

                /// `Secret` under construction: every field optional until `completed()`.
                nonisolated struct Partial {
                    var value: String? = nil

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
                            throw Amber.IncompleteValueError(typeName: "Secret", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(value: value))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["value"]
                }
            }

            nonisolated extension Secret: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func genericStruct() {
        assertMacro {
            """
            @Immutable
            struct Box<Content: Hashable>: Hashable {
                let content: Content
                let label: Optional<String>
            }
            """
        } expansion: {
            """
            struct Box<Content: Hashable>: Hashable {
                let content: Content
                let label: Optional<String>

                nonisolated init(content: Content, label: Optional<String> = nil) {
                    self.content = content
                    self.label = label
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.content = fields.content
                    self.label = fields.label
                }

                /// A copy with `content` replaced.
                nonisolated func with(content: Content) -> Self {
                    updating {
                        $0.content = content
                    }
                }

                /// A copy with `label` replaced; `nil` clears it.
                nonisolated func with(label: Optional<String>) -> Self {
                    updating {
                        $0.label = label
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(content: Content? = nil) -> Self {
                    updating {
                        $0.content = content ?? $0.content
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Box`, turned back into a value with `Box(draft)`.
                nonisolated struct Draft: Hashable {
                    var content: Content
                    var label: Optional<String>

                    init(content: Content, label: Optional<String>) {
                        self.content = content
                        self.label = label
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(content: self.content, label: self.label)
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

                /// `Box` under construction: every field optional until `completed()`.
                nonisolated struct Partial: Hashable {
                    var content: Content? = nil
                    var label: Optional<String> = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.content = value.content
                        self.label = value.label
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let content = self.content else {
                            var missingFields: [String] = []
                            if self.content == nil {
                                missingFields.append("content")
                            }
                            throw Amber.IncompleteValueError(typeName: "Box", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(content: content, label: self.label))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["content", "label"]
                }

                /// Three-way merge, field by field: a field changed on one side takes that side;
                /// changed on both sides, it is settled by its `@Merge` strategy, or takes `mine` and is listed in `conflicts`.
                nonisolated static func merge(base: Self, mine: Self, theirs: Self) -> Amber.MergeResult<Self> {
                    var conflicts: [String] = []
                    var merged = mine.makeDraft()
                    merged.content = Amber._mergeField("content", base: base.content, mine: mine.content, theirs: theirs.content, conflicts: &conflicts)
                    merged.label = Amber._mergeField("label", base: base.label, mine: mine.label, theirs: theirs.label, conflicts: &conflicts)
                    let value: Self = Self(_immutableFields: merged)
                    return Amber.MergeResult(value: value, conflicts: conflicts)
                }
            }

            nonisolated extension Box: Amber.ImmutableModel {
            }

            nonisolated extension Box: Amber.Mergeable {
            }
            """
        }
    }

    @Test func optionalsOnly() {
        assertMacro {
            """
            @Immutable
            struct Filter {
                let text: String?
                let limit: Swift.Optional<Int>
            }
            """
        } expansion: {
            """
            struct Filter {
                let text: String?
                let limit: Swift.Optional<Int>

                nonisolated init(text: String? = nil, limit: Swift.Optional<Int> = nil) {
                    self.text = text
                    self.limit = limit
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.text = fields.text
                    self.limit = fields.limit
                }

                /// A copy with `text` replaced; `nil` clears it.
                nonisolated func with(text: String?) -> Self {
                    updating {
                        $0.text = text
                    }
                }

                /// A copy with `limit` replaced; `nil` clears it.
                nonisolated func with(limit: Swift.Optional<Int>) -> Self {
                    updating {
                        $0.limit = limit
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update() -> Self {
                    self
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Filter`, turned back into a value with `Filter(draft)`.
                nonisolated struct Draft {
                    var text: String?
                    var limit: Swift.Optional<Int>

                    init(text: String?, limit: Swift.Optional<Int>) {
                        self.text = text
                        self.limit = limit
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(text: self.text, limit: self.limit)
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

                /// `Filter` under construction: every field optional until `completed()`.
                nonisolated struct Partial {
                    var text: String? = nil
                    var limit: Swift.Optional<Int> = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.text = value.text
                        self.limit = value.limit
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(text: self.text, limit: self.limit))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["text", "limit"]
                }
            }

            nonisolated extension Filter: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func propertyWithInitialValueIsLeftOut() {
        assertMacro {
            """
            @Immutable
            struct Event {
                let kind = "event"
                let name: String
            }
            """
        } expansion: {
            """
            struct Event {
                let kind = "event"
                let name: String

                nonisolated init(name: String) {
                    self.name = name
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.name = fields.name
                }

                /// A copy with `name` replaced.
                nonisolated func with(name: String) -> Self {
                    updating {
                        $0.name = name
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

                /// A mutable mirror of `Event`, turned back into a value with `Event(draft)`.
                nonisolated struct Draft {
                    var name: String

                    init(name: String) {
                        self.name = name
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(name: self.name)
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
                nonisolated struct Partial {
                    var name: String? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.name = value.name
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let name = self.name else {
                            var missingFields: [String] = []
                            if self.name == nil {
                                missingFields.append("name")
                            }
                            throw Amber.IncompleteValueError(typeName: "Event", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(name: name))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["name"]
                }
            }

            nonisolated extension Event: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func computedAndStaticPropertiesAreIgnored() {
        assertMacro {
            """
            @Immutable
            struct Person {
                let age: Int
                var isAdult: Bool { age >= 18 }
                var description: String {
                    get { "\\(age)" }
                }
                static let species = "human"
                static var count: Int = 0
            }
            """
        } expansion: {
            #"""
            struct Person {
                let age: Int
                var isAdult: Bool { age >= 18 }
                var description: String {
                    get { "\(age)" }
                }
                static let species = "human"
                static var count: Int = 0

                nonisolated init(age: Int) {
                    self.age = age
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.age = fields.age
                }

                /// A copy with `age` replaced.
                nonisolated func with(age: Int) -> Self {
                    updating {
                        $0.age = age
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(age: Int? = nil) -> Self {
                    updating {
                        $0.age = age ?? $0.age
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Person`, turned back into a value with `Person(draft)`.
                nonisolated struct Draft {
                    var age: Int

                    init(age: Int) {
                        self.age = age
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(age: self.age)
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

                /// `Person` under construction: every field optional until `completed()`.
                nonisolated struct Partial {
                    var age: Int? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.age = value.age
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let age = self.age else {
                            var missingFields: [String] = []
                            if self.age == nil {
                                missingFields.append("age")
                            }
                            throw Amber.IncompleteValueError(typeName: "Person", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(age: age))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["age"]
                }
            }

            nonisolated extension Person: Amber.ImmutableModel {
            }
            """#
        }
    }

    @Test func severalBindingsShareATypeAnnotation() {
        assertMacro {
            """
            @Immutable
            struct Point {
                let x, y: Double
            }
            """
        } expansion: {
            """
            struct Point {
                let x, y: Double

                nonisolated init(x: Double, y: Double) {
                    self.x = x
                    self.y = y
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.x = fields.x
                    self.y = fields.y
                }

                /// A copy with `x` replaced.
                nonisolated func with(x: Double) -> Self {
                    updating {
                        $0.x = x
                    }
                }

                /// A copy with `y` replaced.
                nonisolated func with(y: Double) -> Self {
                    updating {
                        $0.y = y
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(x: Double? = nil, y: Double? = nil) -> Self {
                    updating {
                        $0.x = x ?? $0.x
                        $0.y = y ?? $0.y
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Point`, turned back into a value with `Point(draft)`.
                nonisolated struct Draft {
                    var x: Double
                    var y: Double

                    init(x: Double, y: Double) {
                        self.x = x
                        self.y = y
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(x: self.x, y: self.y)
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

                /// `Point` under construction: every field optional until `completed()`.
                nonisolated struct Partial {
                    var x: Double? = nil
                    var y: Double? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.x = value.x
                        self.y = value.y
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let x = self.x, let y = self.y else {
                            var missingFields: [String] = []
                            if self.x == nil {
                                missingFields.append("x")
                            }
                            if self.y == nil {
                                missingFields.append("y")
                            }
                            throw Amber.IncompleteValueError(typeName: "Point", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(x: x, y: y))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["x", "y"]
                }
            }

            nonisolated extension Point: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func notAStruct() {
        assertMacro {
            """
            @Immutable
            class Person {
                let name: String
            }
            """
        } diagnostics: {
            """
            @Immutable
            ┬─────────
            ╰─ 🛑 '@Immutable' can only be applied to a struct
            class Person {
                let name: String
            }
            """
        }
        assertMacro {
            """
            @Immutable
            enum Direction {
                case up
            }
            """
        } diagnostics: {
            """
            @Immutable
            ┬─────────
            ╰─ 🛑 '@Immutable' can only be applied to a struct
            enum Direction {
                case up
            }
            """
        }
        assertMacro {
            """
            @Immutable
            actor Counter {
                let count: Int
            }
            """
        } diagnostics: {
            """
            @Immutable
            ┬─────────
            ╰─ 🛑 '@Immutable' can only be applied to a struct
            actor Counter {
                let count: Int
            }
            """
        }
    }

    @Test func storedVarHasFixIt() {
        assertMacro {
            """
            @Immutable
            struct Person {
                let name: String
                var age: Int
            }
            """
        } diagnostics: {
            """
            @Immutable
            struct Person {
                let name: String
                var age: Int
                    ┬──
                    ╰─ 🛑 stored property 'age' of an immutable model must be 'let'
                       ✏️ Replace 'var' with 'let'
            }
            """
        } fixes: {
            """
            @Immutable
            struct Person {
                let name: String
                let age: Int
            }
            """
        } expansion: {
            """
            struct Person {
                let name: String
                let age: Int

                nonisolated init(name: String, age: Int) {
                    self.name = name
                    self.age = age
                }

                /// A value holding exactly the fields of `fields`; what every member that `@Immutable` generates builds values with.
                nonisolated init(_immutableFields fields: Draft) {
                    self.name = fields.name
                    self.age = fields.age
                }

                /// A copy with `name` replaced.
                nonisolated func with(name: String) -> Self {
                    updating {
                        $0.name = name
                    }
                }

                /// A copy with `age` replaced.
                nonisolated func with(age: Int) -> Self {
                    updating {
                        $0.age = age
                    }
                }

                /// A copy with the given non-optional fields replaced; a `nil` argument keeps the current value.
                /// Use `with` to change or clear an optional field.
                nonisolated func update(name: String? = nil, age: Int? = nil) -> Self {
                    updating {
                        $0.name = name ?? $0.name
                        $0.age = age ?? $0.age
                    }
                }

                /// This model, named so from `Draft` and `Partial`, where `Self` means themselves.
                typealias ImmutableSelf = Self

                /// A mutable mirror of `Person`, turned back into a value with `Person(draft)`.
                nonisolated struct Draft {
                    var name: String
                    var age: Int

                    init(name: String, age: Int) {
                        self.name = name
                        self.age = age
                    }
                }

                /// Creates a value from a finished draft.
                nonisolated init(_ draft: Draft) {
                    self.init(_immutableFields: draft)
                }

                /// A mutable copy of this value's fields, as `draft`.
                nonisolated func makeDraft() -> Draft {
                    Draft(name: self.name, age: self.age)
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

                /// `Person` under construction: every field optional until `completed()`.
                nonisolated struct Partial {
                    var name: String? = nil
                    var age: Int? = nil

                    /// An empty partial value.
                    init() {
                    }
                    /// A partial value holding every field of `value`.
                    init(_ value: ImmutableSelf) {
                        self.name = value.name
                        self.age = value.age
                    }
                    /// The finished value.
                    /// - Throws: `IncompleteValueError` naming the non-optional fields still `nil`, in declaration order.
                    func completed() throws(Amber.IncompleteValueError) -> ImmutableSelf {
                        guard let name = self.name, let age = self.age else {
                            var missingFields: [String] = []
                            if self.name == nil {
                                missingFields.append("name")
                            }
                            if self.age == nil {
                                missingFields.append("age")
                            }
                            throw Amber.IncompleteValueError(typeName: "Person", missingFields: missingFields)
                        }
                        return ImmutableSelf(_immutableFields: ImmutableSelf.Draft(name: name, age: age))
                    }
                }

                /// The settable stored properties, in declaration order.
                nonisolated static var fieldNames: [String] {
                    ["name", "age"]
                }
            }

            nonisolated extension Person: Amber.ImmutableModel {
            }
            """
        }
    }

    @Test func observedVarIsStoredWithoutFixIt() {
        assertMacro {
            """
            @Immutable
            struct Person {
                var age: Int {
                    didSet { print(age) }
                }
            }
            """
        } diagnostics: {
            """
            @Immutable
            struct Person {
                var age: Int {
                    ┬──
                    ╰─ 🛑 stored property 'age' of an immutable model must be 'let'
                    didSet { print(age) }
                }
            }
            """
        }
    }

    @Test func missingTypeAnnotation() {
        assertMacro {
            """
            @Immutable
            struct Person {
                let name
            }
            """
        } diagnostics: {
            """
            @Immutable
            struct Person {
                let name
                    ┬───
                    ╰─ 🛑 '@Immutable' needs an explicit type for 'name'
            }
            """
        }
    }
}
