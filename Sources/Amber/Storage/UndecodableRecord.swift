import Foundation

/// A stored record that no longer decodes as the store's value type, usually because the model changed.
///
/// The record stays on disk untouched. Repair it with ``IdentityStore/recover(_:)``:
///
/// ```swift
/// try store.recover { record in
///     let old = try JSONDecoder().decode(NoteV1.self, from: record.data)
///     return Note(id: old.id, text: old.body, tagIDs: [])
/// }
/// ```
public struct UndecodableRecord: Sendable, Equatable {
    /// The identity as stored (see ``StoredRecord/id``).
    public let id: String
    /// The stored JSON.
    public let data: Data
    /// Why decoding failed.
    public let reason: String

    /// Creates an undecodable record.
    public init(id: String, data: Data, reason: String) {
        self.id = id
        self.data = data
        self.reason = reason
    }
}
