import AmberTestSupport
import Foundation
import Testing

@Suite(.boundedConcurrency) struct CookiesCommandTests {
    static let executable: URL = NotesRunner.executable.deletingLastPathComponent().appendingPathComponent("cookies")

    private func run(_ arguments: [String], input: String? = nil) throws -> (
        status: Int32, output: [String], error: String
    ) {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: out, as: UTF8.self).split(separator: "\n").map(String.init),
            String(decoding: err, as: UTF8.self)
        )
    }

    @Test func transitionsAndUndoFromArguments() throws {
        let result = try run(["login Ann 50", "sell 12", "sell 40", "undo", "logout", "undo", "status"])
        #expect(result.status == 0, "\(result.error)")
        #expect(
            result.output == [
                "Logged out",
                "Seller: Ann | target 50 boxes | sold 0 | 50 to go",
                "Seller: Ann | target 50 boxes | sold 12 | 38 to go",
                "Seller: Ann | target 50 boxes | sold 52 | target reached",
                "Seller: Ann | target 50 boxes | sold 12 | 38 to go",
                "Logged out",
                "Seller: Ann | target 50 boxes | sold 12 | 38 to go",
                "Seller: Ann | target 50 boxes | sold 12 | 38 to go",
            ])
    }

    @Test func commandsFromAPipe() throws {
        let result = try run([], input: "login Bo 10\nsell 3\nredo\n")
        #expect(result.status == 1)
        #expect(result.output.last == "Seller: Bo | target 10 boxes | sold 3 | 7 to go")
        #expect(result.error == "cookies: nothing to redo\n")
    }

    @Test func badCommandsAreRefused() throws {
        for (arguments, message) in [
            (["sell 3"], "log in first"),
            (["login Ann -5"], "positive"),
            (["login Ann 5", "sell many"], "positive number of boxes"),
            (["dance"], "unknown command"),
            (["undo"], "nothing to undo"),
        ] {
            let result = try run(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.error.contains(message), "\(arguments): \(result.error)")
        }
    }

    @Test func quitStopsReading() throws {
        let result = try run([], input: "quit\nlogin Ann 5\n")
        #expect(result.status == 0)
        #expect(result.output == ["Logged out"])
    }
}
