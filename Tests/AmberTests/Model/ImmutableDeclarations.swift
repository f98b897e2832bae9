import Amber
import AmberTestSupport
import Foundation
import Testing

// Compile-only coverage: `@Immutable` on the declarations users write.

@Immutable
public struct PublicModel: Hashable, Codable, Sendable {
    public let id: UUID
    public let title: String
    public let note: String?
}

@Immutable
struct GenericModel<Content: Hashable & Sendable>: Hashable, Sendable {
    let content: Content
    let label: Optional<String>
}

enum Namespace {
    @Immutable
    struct Nested: Equatable {
        let value: Int
        let kind = "nested"
    }

    @Immutable
    struct WithNestedGeneric<T: Equatable>: Equatable {
        let items: [T]
    }
}

@Immutable
private struct PrivateModel {
    let secret: String
}

@Immutable
struct NoEquatable {
    let handler: @Sendable () -> Void
    let `default`: Int
}

@Immutable
struct Empty: Equatable {}

@Suite(.boundedConcurrency) struct ImmutableDeclarationTests {
    @Test func publicModelHasTheWholeAPI() throws {
        let model = PublicModel(id: UUID(), title: "a")
        var partial = PublicModel.Partial()
        partial.title = "b"
        #expect(throws: IncompleteValueError.self) { try partial.completed() }
        #expect(model.with(note: "n").update(title: "c").note == "n")
        let data = try JSONEncoder().encode(model.draft)
        #expect(try PublicModel(JSONDecoder().decode(PublicModel.Draft.self, from: data)) == model)
    }

    @Test func genericModel() {
        let box = GenericModel(content: 3, label: "three")
        #expect(box.update(content: 4).content == 4)
        #expect(box.with(label: nil).label == nil)
        let merged = GenericModel.merge(base: box, mine: box.update(content: 5), theirs: box.with(label: "x"))
        #expect(merged.value == GenericModel(content: 5, label: "x"))
        #expect(GenericModel<Int>.fieldNames == ["content", "label"])
    }

    @Test func nestedModelLeavesOutPropertiesWithInitialValues() {
        let value = Namespace.Nested(value: 1)
        #expect(value.with(value: 2).value == 2)
        #expect(value.kind == "nested")
        #expect(Namespace.Nested.fieldNames == ["value"])
        #expect(Namespace.WithNestedGeneric(items: [1]).updating { $0.items.append(2) }.items == [1, 2])
    }

    @Test func privateAndNonEquatableModels() {
        #expect(PrivateModel(secret: "s").with(secret: "t").secret == "t")
        let model = NoEquatable(handler: {}, default: 1)
        #expect(model.update(default: 2).default == 2)
        #expect(!(NoEquatable.self is any Mergeable.Type))
    }

    @Test func emptyModel() throws {
        #expect(try Empty.Partial().completed() == Empty())
        #expect(Empty.fieldNames.isEmpty)
    }
}
