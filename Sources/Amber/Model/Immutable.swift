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
/// Applying the macro to anything but a struct, declaring a stored `var`, or a
/// stored property without a type annotation is a compile-time error.
@attached(
    member,
    names: named(init), named(with), named(update), named(updating), named(draft),
    named(Draft), named(Partial), named(fieldNames)
)
@attached(extension, conformances: ImmutableModel, Mergeable, names: named(merge))
public macro Immutable() = #externalMacro(module: "AmberMacros", type: "ImmutableMacro")
