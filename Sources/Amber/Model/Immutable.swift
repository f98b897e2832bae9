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
/// The macro adds, each member as visible as the type and the fields it exposes (a member
/// that takes a `private` field is `private`; `private` and `fileprivate` types give their
/// members no modifier, which keeps them as visible as the type):
/// - a memberwise `init` in declaration order, optional properties defaulting to `nil`, unless
///   the struct already declares an initializer with those labels;
/// - `with(field:)` for every stored property: a copy with that one field replaced;
/// - `update(...)` taking every non-optional stored property as `T? = nil`, where
///   `nil` keeps the old value;
/// - a mutable mirror `Draft`, with `init(_ draft:)`, `makeDraft()` (also `draft`, unless a
///   field has that name) and `updating(_:)`;
/// - a builder `Partial` whose `completed()` throws ``IncompleteValueError``
///   naming the fields still missing;
/// - `ImmutableSelf`, an alias of the model for code inside `Draft` and `Partial`;
/// - conformance to ``ImmutableModel``, and to ``Mergeable`` (a field-by-field three-way
///   merge, with per-field strategies from ``Merge(_:)``) when the type declares `Equatable`,
///   `Hashable` or `Comparable` (also inside a composition such as `Identifiable & Hashable`),
///   or on request with ``Immutable(mergeable:)``.
///
/// `Draft` and `Partial` conform to `Sendable`, `Equatable`, `Hashable`, `Codable`, `Encodable`
/// and `Decodable` when the type declares them and they can synthesize them: not when a field
/// has a function type, nor when the type writes `==`/`hash(into:)` or `init(from:)`/`encode(to:)`
/// itself. They use the struct's `CodingKeys`, so the model's JSON decodes as its `Draft` and `Partial`.
/// Computed and static properties are ignored; stored properties with an initial value cannot
/// be set, so they are left out of everything that sets fields, as are those marked
/// ``ImmutableIgnored()``.
///
/// Every generated member and conformance is `nonisolated`: models work in modules built with
/// `defaultIsolation(MainActor.self)` and merge off the main actor. On an explicitly `@MainActor`
/// struct the fields must be `Sendable`, since nonisolated members read them.
///
/// A `private` struct nested in another type cannot be extended at file scope: it gets every
/// member, and the conformances it declares itself (`ImmutableModel`, `Mergeable`).
///
/// Applying the macro to anything but a struct is a compile-time error, and so are: a stored
/// `var` (with a fix-it to `let` where that is valid), a `lazy var` or a wrapped one, a stored
/// property without a type annotation, a tuple pattern, a stored property without an initial
/// value inside `#if`, a property named `self`, and, in a model named `Draft` or `Partial`,
/// a field type that names the model by that name (`Self` works).
@attached(
    member,
    names: named(init), named(with), named(update), named(updating), named(makeDraft), named(draft),
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
///   A field whose values cannot be compared (not `Equatable`, such as a closure) always keeps `mine`.
@attached(
    member,
    names: named(init), named(with), named(update), named(updating), named(makeDraft), named(draft),
    named(Draft), named(Partial), named(fieldNames), named(merge), named(ImmutableSelf),
    named(_immutableFields)
)
@attached(extension, conformances: ImmutableModel, Mergeable)
public macro Immutable(mergeable: Bool) = #externalMacro(module: "AmberMacros", type: "ImmutableMacro")
