import Amber
import Foundation

/// `cookies`: seed 001's seller status, with the state in an `ObservableValue` that keeps undo history.
///
///     cookies "login Ann 50" "sell 12" undo status     commands as arguments
///     cookies                                          commands from standard input
@main
@MainActor
enum CookiesApp {
    static func main() {
        let state = ObservableValue(AppState.loggedOut, historyLimit: 100)
        let screen = Screen()
        // Called at once, then on every change: the screen only ever renders the view model.
        state.addObserver(screen) { screen, state in screen.render(StatusViewModel(state: state)) }

        let arguments = Array(CommandLine.arguments.dropFirst())
        let interactive = arguments.isEmpty && isatty(STDIN_FILENO) == 1
        var lines = arguments.makeIterator()
        while true {
            if interactive { print("> ", terminator: "") }
            guard let line = arguments.isEmpty ? readLine() : lines.next() else { break }
            switch run(line, on: state, screen: screen) {
            case .continue: continue
            case .quit: return
            case .failed(let message):
                FileHandle.standardError.write(Data("cookies: \(message)\n".utf8))
                if !interactive { exit(1) }
            }
        }
    }

    enum Outcome { case `continue`, quit, failed(String) }

    static func run(_ line: String, on state: ObservableValue<AppState>, screen: Screen) -> Outcome {
        let words = line.split(separator: " ").map(String.init)
        switch (words.first, words.count) {
        case (nil, _):
            return .continue
        case ("status", 1):
            screen.render(StatusViewModel(state: state.value), always: true)
        case ("login", 3...):
            guard let target = Int(words.last!), target > 0 else {
                return .failed("the target must be a positive number")
            }
            guard case .loggedOut = state.value else { return .failed("already logged in; log out first") }
            state.update { $0.login(name: words.dropFirst().dropLast().joined(separator: " "), target: target) }
        case ("sell", 2):
            guard let boxes = Int(words[1]), boxes > 0 else { return .failed("sell needs a positive number of boxes") }
            guard case .loggedIn = state.value else { return .failed("log in first") }
            state.update { $0.sell(boxes: boxes) }
        case ("logout", 1):
            state.update { $0.logout() }
        case ("undo", 1):
            guard state.canUndo else { return .failed("nothing to undo") }
            state.undo()
        case ("redo", 1):
            guard state.canRedo else { return .failed("nothing to redo") }
            state.redo()
        case ("quit", 1):
            return .quit
        default:
            return .failed(
                "unknown command '\(line)'; commands: status, login NAME TARGET, sell N, undo, redo, logout, quit")
        }
        return .continue
    }
}

/// Prints the view model when it changes.
@MainActor
final class Screen {
    private var shown: StatusViewModel?

    func render(_ model: StatusViewModel, always: Bool = false) {
        guard always || model != shown else { return }
        shown = model
        print(model.line)
    }
}
