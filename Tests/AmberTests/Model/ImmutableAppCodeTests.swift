import Amber
import AmberTestSupport
import Foundation
import Testing

// `@Immutable` on model code shaped like real apps'. Each declaration here failed to
// compile before; the tests check that the generated API means what the user wrote.

// MARK: 1. Isolation: an explicitly main-actor model in plain Swift 6 mode

@MainActor @Immutable
struct ScreenState: Hashable, Sendable {
    let title: String
    let count: Int
}

// MARK: 2. Private and fileprivate nested models

struct Timeline {
    /// Declares its conformances: a private nested type cannot be extended at file scope.
    @Immutable
    private struct Row: Hashable, Sendable, ImmutableModel, Mergeable {
        let id: Int
        let title: String
    }

    /// Declares none: it still gets every member.
    @Immutable
    private struct Badge {
        let count: Int
    }

    @Immutable
    fileprivate struct Header: Equatable {
        let text: String
    }

    static func exerciseNestedModels() throws {
        let row = Row(id: 1, title: "a")
        #expect(row.with(title: "b").title == "b")
        #expect(
            Row.merge(base: row, mine: row.with(title: "m"), theirs: row.with(id: 2)).value == Row(id: 2, title: "m"))
        #expect(try Row.Partial(row).completed() == row)
        #expect(isImmutableModel(Row.self) && isMergeable(Row.self))
        #expect(Badge(count: 1).updating { $0.count += 1 }.count == 2)
        #expect(Badge(Badge(count: 3).draft).count == 3, "`draft` without the ImmutableModel conformance")
        #expect(!isImmutableModel(Badge.self))
        #expect(Header(text: "x").update(text: "y") == Header(text: "y"))
        #expect(isMergeable(Header.self))
    }
}

// MARK: 3. Access per property

/// Internal: a public model can hold it in a field that is not public.
struct Role: Hashable, Sendable {
    let name: String
}

@Immutable
public struct Account: Hashable, Sendable {
    public let id: String
    let role: Role
    private let passwordHash: String
    public let nickname: String?
}

extension Account {
    /// The only way in from outside the type: the memberwise `init` is private, like `passwordHash`.
    static func signUp(id: String, role: Role, password: String) -> Account {
        Account(id: id, role: role, passwordHash: String(password.reversed()), nickname: nil)
    }

    func checks(_ password: String) -> Bool { passwordHash == String(password.reversed()) }
}

// MARK: 4. Name hygiene

enum Hygiene {
    @Immutable
    struct Draft: Hashable, Codable, Sendable {
        let id: Int
        let text: String
    }

    @Immutable
    struct Partial: Equatable {
        let value: Int
    }

    @Immutable
    struct Document: Hashable {
        let title: String
        let draft: String
    }

    @Immutable
    struct Node: Hashable, Codable {
        let name: String
        let children: [Self]
        let parents: [Node]
    }
}

// MARK: 5. An initializer the model already has

@Immutable
struct TodoItem: Identifiable, Hashable {
    let id: UUID
    let title: String

    init(id: UUID = UUID(), title: String) {
        self.id = id
        self.title = title
    }
}

// MARK: 6. `#if` around what is not a field

@Immutable
struct Build: Equatable {
    let version: String
    #if DEBUG
        let channel = "debug"
        var isDebug: Bool { true }
    #else
        let channel = "release"
    #endif
}

// MARK: 7. Conformances by meaning

typealias AppModel = Identifiable & Hashable & Sendable

@Immutable
struct Composed: Identifiable & Hashable, Sendable {
    let id: Int
    let text: String
}

@Immutable(mergeable: true)
struct Aliased: AppModel {
    let id: Int
    let text: String
}

@Immutable
struct Ranked: Comparable {
    let rank: Int
    static func < (lhs: Ranked, rhs: Ranked) -> Bool { lhs.rank < rhs.rank }
}

@Immutable(mergeable: true)
struct EquatableInExtension {
    let text: String
}

extension EquatableInExtension: Equatable {}

/// Mergeable on request although its fields are not `Equatable` as declared.
@Immutable(mergeable: true)
struct Envelope: Sendable {
    let payload: any Sendable
    let onOpen: @Sendable () -> String
}

/// Equality and coding skip the closure, so `Draft` cannot synthesize them: it goes through the model.
@Immutable
struct Tappable: Identifiable, Equatable, Codable {
    let id: Int
    let onTap: @Sendable () -> Void

    enum CodingKeys: CodingKey { case id }

    init(id: Int, onTap: @escaping @Sendable () -> Void) {
        self.id = id
        self.onTap = onTap
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try container.decode(Int.self, forKey: .id), onTap: {})
    }

    static func == (lhs: Tappable, rhs: Tappable) -> Bool { lhs.id == rhs.id }
}

/// A mutable class, not `Sendable`.
final class Scratchpad {
    var lines: [String] = []
}

/// Not `Sendable` by its fields: `Draft` and `Partial` must not claim a checked `Sendable`.
@Immutable
struct Cached: @unchecked Sendable {
    let scratchpad: Scratchpad
}

// MARK: 8. Closure fields

@Immutable
struct Button {
    typealias Action = @Sendable () -> Void
    let title: String
    let action: Action
    let wrapped: (@Sendable () -> Void)
    let onHold: (@Sendable () -> Void)?
}

// MARK: 9. Custom coding keys

@Immutable
struct Article: Codable, Equatable {
    let id: Int
    let title: String
    let body: String?
    let kind = "article"

    enum CodingKeys: String, CodingKey {
        case id, title = "headline"
        case body = "text"
        case kind
    }
}

@Suite(.boundedConcurrency) struct ImmutableAppCodeTests {
    @Test func mainActorModelIsEditedAndMergedOffTheMainActor() async {
        let state = ScreenState(title: "a", count: 1)
        let merged = await Task.detached {
            ScreenState.merge(base: state, mine: state.with(count: 2), theirs: state.update(title: "b"))
        }.value
        #expect(merged.value == ScreenState(title: "b", count: 2))
    }

    @Test func privateNestedModels() throws {
        try Timeline.exerciseNestedModels()
    }

    @Test func membersAreNoMoreVisibleThanTheirFields() {
        let account = Account.signUp(id: "a", role: Role(name: "admin"), password: "secret")
        #expect(account.with(nickname: "Al").with(role: Role(name: "guest")).checks("secret"))
        let draft = account.draft
        #expect(draft.role == Role(name: "admin"))
        #expect(draft.passwordHash == "terces", "fileprivate in Draft: visible in this file only")
        #expect(Account(draft) == account)
        #expect(Account.fieldNames == ["id", "role", "passwordHash", "nickname"])
    }

    @Test func modelsNamedDraftAndPartial() throws {
        let draft = Hygiene.Draft(id: 1, text: "a")
        let edited = draft.updating { $0.text = "b" }
        #expect(edited == Hygiene.Draft(id: 1, text: "b"))
        var partial = Hygiene.Draft.Partial()
        partial.id = 2
        partial.text = "c"
        #expect(try partial.completed() == Hygiene.Draft(id: 2, text: "c"))
        #expect(try Hygiene.Partial.Partial(Hygiene.Partial(value: 3)).completed() == Hygiene.Partial(value: 3))
    }

    @Test func fieldNamedDraftKeepsItsMeaning() {
        let document = Hygiene.Document(title: "t", draft: "first lines")
        #expect(document.draft == "first lines")
        #expect(document.makeDraft() == Hygiene.Document.Draft(title: "t", draft: "first lines"))
        func genericDraft<Model: ImmutableModel>(_ model: Model) -> Model.Draft { model.draft }
        #expect(genericDraft(document).title == "t")
        #expect(document.updating { $0.draft = "more" }.draft == "more")
    }

    @Test func fieldsTypedWithTheModelItself() throws {
        let leaf = Hygiene.Node(name: "leaf", children: [], parents: [])
        let root = Hygiene.Node(name: "root", children: [leaf], parents: [])
        var draft = root.draft
        draft.children.append(leaf.with(name: "other"))
        #expect(Hygiene.Node(draft).children.map(\.name) == ["leaf", "other"])
        var partial = Hygiene.Node.Partial(leaf)
        partial.parents = [root]
        #expect(try partial.completed().parents == [root])
    }

    @Test func existingInitializerIsKept() {
        let item = TodoItem(title: "groceries")
        #expect(item.with(title: "errands").id == item.id)
        #expect(TodoItem(item.draft) == item)
    }

    @Test func propertiesInsideIfWithInitialValuesAreNotFields() {
        #expect(Build.fieldNames == ["version"])
        #expect(Build(version: "1").with(version: "2").version == "2")
    }

    @Test func mergeableByMeaning() {
        #expect(isMergeable(Composed.self))
        #expect(isMergeable(Aliased.self))
        #expect(isMergeable(Ranked.self))
        #expect(isMergeable(EquatableInExtension.self))
        let text = EquatableInExtension(text: "a")
        #expect(EquatableInExtension.merge(base: text, mine: text, theirs: text.with(text: "b")).value.text == "b")
        #expect(isHashable(Composed.Draft.self))
        #expect(isEquatable(Ranked.Draft.self))
    }

    @Test func uncheckedSendableModel() async {
        let cached = Cached(scratchpad: Scratchpad())
        let draft = await Task.detached { cached.draft }.value
        #expect(Cached(draft).scratchpad === cached.scratchpad)
    }

    @Test func fieldsThatAreNotEquatableAsDeclaredStillMerge() {
        let base = Envelope(payload: 1, onOpen: { "base" })
        let result = Envelope.merge(base: base, mine: base.with(onOpen: { "mine" }), theirs: base.with(payload: 2))
        #expect(result.value.payload as? Int == 2, "Equatable at run time: merged as usual")
        #expect(result.value.onOpen() == "mine", "a closure cannot be compared: mine")
        let conflict = Envelope.merge(base: base, mine: base.with(payload: "m"), theirs: base.with(payload: 3))
        #expect(conflict.value.payload as? String == "m")
        #expect(conflict.conflicts == ["payload"])
    }

    @Test func handWrittenEqualityAndCodingReachDraftThroughTheModel() throws {
        let tappable = Tappable(id: 1, onTap: {})
        #expect(isMergeable(Tappable.self))
        #expect(tappable.draft == tappable.with(onTap: { print("other") }).draft, "compared as the model: by id")
        let decoded = try JSONDecoder().decode(Tappable.Draft.self, from: Data(#"{"id": 4}"#.utf8))
        #expect(decoded.id == 4)
        let partial = try JSONDecoder().decode(Tappable.Partial.self, from: Data(#"{"id": 5}"#.utf8))
        #expect(partial.id == 5, "decoded through the model")
        #expect(throws: EncodingError.self, "only a complete partial encodes") {
            try JSONEncoder().encode(Tappable.Partial())
        }
        let merged = Tappable.merge(base: tappable, mine: tappable, theirs: tappable.with(id: 2))
        #expect(merged.value.id == 2)
        #expect(merged.conflicts.isEmpty)
    }

    @Test func closureFieldsEscape() {
        let counter = CallCounter()
        let button = Button(title: "Go", action: { counter.increment() }, wrapped: { counter.increment() })
        let copy = button.with(title: "Stop").with(action: { counter.increment(by: 10) })
        copy.action()
        copy.wrapped()
        #expect(counter.value == 11)
        #expect(copy.onHold == nil)
        #expect(Button.fieldNames == ["title", "action", "wrapped", "onHold"])
    }

    @Test func customCodingKeysDecodeAsDraftAndPartial() throws {
        let json = Data(#"{"id": 1, "headline": "Hello", "text": "World", "kind": "article"}"#.utf8)
        let article = try JSONDecoder().decode(Article.self, from: json)
        #expect(Article(try JSONDecoder().decode(Article.Draft.self, from: json)) == article)
        let partial = try JSONDecoder().decode(Article.Partial.self, from: Data(#"{"headline": "Hi"}"#.utf8))
        #expect(partial.title == "Hi")
        #expect(throws: IncompleteValueError(typeName: "Article", missingFields: ["id"])) { try partial.completed() }
        let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(article.draft)) as? [String: Any]
        #expect(Set(encoded?.keys ?? [:].keys) == ["id", "headline", "text"])
    }
}

/// Counts the calls of closures stored in models.
private final class CallCounter: @unchecked Sendable {
    // Only touched from one test task at a time.
    private(set) var value = 0
    func increment(by amount: Int = 1) { value += amount }
}

// Conformance checks through `Any.Type`, which the compiler cannot decide ahead of the run.
private func isMergeable(_ type: Any.Type) -> Bool { type is any Mergeable.Type }
private func isImmutableModel(_ type: Any.Type) -> Bool { type is any ImmutableModel.Type }
private func isHashable(_ type: Any.Type) -> Bool { type is any Hashable.Type }
private func isEquatable(_ type: Any.Type) -> Bool { type is any Equatable.Type }

// MARK: 8. Deprecated fields: no warning from generated code (the build has none)

@Immutable
struct Legacy: Hashable, Codable, Sendable {
    let id: Int
    @available(*, deprecated, message: "use title")
    let name: String
    let title: String?
    @Merge(.latest(by: "id")) let note: String
}

@Suite(.boundedConcurrency) struct DeprecatedFieldTests {
    @Test func modelWithADeprecatedFieldHasTheWholeAPI() throws {
        let legacy = Legacy(id: 1, name: "old", title: nil, note: "n")
        #expect(legacy.with(title: "new").title == "new")
        #expect(legacy.update(id: 2).id == 2)
        #expect(legacy.draft.name == "old")
        #expect(Legacy(legacy.draft.with { $0.name = "renamed" }).draft.name == "renamed")
        #expect(try Legacy.Partial(legacy).completed() == legacy)
        let merged = Legacy.merge(base: legacy, mine: legacy.with(note: "m"), theirs: legacy.with(title: "t"))
        #expect(merged.value == legacy.with(note: "m").with(title: "t"))
        #expect(Legacy.fieldNames == ["id", "name", "title", "note"])
    }
}

private extension Legacy.Draft {
    func with(_ edit: (inout Self) -> Void) -> Self {
        var copy = self
        edit(&copy)
        return copy
    }
}

// MARK: Excluded fields

@Immutable
struct Document: Hashable, Sendable {
    let text: String
    @ImmutableIgnored let wordCount: Int
    @ImmutableIgnored let onOpen: @Sendable () -> Void

    init(text: String) {
        self.text = text
        self.wordCount = text.split(separator: " ").count
        self.onOpen = {}
    }

    static func == (lhs: Document, rhs: Document) -> Bool { lhs.text == rhs.text }
    func hash(into hasher: inout Hasher) { hasher.combine(text) }
}

@Suite(.boundedConcurrency) struct IgnoredFieldTests {
    @Test func ignoredFieldIsRecomputedByEveryCopy() throws {
        let document = Document(text: "a b")
        #expect(document.with(text: "a b c").wordCount == 3)
        #expect(document.updating { $0.text = "one" }.wordCount == 1)
        #expect(Document.fieldNames == ["text"])
        var partial = Document.Partial()
        partial.text = "x y"
        #expect(try partial.completed().wordCount == 2)
        let merged = Document.merge(base: document, mine: document, theirs: document.with(text: "b c d e"))
        #expect(merged.value.wordCount == 4)
    }
}
