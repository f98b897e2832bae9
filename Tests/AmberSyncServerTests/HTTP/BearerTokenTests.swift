import Testing

@testable import AmberSyncServer

/// How the token is read from an `Authorization` header.
struct BearerTokenTests {
    @Test(arguments: [
        ("Bearer abc", "abc"),
        ("bearer abc", "abc"),
        ("BEARER abc", "abc"),
        ("  Bearer abc", "abc"),
        ("Bearer    abc", "abc"),
        ("Bearer \tabc\t ", "abc"),
        ("Bearer a b", "a b"),
        ("Bearer é", "é"),
    ])
    func aBearerHeaderGivesItsToken(header: String, token: String) {
        #expect(AuthenticationMiddleware.bearerToken(in: header) == token)
    }

    @Test(arguments: [
        "", "Bearer", "Bearer ", "Bearer \t ", "Bearerabc", "Bearer\tabc", "Basic abc", "Bearr abc", "Bearers abc",
        "Beare", "@EARER abc", "Token abc",
    ])
    func anythingElseGivesNoToken(header: String) {
        #expect(AuthenticationMiddleware.bearerToken(in: header) == nil)
    }

    @Test func noHeaderGivesNoToken() {
        #expect(AuthenticationMiddleware.bearerToken(in: nil) == nil)
    }
}
