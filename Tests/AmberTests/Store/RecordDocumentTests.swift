import AmberTestSupport
import Foundation
import OrderedCollections
import Testing

@testable import Amber

@Suite(.boundedConcurrency) struct RecordDocumentTests {
    /// Applies another writer's change the way the store does: deletions leave, upserts stay in
    /// place or (new, or deleted and upserted again) go last in the order given.
    private func apply(_ change: ExternalChange?, to order: [String]) -> [String] {
        guard case .records(let upserts, let deletions)? = change else { return order }
        var result = OrderedSet(order)
        for id in deletions { result.remove(id) }
        for record in upserts where !result.contains(record.id) { result.append(record.id) }
        return Array(result)
    }

    @Test func anyRewriteOfAFileIsReportedSoThatMemoryEndsInTheFilesOrder() {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<500 {
            let old = OrderedDictionary(
                uniqueKeysWithValues: (0..<Int.random(in: 0...8, using: &generator)).map {
                    ("\($0)", Data("v\($0)".utf8))
                })
            // Any subset of the old records, in any order, some changed, plus new ones.
            var newer: OrderedDictionary<String, Data> = [:]
            for (id, data) in old.shuffled(using: &generator) where Bool.random(using: &generator) {
                newer[id] = Bool.random(using: &generator) ? data : Data("changed".utf8)
            }
            for index in 0..<Int.random(in: 0...3, using: &generator) { newer["new\(index)"] = Data("n".utf8) }
            let change = old.changes(to: newer)
            #expect(
                apply(change, to: Array(old.keys)) == Array(newer.keys), "round \(round): \(old.keys) -> \(newer.keys)")
            guard case .records(let upserts, _)? = change else {
                #expect(old == newer, "round \(round): no change reported for a changed file")
                continue
            }
            for record in upserts { #expect(newer[record.id] == record.data) }
            let changed = newer.filter { old[$0.key] != $0.value }.map(\.key)
            #expect(Set(changed).isSubset(of: upserts.map(\.id)), "round \(round): every changed record is reported")
        }
    }

    @Test func aDocumentKeepsEachRecordsBytesAndRejectsBrokenOnes() throws {
        let value = #"{ "id":"a", "note": "a \"quoted\" ] } text" }"#
        let document = Data(
            #"{"format":"amber.records","version":1,"records":[{"id":"a\u00e9","value":\#(value)}]}"#.utf8)
        let records = try RecordDocument.decode(document)
        #expect(records.keys.elements == ["aé"])
        #expect(records.values.first == Data(value.utf8))
        #expect(try RecordDocument.decode(RecordDocument.encode(records)) == records)
        for broken in [#"{"format":"amber.records","version":1,"records":[{"id":"a","value":{"x":1}]}"#, "{", "[]", ""]
        {
            #expect(throws: RecordDocument.DocumentError.self) { try RecordDocument.decode(Data(broken.utf8)) }
        }
    }
}
