import Foundation
import OrderedCollections

/// The store's coder: how it turns values into records and back, and which record holds which
/// identity. Built once, where `Value` is known to be `Codable`; the storage only moves records.
@usableFromInline
struct Persistence<Value: Identifiable & Sendable>: Sendable where Value.ID: Sendable {
    let key: String
    @usableFromInline let storage: any StorageKeyHandle
    /// The record id the store gives an identity it writes.
    let recordID: @Sendable (Value.ID) -> String
    /// The identity a record id stands for under ``recordID``, when it stands for one.
    let identity: @Sendable (String) -> Value.ID?
    let encode: @Sendable (Value) throws -> Data
    let decode: @Sendable (Data) throws -> Value

    /// The id of the record that holds `id`: the one it was loaded from, or the store's own.
    func storedID(_ id: Value.ID, _ recordIDs: RecordIDs<Value.ID>) -> String {
        recordIDs.byIdentity[id] ?? recordID(id)
    }

    /// The identity the record `recordID` holds, as far as its id tells.
    func identity(ofRecord recordID: String, _ recordIDs: RecordIDs<Value.ID>) -> Value.ID? {
        recordIDs.byRecord[recordID] ?? identity(recordID)
    }

    func record(for value: Value, id: String) throws -> StoredRecord {
        do {
            return StoredRecord(id: id, data: try encode(value))
        } catch {
            throw StoreError.encodingFailed(key: key, id: id, reason: "\(error)")
        }
    }

    /// The records to write for a commit.
    ///
    /// A value new to the store goes last in memory; when its record id is held by an
    /// undecodable record, that record is deleted and written again so it goes last on disk too.
    func batch(
        for writes: ResolvedWrites<Value>, recordIDs: RecordIDs<Value.ID>, undecodable: Set<String>
    ) throws -> StorageBatch {
        var batch = StorageBatch(deletions: writes.recordDeletions)
        func record(for value: Value, id: String) throws -> StoredRecord {
            if let text = writes.encodings[value.id] { return StoredRecord(id: id, data: Data(text.utf8)) }
            return try self.record(for: value, id: id)
        }
        for value in writes.inserted {
            let id = recordID(value.id)
            if undecodable.contains(id) { batch.deletions.append(id) }
            batch.upserts.append(try record(for: value, id: id))
        }
        for update in writes.updated {
            batch.upserts.append(try record(for: update.new, id: storedID(update.new.id, recordIDs)))
        }
        for value in writes.removed { batch.deletions.append(storedID(value.id, recordIDs)) }
        return batch
    }

    /// Values, undecodable records and record ids from a key's records, in their order.
    ///
    /// A record whose value has an identity another record already holds is listed as
    /// undecodable, so no identity is ever held twice.
    func reconcile(_ records: [StoredRecord]) -> Reconciled {
        var result = Reconciled()
        result.values.reserveCapacity(records.count)
        for record in records {
            switch place(record, isHeld: { result.values[$0] != nil }, recordIDs: result.recordIDs) {
            case .value(let value, let recordIDIsForeign):
                result.values[value.id] = value
                if recordIDIsForeign { result.recordIDs.set(record.id, for: value.id) }
            case .undecodable(let entry):
                result.undecodable.append(entry)
            }
        }
        return result
    }

    struct Reconciled {
        var values: OrderedDictionary<Value.ID, Value> = [:]
        var undecodable: [UndecodableRecord] = []
        var recordIDs = RecordIDs<Value.ID>()
    }

    enum Placement {
        /// The record holds this value; `recordIDIsForeign` when the record's id is not the one
        /// the store gives that identity (see ``RecordIDs``).
        case value(Value, recordIDIsForeign: Bool)
        case undecodable(UndecodableRecord)
    }

    /// Decodes a record and checks that its identity is not held by another record.
    ///
    /// - Parameter isHeld: Whether an identity is held so far; `recordIDs` says by which record.
    func place(
        _ record: StoredRecord, isHeld: (Value.ID) -> Bool, recordIDs: RecordIDs<Value.ID>
    ) -> Placement {
        let value: Value
        do {
            value = try decode(record.data)
        } catch {
            return .undecodable(UndecodableRecord(id: record.id, data: record.data, reason: "\(error)"))
        }
        if isHeld(value.id) {
            let holder = storedID(value.id, recordIDs)
            if holder != record.id {
                return .undecodable(
                    UndecodableRecord(
                        id: record.id, data: record.data,
                        reason: "its value has the identity \(value.id), which record \(holder) already holds"))
            }
        }
        return .value(value, recordIDIsForeign: record.id != recordID(value.id))
    }
}

extension Persistence where Value: Codable, Value.ID: Codable {
    init(key: String, storage: any StorageKeyHandle) {
        self.key = key
        self.storage = storage
        (self.recordID, self.identity) = Self.recordIDFunctions()
        // JSONEncoder's defaults, so other tools can read the records. One coder each, reused:
        // a store encodes and decodes only under its write lock (or while opening).
        let coders = Coders()
        self.encode = { try coders.encoder.encode($0) }
        self.decode = { try coders.decoder.decode(Value.self, from: $0) }
    }

    /// A `String` id as is, a `UUID` as its `uuidString`, an integer as its digits, anything else
    /// as its JSON; and back.
    private static func recordIDFunctions() -> (@Sendable (Value.ID) -> String, @Sendable (String) -> Value.ID?) {
        if Value.ID.self == String.self { return ({ $0 as! String }, { $0 as? Value.ID }) }
        if Value.ID.self == UUID.self {
            return ({ ($0 as! UUID).uuidString }, { UUID(uuidString: $0) as? Value.ID })
        }
        let fromJSON: @Sendable (String) -> Value.ID? = {
            try? JSONDecoder().decode(Value.ID.self, from: Data($0.utf8))
        }
        if Value.ID.self is any BinaryInteger.Type { return ({ "\($0)" }, fromJSON) }
        let toJSON: @Sendable (Value.ID) -> String = { id in
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let data = (try? encoder.encode(id)) ?? Data("\(id)".utf8)
            return String(decoding: data, as: UTF8.self)
        }
        return (toJSON, fromJSON)
    }
}

/// Record ids that differ from the store's own mapping of the identity they hold: a lower-case
/// UUID written by another tool, or a record written before the id type changed.
///
/// Writes to such an identity go to the record it was read from, so it is never duplicated.
@usableFromInline
struct RecordIDs<ID: Hashable & Sendable>: Sendable {
    var byIdentity: [ID: String] = [:]
    var byRecord: [String: ID] = [:]

    @usableFromInline init() {}

    mutating func set(_ recordID: String, for id: ID) {
        remove(id)
        byIdentity[id] = recordID
        byRecord[recordID] = id
    }

    mutating func remove(_ id: ID) {
        guard let recordID = byIdentity.removeValue(forKey: id) else { return }
        byRecord[recordID] = nil
    }

    var isEmpty: Bool { byIdentity.isEmpty }
}

/// The JSON coders of one store.
private final class Coders: @unchecked Sendable {
    // @unchecked: each coder is used by one thread at a time (see `Persistence.init(key:storage:)`),
    // and their options are never changed after creation.
    let encoder = Coders.makeEncoder()
    let decoder = JSONDecoder()

    static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
