import AmberSyncProtocol
import AmberTestSupport
import Testing

@Suite(.boundedConcurrency) struct AttachmentReferenceTests {
    static let hash = String(repeating: "ab", count: 32)

    @Test(arguments: [
        (#"{"photo":{"sha256":"\#(hash)","size":3,"mediaType":"image/png"}}"#, true),
        (#"{"títle":"crème brûlée 🍮","file":{"sha256":"\#(hash)","size":1,"mediaType":"a/b"}}"#, true),
        (#"{"sha256":"x"}"#, true),
        (#"{"text":"sha256 is a hash","sha":"256"}"#, false),
        (#"{"text":"\"sha25"}"#, false),
        ("", false),
        (#""sha256""#, true),
    ])
    func aRecordMayNameAnAttachmentOnlyWhenItsTextHasTheKey(text: String, expected: Bool) {
        #expect(AttachmentReference.mayOccur(in: text) == expected)
        // A part of a larger text is searched within its bounds only.
        let padded = "\"sha256\"" + text + "\"sha256\""
        let part = padded.dropFirst(8).dropLast(8)
        #expect(AttachmentReference.mayOccur(in: part) == expected)
    }

}
