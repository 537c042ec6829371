import ArgumentParser
import Foundation
import PushStore

/// The JSON contract's promise for failures: when `--json` was asked and the command failed
/// before it printed its report, standard output still gets one JSON object,
/// `{"schema_version": 1, "error": {"code", "message", "hint"}}`, with the error that was
/// printed on standard error.
enum JSONFailure {
    static var requested: Bool {
        get { RunContext.current[\.jsonRequested] }
        set { RunContext.current[\.jsonRequested] = newValue }
    }
    static var printed: Bool {
        get { RunContext.current[\.reportPrinted] }
        set { RunContext.current[\.reportPrinted] = newValue }
    }
    static var error: ReportedError? { RunContext.current[\.firstError] }

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
        let json = ErrorOutput.json(reported)
        RunContext.current.with { if $0.firstError == nil { $0.firstError = json } }
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
