import Amber
import AmberTestSupport
import Foundation
import Testing

// `@Immutable` on model code that has its own initializers and names, as apps write it. Every
// generated member builds values through the generated storing initializer: the app's
// initializers are never called, so a copy holds exactly the fields it was given.

// MARK: An initializer with the memberwise labels and other types

struct HTMLString: Hashable, Codable, Sendable {
    let raw: String
}

@Immutable
struct Post: Identifiable, Hashable, Codable, Sendable {
    let id: Int
    let content: HTMLString
    let title: String?

    init(id: Int, content: String, title: String? = nil) {
        self.id = id
        self.content = HTMLString(raw: "<p>\(content)</p>")
        self.title = title
    }
}

// MARK: A failable initializer with the memberwise labels

@Immutable
struct FeedItem: Hashable, Codable, Sendable {
    let link: URL
    let title: String

    init?(link: String, title: String) {
        guard let url = URL(string: link), !title.isEmpty else { return nil }
        self.link = url
        self.title = title
    }
}

@Immutable
struct Headline: Hashable, Sendable {
    let text: String
    let rank: Int

    init?(text: String, rank: Int) {
        guard !text.isEmpty else { return nil }
        self.text = text
        self.rank = rank
    }
}

// MARK: An initializer that normalises its input

@Immutable
struct Bookmark: Hashable, Sendable {
    let url: String
    let markdown: String
    let html: String

    init(url: String, markdown: String, html: String = "") {
        self.url = url.trimmingCharacters(in: .whitespaces)
        self.markdown = markdown
        self.html = "<em>\(markdown)</em>"
    }
}

// MARK: An app type named `Draft` or `Partial`

enum Mail {
    struct Draft: Hashable, Codable, Sendable {
        let body: String
    }

    struct Partial: Hashable, Codable, Sendable {
        let bytes: Int
    }

    @Immutable
    struct Message: Identifiable, Hashable, Codable, Sendable {
        let id: Int
        let reply: Draft?
        let history: [Draft]
        let upload: Partial?
    }
}

/// A model named `Draft` whose field names it so.
enum Discussion {
    @Immutable
    struct Draft: Hashable, Sendable {
        let text: String
        let replies: [Draft]
    }
}

// MARK: A model nested in a private type

struct ContentView {
    private struct Section {
        @Immutable
        struct Row: Hashable, Sendable {
            let id: Int
            let title: String
        }

        @Immutable
        struct Cell: Hashable, Sendable, ImmutableModel, Mergeable {
            let id: Int
            let title: String
        }
    }

    static func exerciseRows() throws {
        let row = Section.Row(id: 1, title: "a")
        #expect(row.with(title: "b").title == "b")
        #expect(Section.Row(row.updating { $0.title += "!" }.draft).title == "a!")
        #expect(try Section.Row.Partial(row).completed() == row)
        let cell = Section.Cell(id: 1, title: "a")
        #expect(Section.Cell.merge(base: cell, mine: cell.with(title: "m"), theirs: cell.with(id: 2)).value.id == 2)
        let types: [Any.Type] = [Section.Row.self, Section.Cell.self]
        #expect(types.map { $0 is any ImmutableModel.Type } == [false, true], "the conformance it declares")
    }
}

private enum Layout {
    @Immutable
    struct Item: Hashable, Sendable {
        let id: Int
        let width: Double
    }
}

// MARK: A field of a type private to the model: made `fileprivate`, as the diagnostic says

@Immutable
public struct Gallery: Sendable {
    fileprivate final class Cache: Sendable {
        let size: Int
        init(size: Int) { self.size = size }
    }

    public let title: String
    private let cache: Cache

    static func make(title: String, size: Int) -> Gallery {
        Gallery(title: title, cache: Cache(size: size))
    }

    var cacheSize: Int { cache.size }
}

// MARK: A field typed with a function typealias declared outside the model

typealias TapHandler = @Sendable (String) -> String

@Immutable
struct Chip: Sendable {
    let label: String
    let onTap: TapHandler
    let onHold: TapHandler?
}

// MARK: Hand-written coding, equality and hashing

@Immutable
struct Event: Identifiable, Hashable, Codable, Sendable {
    let id: Int
    let name: String

    enum CodingKeys: String, CodingKey {
        case id = "event_id"
        case name = "event_name"
    }

    init(id: Int, name: String) {
        self.id = id
        self.name = name
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        name = try container.decodeIfPresent(String.self, forKey: .name) ?? "untitled"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
    }

    /// Events are the same event by their identity alone.
    static func == (lhs: Event, rhs: Event) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

// MARK: Defaults of the generated initializer

@Immutable
struct TapCount: Hashable, Sendable {
    let name: String
    @ImmutableDefault(0) let count: Int
    @ImmutableDefault([] as [String]) let tags: [String]
}

@Suite(.boundedConcurrency) struct ImmutableAppInitTests {
    @Test func initializerOfOtherTypesIsNotCalled() throws {
        let post = Post(id: 1, content: "hi")
        #expect(post.content == HTMLString(raw: "<p>hi</p>"))
        #expect(post.with(title: "t").content == post.content, "not wrapped a second time")
        #expect(post.with(content: HTMLString(raw: "x")).content.raw == "x")
        #expect(post.update(id: 2).content == post.content)
        #expect(Post(post.updating { $0.title = "u" }.draft) == post.with(title: "u"))
        #expect(try Post.Partial(post).completed() == post)
        let merged = Post.merge(base: post, mine: post.with(title: "m"), theirs: post.update(id: 3))
        #expect(merged.value == Post(post.draft).with(title: "m").update(id: 3))
        #expect(merged.value.content == post.content)
    }

    @Test func failableInitializerIsNotCalled() throws {
        let item = try #require(FeedItem(link: "https://example.com/a", title: "A"))
        #expect(item.with(title: "").title == "", "a copy never fails: it holds what it was given")
        #expect(item.update(title: "B").link == item.link)
        #expect(FeedItem(item.draft) == item)
        var partial = FeedItem.Partial()
        partial.link = URL(string: "https://example.com/b")
        partial.title = "B"
        #expect(try partial.completed().title == "B")
        #expect(FeedItem.merge(base: item, mine: item, theirs: item.with(title: "C")).value.title == "C")
        let data = try JSONEncoder().encode(item.draft)
        #expect(try FeedItem(JSONDecoder().decode(FeedItem.Draft.self, from: data)) == item)

        #expect(Headline(text: "", rank: 1) == nil, "the app's own initializer still fails")
        let headline = try #require(Headline(text: "a", rank: 1))
        #expect(headline.with(text: "").text == "")
        #expect(try Headline.Partial(headline).completed() == headline)
    }

    @Test func normalisingInitializerDoesNotChangeCopies() {
        let bookmark = Bookmark(url: "  https://a.example  ", markdown: "*a*")
        #expect(bookmark.url == "https://a.example")
        #expect(bookmark.html == "<em>*a*</em>")
        #expect(bookmark.with(url: " spaced ").url == " spaced ", "`with(x:)` returns exactly x")
        #expect(bookmark.with(markdown: "b").html == bookmark.html, "a copy is not rendered again")
        let edited = bookmark.updating {
            $0.html = "<strong>a</strong>"
            $0.url = " kept "
        }
        #expect(edited.html == "<strong>a</strong>", "a draft edit is never dropped")
        #expect(edited.url == " kept ")
        var draft = bookmark.draft
        draft.html = "<b>x</b>"
        #expect(Bookmark(draft).html == "<b>x</b>")
    }

    @Test func appTypesNamedDraftAndPartialKeepTheirMeaning() throws {
        let reply = Mail.Draft(body: "thanks")
        let message = Mail.Message(id: 1, reply: reply, history: [reply], upload: Mail.Partial(bytes: 3))
        #expect(message.reply?.body == "thanks")
        let mirror: Mail.Message.Draft = message.draft
        #expect(mirror.history == [reply])
        #expect(message.updating { $0.history.append(Mail.Draft(body: "more")) }.history.count == 2)
        var partial = Mail.Message.Partial()
        partial.id = 2
        #expect(throws: IncompleteValueError(typeName: "Message", missingFields: ["history"])) {
            try partial.completed()
        }
        func generic<Model: ImmutableModel>(_ model: Model) -> Model.Draft { model.makeDraft() }
        #expect(generic(message) == mirror)
        let data = try JSONEncoder().encode(message)
        #expect(try JSONDecoder().decode(Mail.Message.Draft.self, from: data) == mirror)
    }

    @Test func modelNamedDraftNamesItselfByName() {
        let reply = Discussion.Draft(text: "re", replies: [])
        let draft = Discussion.Draft(text: "a", replies: [reply])
        #expect(draft.replies == [reply])
        let mirror: Discussion.Draft.Draft = draft.makeDraft()
        #expect(Discussion.Draft(mirror) == draft)
        #expect(draft.updating { $0.replies.append(reply) }.replies.count == 2)
    }

    @Test func modelsNestedInPrivateTypes() throws {
        try ContentView.exerciseRows()
        let item = Layout.Item(id: 1, width: 2)
        #expect(item.with(width: 3).width == 3)
        #expect(Layout.Item.merge(base: item, mine: item.with(width: 4), theirs: item).value.width == 4)
    }

    @Test func fieldOfATypePrivateToTheModel() {
        let gallery = Gallery.make(title: "a", size: 3)
        #expect(gallery.with(title: "b").cacheSize == 3)
        #expect(Gallery(gallery.draft).cacheSize == 3)
    }

    @Test func fieldOfAFunctionTypealias() {
        let chip = Chip(label: "a", onTap: { "tap \($0)" }, onHold: nil)
        let copy = chip.with(onTap: { "other \($0)" }).with(onHold: { "hold \($0)" })
        #expect(copy.onTap("x") == "other x")
        #expect(copy.onHold?("y") == "hold y")
        var draft = chip.draft
        draft.onTap = { $0.uppercased() }
        #expect(Chip(draft).onTap("z") == "Z")
    }

    @Test func draftCodesComparesAndHashesAsTheModel() throws {
        let event = Event(id: 1, name: "launch")
        let data = try JSONEncoder().encode(event.draft)
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(json.keys) == ["event_id", "event_name"], "the model's own coding keys")
        let decoded = try JSONDecoder().decode(Event.Draft.self, from: Data(#"{"event_id": 2}"#.utf8))
        #expect(decoded.name == "untitled", "the model's hand-written init(from:)")
        #expect(Event(try JSONDecoder().decode(Event.Draft.self, from: data)).name == "launch")
        #expect(event.draft == event.with(name: "renamed").draft, "equal as the model says: by id")
        #expect(Set([event.draft, event.with(name: "other").draft]).count == 1, "hashed as the model")
        var partial = try JSONDecoder().decode(Event.Partial.self, from: Data(#"{"event_id": 3}"#.utf8))
        #expect(partial.name == "untitled", "a partial decodes through the model too")
        partial.name = "renamed"
        #expect(try JSONDecoder().decode(Event.self, from: JSONEncoder().encode(partial)).id == 3)
    }

    @Test func defaultsOfTheGeneratedInitializer() {
        let counter = TapCount(name: "taps")
        #expect(counter.count == 0)
        #expect(counter.tags.isEmpty)
        #expect(counter.with(count: 2).count == 2)
        #expect(TapCount.fieldNames == ["name", "count", "tags"])
    }
}
