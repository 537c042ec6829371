import PushBulk
import PushGateway

/// The command that continues a stopped bulk run, ready to paste: the library builds it from
/// what the run recorded (``BulkResumeCommand``); this only quotes it for a shell, feeds it the
/// same standard input (the same pipe, or the same file redirected), and says what to change
/// when the credential stopped the run.
struct ResumeCommand {
    /// The program as it was invoked, so that the command runs the same binary.
    var program: String
    var command: BulkResumeCommand?

    init(program: String?, command: BulkResumeCommand?) {
        self.program = program ?? "apnsctl"
        self.command = command
    }

    /// The command line, or nil when the run cannot be resumed (no results file).
    var line: String? {
        guard let command else { return nil }
        let words = ([program] + command.arguments).map(ErrorHints.shellQuoted).joined(separator: " ")
        switch command.standardInput {
        case nil, .file, .pipe(nil):
            return words
        case .redirected(let path):
            return words + " < " + ErrorHints.shellQuoted(path)
        case .pipe(let producer?):
            return producer.map(ErrorHints.shellQuoted).joined(separator: " ") + " | " + words
        }
    }

    func render() -> [String] {
        guard let line, let command else { return [] }
        var lines: [String] = []
        if case .pipe(nil) = command.standardInput {
            let what = command.standardInputIsPayload ? "payload" : "tokens"
            lines.append("continue by piping the same \(what) into: \(line)")
        } else {
            lines.append("continue with: \(line)")
        }
        if let credential = command.credentialToChange {
            lines.append(
                "with the credential fixed as it is, or with another credential for the same app, topic, push type and environment in place of \(ErrorHints.shellQuoted(credential)) (a universal certificate, or a token key)."
            )
        }
        return lines
    }
}
