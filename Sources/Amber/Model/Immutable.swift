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
/// - a memberwise `init` in declaration order, optional properties defaulting to `nil` (and
///   others to their ``ImmutableDefault(_:)``), unless the struct already declares an
///   initializer with those labels;
/// - `init(_immutableFields:)`, which stores each field exactly as given: every generated member
///   builds its values with it, never with an initializer the struct declares, which may take
///   other types, fail, or normalise its input (only ``ImmutableIgnored()`` properties make
///   copies go through the struct's initializer with the fields' labels, which computes them);
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
/// `Draft` conforms to the `Sendable`, `Equatable`, `Hashable`, `Codable`, `Encodable` and
/// `Decodable` that the type declares. Where the model writes `==`/`hash(into:)` or
/// `init(from:)`/`encode(to:)` itself, or a field has a function type, `Draft` compares, hashes,
/// encodes and decodes through the model, so a draft is the model's JSON and equal as the model
/// says. `Partial` conforms to those it can synthesize, and codes through the model where it
/// cannot (encoding only once complete). Both use the struct's `CodingKeys`.
///
/// Generated names do not capture the app's: when a field's type names an app type `Draft` or
/// `Partial`, the mirrors are declared as `ImmutableDraft` and `ImmutablePartial`, and are still
/// `Model.Draft` and `Model.Partial` through ``ImmutableModel``. A field whose type is a plain
/// name that may be a function typealias declared elsewhere is taken as `@autoclosure` by
/// `init` and `with`, which fits both functions and values; call sites read the same.
/// Computed and static properties are ignored; stored properties with an initial value cannot
/// be set, so they are left out of everything that sets fields, as are those marked
/// ``ImmutableIgnored()``.
///
/// Every generated member and conformance is `nonisolated`: models work in modules built with
/// `defaultIsolation(MainActor.self)` and merge off the main actor. On an explicitly `@MainActor`
/// struct the fields must be `Sendable`, since nonisolated members read them.
///
/// A `private` struct nested in another type, or any struct nested in a `private` one, cannot be
/// extended at file scope: it gets every member, and the conformances it declares itself
/// (`ImmutableModel`, `Mergeable`).
///
/// Applying the macro to anything but a struct is a compile-time error, and so are: a stored
/// `var` (with a fix-it to `let` where that is valid), a `lazy var` or a wrapped one, a stored
/// property without a type annotation, a tuple pattern, a stored property without an initial
/// value inside `#if`, a property named `self`, a field whose type is `private` in the model
/// (fix-it: `fileprivate`), and an ``ImmutableIgnored()`` property without an initializer taking
/// the fields as declared that neither fails nor throws. The fix-it for `var x = 0` is
/// `@ImmutableDefault(0) let x: Int`, which keeps `x` a field.
@attached(
    member,
    names: named(init), named(with), named(update), named(updating), named(makeDraft), named(draft),
    named(Draft), named(Partial), named(fieldNames), named(merge), named(ImmutableSelf),
    named(_immutableFields), named(_immutablePartialType), named(ImmutableDraft), named(ImmutablePartial)
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
    named(_immutableFields), named(_immutablePartialType), named(ImmutableDraft), named(ImmutablePartial)
)
@attached(extension, conformances: ImmutableModel, Mergeable)
public macro Immutable(mergeable: Bool) = #externalMacro(module: "AmberMacros", type: "ImmutableMacro")
