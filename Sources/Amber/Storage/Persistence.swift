import Foundation

/// How a store turns values into records and back; built once, where `Value` is known to be `Codable`.
@usableFromInline
struct Persistence<Value: Identifiable & Sendable>: Sendable where Value.ID: Sendable {
    let key: String
    @usableFromInline let storage: any StoreStorageKey
    let recordID: @Sendable (Value.ID) -> String
    let encode: @Sendable (Value) throws -> Data
    let decode: @Sendable (Data) throws -> Value

    func record(for value: Value) throws -> StoredRecord {
        do {
            return StoredRecord(id: recordID(value.id), data: try encode(value))
        } catch {
            throw StoreError.encodingFailed(key: key, id: recordID(value.id), reason: "\(error)")
        }
    }

    /// The records to write for a commit; `movingLast` names stored records that the commit
    /// re-inserts and that must go last, where the store puts them.
    @usableFromInline
    func batch(for writes: ResolvedWrites<Value>, movingLast: [String] = []) throws -> StorageBatch {
        StorageBatch(
            upserts: try writes.inserted.map(record(for:)) + writes.updated.map { try record(for: $0.new) },
            deletions: writes.removed.map { recordID($0.id) } + movingLast
        )
    }
}

extension Persistence where Value: Codable, Value.ID: Codable {
    init(key: String, storage: any StoreStorageKey) {
        self.key = key
        self.storage = storage
        self.recordID = Self.recordIDFunction()
        // JSONEncoder's defaults, so other tools can read the records. One coder each, reused:
        // a store encodes only under its write lock, and decodes while opening or on its one
        // watcher queue, so neither is used from two threads at once.
        let coders = Coders()
        self.encode = { try coders.encoder.encode($0) }
        self.decode = { try coders.decoder.decode(Value.self, from: $0) }
    }

    /// A `String` id as is, a `UUID` as its `uuidString`, an integer as its digits, anything else as its JSON.
    private static func recordIDFunction() -> @Sendable (Value.ID) -> String {
        if Value.ID.self == String.self { return { $0 as! String } }
        if Value.ID.self == UUID.self { return { ($0 as! UUID).uuidString } }
        if let integer = Value.ID.self as? any BinaryInteger.Type {
            _ = integer
            return { "\($0)" }
        }
        return { id in
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let data = (try? encoder.encode(id)) ?? Data("\(id)".utf8)
            return String(decoding: data, as: UTF8.self)
        }
    }
}

/// The JSON coders of one store.
private final class Coders: @unchecked Sendable {
    // @unchecked: each coder is used by one thread at a time (see `Persistence.init(key:storage:)`),
    // and their options are never changed after creation.
    let encoder = JSONEncoder()
    let decoder = JSONDecoder()
}
