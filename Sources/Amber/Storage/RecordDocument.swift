import Foundation
import OrderedCollections

/// The JSON document that ``FileStorage`` and ``UserDefaultsStorage`` keep per key:
///
/// ```json
/// {"format":"amber.records","version":1,"records":[{"id":"1","value":{...}}]}
/// ```
///
/// Each `value` is the record's JSON as the store encoded it.
enum RecordDocument {
    static let format = "amber.records"
    static let version = 1

    static func encode(_ records: OrderedDictionary<String, Data>) -> Data {
        var document = Data(#"{"format":"\#(format)","version":\#(version),"records":["#.utf8)
        for (index, (id, data)) in records.enumerated() {
            if index > 0 { document.append(UInt8(ascii: ",")) }
            document.append(contentsOf: #"{"id":"#.utf8)
            document.append(try! JSONEncoder().encode(id))
            document.append(contentsOf: #","value":"#.utf8)
            document.append(data)
            document.append(UInt8(ascii: "}"))
        }
        document.append(contentsOf: "]}\n".utf8)
        return document
    }

    /// Reads a document.
    ///
    /// - Throws: A sentence saying what is wrong with it.
    static func decode(_ document: Data) throws(DocumentError) -> OrderedDictionary<String, Data> {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: document, options: [.fragmentsAllowed])
        } catch {
            throw DocumentError(reason: "not a JSON document (\(document.count) bytes)")
        }
        guard let root = object as? [String: Any], root["format"] as? String == format else {
            throw DocumentError(reason: "not an Amber record file (no \"format\": \"\(format)\")")
        }
        guard let version = root["version"] as? Int else { throw DocumentError(reason: "no format version") }
        guard version <= Self.version else {
            throw DocumentError(reason: "format version \(version) is newer than this library's \(Self.version)")
        }
        guard let entries = root["records"] as? [Any] else { throw DocumentError(reason: "no \"records\" array") }
        var records: OrderedDictionary<String, Data> = [:]
        for (index, entry) in entries.enumerated() {
            guard let entry = entry as? [String: Any], let id = entry["id"] as? String, let value = entry["value"],
                let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .withoutEscapingSlashes])
            else {
                throw DocumentError(reason: "record \(index) has no \"id\" string and \"value\"")
            }
            records[id] = data
        }
        return records
    }

    struct DocumentError: Error {
        let reason: String
    }
}

extension OrderedDictionary<String, Data> {
    /// Applies a batch: deletions first, then upserts, which keep the position of existing
    /// records and append new ones.
    mutating func apply(_ batch: StorageBatch) {
        for id in batch.deletions { removeValue(forKey: id) }
        for record in batch.upserts { self[record.id] = record.data }
    }

    var records: [StoredRecord] {
        map { StoredRecord(id: $0.key, data: $0.value) }
    }
}
