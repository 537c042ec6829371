import ArgumentParser
import Foundation
import PushCredentials

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
    static func note(code: String, message: String, hint: String?) {
        guard error == nil else { return }
        error = ReportedError(code: code, message: message, hint: hint)
    }

    /// An error printed as text only ("error: …\n  hint: …"), when no coded error came first.
    static func noteText(_ text: String) {
        guard error == nil else { return }
        let plain = TerminalSafe.filter(text, colours: false)
        guard plain.hasPrefix("error: ") else { return }
        var lines = plain.dropFirst("error: ".count).split(separator: "\n", omittingEmptySubsequences: false).map(
            String.init
        )
        var hint: String?
        if let index = lines.firstIndex(where: { $0.hasPrefix("  hint: ") }) {
            hint = String(lines[index].dropFirst("  hint: ".count))
            lines.removeSubrange(index...)
        }
        note(code: "failed", message: lines.joined(separator: "\n"), hint: hint)
    }

    /// A usage error as the argument parser words it: its first line is the message, its
    /// "See 'apnsctl … --help'" line the hint.
    static func noteUsage(_ text: String) {
        let lines = TerminalSafe.filter(text, colours: false).split(separator: "\n").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        var message = lines.first ?? "The command line is not valid."
        if message.hasPrefix("Error: ") { message.removeFirst("Error: ".count) }
        let hint = lines.last(where: { $0.hasPrefix("See ") }) ?? "See apnsctl --help."
        note(code: "usage", message: message, hint: hint)
    }

    /// Prints the error object when JSON was asked and no report was printed.
    static func finish() {
        guard requested, !printed else { return }
        struct Output: Encodable {
            var schemaVersion: Int
            var error: ReportedError
        }
        let error =
            self.error
            ?? ReportedError(code: "failed", message: "The command failed; standard error says why.", hint: nil)
        try? printJSON(Output(schemaVersion: ReportSchema.schemaVersion, error: error))
    }
}
