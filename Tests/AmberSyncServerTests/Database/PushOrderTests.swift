import AmberSyncProtocol
import Testing

@testable import AmberSyncServer

/// Whether a push names each record once, in the order of its names' bytes: the SQLite backend
/// then keeps no record it stored for a later mutation of the batch.
@Suite struct PushOrderTests {
    private func mutations(_ names: [(String, String)]) -> [Mutation] {
        names.enumerated().map { offset, name in
            Mutation(
                mutationID: Int64(offset + 1), collection: name.0, id: name.1, baseVersion: nil,
                value: ["n": .string("\(offset)")])
        }
    }

    @Test func namesIncreaseByCollectionThenID() {
        #expect(PushValidation.namesIncrease(mutations([])))
        #expect(PushValidation.namesIncrease(mutations([("notes", "a")])))
        #expect(PushValidation.namesIncrease(mutations([("notes", "a"), ("notes", "b"), ("tags", "a")])))
        #expect(!PushValidation.namesIncrease(mutations([("tags", "a"), ("notes", "b")])))
        #expect(!PushValidation.namesIncrease(mutations([("notes", "b"), ("notes", "a")])))
    }

    @Test func aNameTwiceIsNotIncreasingAdjacentOrNot() {
        #expect(!PushValidation.namesIncrease(mutations([("notes", "a"), ("notes", "a")])))
        #expect(!PushValidation.namesIncrease(mutations([("notes", "a"), ("notes", "b"), ("notes", "a")])))
    }

    /// By bytes, as the databases order text: `"Z"` before `"a"`, a prefix before what extends
    /// it, and two normalizations of one text two names (`String` holds them equal).
    @Test func namesAreOrderedByTheirUTF8Bytes() {
        #expect(PushValidation.namesIncrease(mutations([("notes", "Z"), ("notes", "a")])))
        #expect(PushValidation.namesIncrease(mutations([("notes", "ab"), ("notes", "abc")])))
        #expect(!PushValidation.namesIncrease(mutations([("notes", "abc"), ("notes", "ab")])))
        let decomposed = "caf" + "e\u{301}"  // 65 CC 81: before C3 A9
        let composed = "caf\u{e9}"
        #expect(decomposed == composed)
        #expect(PushValidation.namesIncrease(mutations([("notes", decomposed), ("notes", composed)])))
        #expect(!PushValidation.namesIncrease(mutations([("notes", composed), ("notes", decomposed)])))
    }
}
