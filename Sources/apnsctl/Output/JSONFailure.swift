import ArgumentParser
import Foundation
import PushStore

/// The JSON contract's promise for failures: when `--json` was asked and the command failed
/// before it printed its report, standard output still gets one JSON object,
/// `{"schema_version": 1, "error": {"code", "message", "hint"}}`, with the error that was
/// printed on standard error.
enum JSONFailure {
    nonisolated(unsafe) static var requested = false
    nonisolated(unsafe) static var printed = false
    nonisolated(unsafe) private(set) static var error: ReportedError?

    /// Whether the command line asks for JSON (`--json`, `--format json`), up to a `--`.
    static func asksForJSON(_ arguments: [String]) -> Bool {
        var previous = ""
        for argument in arguments.dropFirst() {
            if argument == "--" { return false }
            if argument == "--json" || argument == "--format=json" || (previous == "--format" && argument == "json") {
                return true
            }
            previous = argument
        }
        return false
    }

    /// Keeps the first error a command reports: the one that stopped it.
    static func note(_ reported: any ReportableError) {
        guard error == nil else { return }
        error = ErrorOutput.json(reported)
    }

    /// Prints the error object when JSON was asked and no report was printed.
    static func finish() {
        guard requested, !printed else { return }
        let error =
            self.error
            ?? ErrorOutput.json(CommandLineError(.failed, "The command failed; standard error says why."))
        try? printJSON(ErrorOutput.Document(error))
    }
}
