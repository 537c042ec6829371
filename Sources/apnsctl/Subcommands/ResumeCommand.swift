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
        let arguments = Self.arguments(continuation)
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

    /// The arguments (after the program's name) that continue the run: its recorded options,
    /// the header's notification values, and `--resume` with the results file. Exact words, to
    /// be quoted for a shell and never split again.
    static func arguments(_ continuation: BulkRunContinuation) -> [String] {
        let parameters = continuation.parameters
        let header = continuation.header
        // A credential path that starts with "-" would read as an option.
        let credential = parameters.credential.hasPrefix("-") ? "./" + parameters.credential : parameters.credential
        var words = ["send", credential]
        if let store = parameters.store { words += option("--store", store) }
        if let identity = parameters.identity { words += option("--identity", identity) }
        if let name = parameters.passwordEnv { words += option("--password-env", name) }
        if let path = parameters.passwordFile { words += option("--password-file", path) }
        if parameters.passwordStdin == true { words.append("--password-stdin") }
        if let teamID = parameters.teamID { words += option("--team-id", teamID) }
        if let keyID = parameters.keyID { words += option("--key-id", keyID) }
        words += option("--tokens", parameters.tokens)
        words += payloadArguments(parameters.payload)
        if let topic = header.topic { words += option("--topic", topic) }
        words += option("--push-type", header.pushType)
        if let priority = header.priority { words += ["--priority", String(priority)] }
        if let expiration = header.expiration { words += ["--expiration", String(expiration)] }
        if let collapseID = header.collapseID { words += option("--collapse-id", collapseID) }
        if let environment = parameters.environment { words += option("--environment", environment) }
        if let gateway = parameters.gateway { words += option("--gateway", gateway) }
        if let port = parameters.port { words += ["--port", String(port)] }
        for file in parameters.ca ?? [] { words += option("--ca", file) }
        if let proxy = parameters.proxy { words += option("--proxy", proxy) }
        if let timeout = parameters.timeout { words += ["--timeout", String(timeout)] }
        if let connections = parameters.connections { words += ["--connections", String(connections)] }
        if let maxAttempts = parameters.maxAttempts { words += ["--max-attempts", String(maxAttempts)] }
        if parameters.allowDuplicates == true { words.append("--allow-duplicates") }
        if parameters.quiet == true { words.append("--quiet") }
        if parameters.json == true { words.append("--json") }
        return words + option("--resume", continuation.resultsPath)
    }

    /// The payload's options as the run was given them.
    private static func payloadArguments(_ payload: BulkRunPayload) -> [String] {
        var words: [String] = []
        if let file = payload.file { words += option("--payload", file) }
        if let event = payload.event { words += option("--event", event) }
        if let alert = payload.alert { words += option("--alert", alert) }
        if let title = payload.title { words += option("--title", title) }
        if let sound = payload.sound { words += option("--sound", sound) }
        if let badge = payload.badge { words += option("--badge", String(badge)) }
        if payload.background == true { words.append("--background") }
        for (name, value) in (payload.eventOptions ?? [:]).sorted(by: { $0.key < $1.key }) {
            words += value.isEmpty ? ["--" + name] : option("--" + name, value)
        }
        return words
    }

    /// `--name value`, or `--name=value` when the value starts with `-` and would otherwise
    /// read as an option.
    static func option(_ name: String, _ value: String) -> [String] {
        value.hasPrefix("-") && value != "-" ? [name + "=" + value] : [name, value]
    }
}
