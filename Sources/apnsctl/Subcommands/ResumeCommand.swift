import PushBulk
import PushGateway

/// The command that continues a stopped bulk run, ready to paste: built from what the run
/// recorded (``BulkRunContinuation``: its parameters and header), quoted for a shell, fed the
/// same standard input (the same pipe, or the same file redirected), with what to change when
/// the credential stopped the run.
struct ResumeCommand {
    /// The program as it was invoked, so that the command runs the same binary.
    var program: String
    var continuation: BulkRunContinuation?

    init(program: String?, continuation: BulkRunContinuation?) {
        self.program = program ?? "apnsctl"
        self.continuation = continuation
    }

    /// The command line, or nil when the run cannot be resumed (no results file).
    var line: String? {
        guard let continuation else { return nil }
        let arguments = Send.resumeArguments(continuation)
        let words = ([program] + arguments).map(ErrorHints.shellQuoted).joined(separator: " ")
        switch continuation.standardInput {
        case nil, .file, .pipe(nil):
            return words
        case .redirected(let path):
            return words + " < " + ErrorHints.shellQuoted(path)
        case .pipe(let producer?):
            return producer.map(ErrorHints.shellQuoted).joined(separator: " ") + " | " + words
        }
    }

    func render() -> [String] {
        guard let line, let continuation else { return [] }
        var lines: [String] = []
        if case .pipe(nil) = continuation.standardInput {
            let what = continuation.standardInputIsPayload ? "payload" : "tokens"
            lines.append("continue by piping the same \(what) into: \(line)")
        } else {
            lines.append("continue with: \(line)")
        }
        if let credential = continuation.credentialToChange {
            lines.append(
                "with the credential fixed as it is, or with another credential for the same app, topic, push type and environment in place of \(ErrorHints.shellQuoted(credential)) (a universal certificate, or a token key)."
            )
        }
        return lines
    }
}
