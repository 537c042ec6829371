import PushCore
import PushGateway

/// The command that continues a stopped bulk run, ready to paste: the run's own arguments with
/// the results file given to --resume, fed the same tokens (the same pipe, or the same file
/// redirected), and what to change when the credential stopped the run.
struct ResumeCommand {
    var arguments: [String]
    var resultsPath: String?
    var source: TokenSource
    /// The credential argument, when APNs refused it: another one may take its place.
    var credential: String?

    init(arguments: [String], resultsPath: String?, source: TokenSource, credential: String?) {
        self.arguments = arguments
        self.resultsPath = resultsPath
        self.source = source
        self.credential = credential
    }

    /// The command that continues `outcome`'s run: its results file and token input as the
    /// run recorded them.
    init(outcome: BulkSendJob.Outcome, arguments: [String], credential: String?) {
        self.init(
            arguments: arguments,
            resultsPath: outcome.resultsPath,
            source: outcome.source,
            credential: credential
        )
    }

    /// The run's words without its results options.
    var runWords: [String] {
        var words: [String] = [arguments.first ?? "apnsctl"]
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            if ["--results", "--resume"].contains(argument) {
                index += 2
                continue
            }
            if argument.hasPrefix("--results=") || argument.hasPrefix("--resume=") {
                index += 1
                continue
            }
            words.append(argument)
            index += 1
        }
        return words
    }

    /// The command line, or nil when the run cannot be resumed (no results file).
    var line: String? {
        guard let resultsPath else { return nil }
        let command = (runWords + ["--resume", resultsPath]).map(ErrorHints.shellQuoted).joined(separator: " ")
        switch source {
        case .file:
            return command
        case .redirected(let path):
            return command + " < " + ErrorHints.shellQuoted(path)
        case .pipe(let producer?):
            return producer.map(ErrorHints.shellQuoted).joined(separator: " ") + " | " + command
        case .pipe(nil):
            return command
        }
    }

    func render() -> [String] {
        guard let line else { return [] }
        var lines: [String] = []
        if case .pipe(nil) = source {
            lines.append("continue by piping the same tokens into: \(line)")
        } else {
            lines.append("continue with: \(line)")
        }
        if let credential {
            lines.append(
                "with the credential fixed as it is, or with another credential for the same app, topic, push type and environment in place of \(ErrorHints.shellQuoted(credential)) (a universal certificate, or a token key)."
            )
        }
        return lines
    }
}
