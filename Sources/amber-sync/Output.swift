import Foundation

/// What the commands print on stdout: whole lines, written at once (no buffering), so a parent
/// process reading a pipe sees each line as soon as it is printed.
enum Output {
    /// Writes `text` and a newline to stdout, unbuffered.
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}

/// A command that could not do its work, in one sentence.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
