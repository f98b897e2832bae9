/// Generates the copy-and-edit API of an immutable model: a `let`-only struct.
///
/// ```swift
/// @Immutable
/// struct Person: Identifiable, Hashable, Codable, Sendable {
///     let id: String
///     let name: String
///     let age: Int
///     let job: String?
/// }
///
/// let me = Person(id: "1", name: "Ryan", age: 29, job: "Engineer")
/// me.update(age: 30).name           // "Ryan"
/// me.with(job: nil).job             // nil: `with` clears optionals
/// me.updating { $0.job = nil; $0.age += 1 }
/// ```
///
/// The macro adds, at the type's own access level (`private` types get
/// `fileprivate` members):
/// - a memberwise `init` in declaration order, optional properties defaulting to `nil`;
/// - `with(field:)` for every stored property: a copy with that one field replaced;
/// - `update(...)` taking every non-optional stored property as `T? = nil`, where
///   `nil` keeps the old value;
/// - a mutable mirror `Draft`, with `init(_ draft:)`, `draft` and `updating(_:)`;
/// - a builder `Partial` whose `completed()` throws ``IncompleteValueError``
///   naming the fields still missing;
/// - conformance to ``ImmutableModel``, and to ``Mergeable`` (a field-by-field
///   three-way merge) when the type declares `Equatable` or `Hashable`.
///
/// `Draft` and `Partial` conform to `Sendable`, `Equatable`, `Hashable`,
/// `Codable`, `Encodable` and `Decodable` when the type declares them.
/// Computed and static properties are ignored; stored properties with an
/// initial value cannot be set, so they are left out of everything that sets fields.
///
/// Every generated member and conformance is `nonisolated`: models work in modules built
/// with `defaultIsolation(MainActor.self)` and on `@MainActor` structs, and merge off the main actor.
/// Generated members are as visible as the type and the fields they expose: a member exposing a
/// `private` or `internal` field is no more visible than that field.
/// An initializer the struct already declares with the memberwise labels is kept.
/// `Draft` and `Partial` use the struct's `CodingKeys`, so the model's JSON decodes as them.
///
/// Applying the macro to anything but a struct, declaring a stored `var` (`lazy` or wrapped
/// ones included), a stored property without a type annotation, a tuple pattern, or a stored
/// property inside `#if` is a compile-time error. A `private` struct nested in another type
/// must declare `ImmutableModel` (and `Mergeable`) itself: its extensions cannot name it.
@attached(
    member,
    names: named(init), named(with), named(update), named(updating), named(makeDraft),
    named(Draft), named(Partial), named(fieldNames), named(merge), named(ImmutableSelf),
    named(_immutableFields)
)
@attached(extension, conformances: ImmutableModel, Mergeable)
public macro Immutable() = #externalMacro(module: "AmberMacros", type: "ImmutableMacro")

/// ``Immutable()`` with ``Mergeable`` chosen explicitly, for when the declaration does not show it.
///
/// The macro sees only the struct's own declaration. Conformance to `Mergeable` follows
/// `Equatable`, `Hashable` or `Comparable` in its inheritance clause; when `Equatable` comes
/// from an extension or a typealias, say so:
///
/// ```swift
/// typealias Model = Identifiable & Hashable & Sendable
///
/// @Immutable(mergeable: true)
/// struct Note: Model {
///     let id: UUID
///     let text: String
/// }
/// ```
///
/// - Parameter mergeable: Whether to generate `merge` and the ``Mergeable`` conformance.
///   A field whose type is not `Equatable` then keeps `mine` whenever `mine` and `theirs` differ.
@attached(
    member,
    names: named(init), named(with), named(update), named(updating), named(makeDraft),
    named(Draft), named(Partial), named(fieldNames), named(merge), named(ImmutableSelf),
    named(_immutableFields)
)
@attached(extension, conformances: ImmutableModel, Mergeable)
public macro Immutable(mergeable: Bool) = #externalMacro(module: "AmberMacros", type: "ImmutableMacro")
