import ArgumentParser
import Foundation
import PushCredentials

/// The project's exit codes (see `apnsctl --help`).
enum ExitStatus {
    static let ok = ExitCode(0)
    static let problem = ExitCode(1)
    static let couldNotCheck = ExitCode(2)
}

/// Prints a user-facing error to stderr in the one format every command uses.
func reportError(_ error: CredentialError, style: TerminalStyle = .stderr) {
    var text = style.paint("error:", .red, .bold) + " " + (error.path.map { "\($0): " } ?? "") + error.message
    if let hint = error.hint { text += "\n  " + style.paint("hint:", .bold) + " " + hint }
    printError(text)
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
