import Foundation
import PushCore

/// The `apnsctl send --tokens` command a run was started with, as the run recorded it in its
/// header (version 2), so that the command that continues it is built from the record rather
/// than from whatever argv the process happens to have. Sources are kept as they were given (a
/// stored alias or a file path, a payload file or the alert text); the notification's values
/// are the header's own (topic, push type, priority, expiration as an instant, collapse ID), so
/// that a relative `--expiration 1h` is repeated as the time it meant. No secret is recorded: a
/// password is named by where it is read from, and a proxy URL loses its password.
public struct BulkRunCommand: Codable, Equatable, Sendable {
    /// The credential argument: a stored alias, or a `.p12`/`.pem`/`.p8` path.
    public var credential: String
    /// `--store`, when the default store was not used.
    public var store: String?
    public var identity: String?
    public var passwordEnv: String?
    public var passwordFile: String?
    public var passwordStdin: Bool?
    public var teamID: String?
    public var keyID: String?
    /// The token file, or `-` for standard input.
    public var tokens: String
    /// The results file the run writes.
    public var results: String?
    /// The environment the run used, given or chosen from the credential: repeated, so that
    /// another credential after a credential stop goes to the same gateway.
    public var environment: String?
    public var gateway: String?
    public var port: Int?
    public var ca: [String]?
    public var proxy: String?
    public var timeout: Double?
    public var payload: BulkRunPayload
    public var connections: Int?
    public var maxAttempts: Int?
    public var allowDuplicates: Bool?
    public var json: Bool?
    public var quiet: Bool?

    public init(credential: String, tokens: String, payload: BulkRunPayload) {
        self.credential = credential
        self.tokens = tokens
        self.payload = payload
    }

    enum CodingKeys: String, CodingKey {
        case credential, store, identity, tokens, results, environment, gateway, port, ca, proxy, timeout, payload
        case connections, json, quiet
        case passwordEnv = "password_env"
        case passwordFile = "password_file"
        case passwordStdin = "password_stdin"
        case teamID = "team_id"
        case keyID = "key_id"
        case maxAttempts = "max_attempts"
        case allowDuplicates = "allow_duplicates"
    }

    /// A proxy URL without its password: `http://user:secret@host:3128` is recorded as
    /// `http://user@host:3128`.
    public static func proxyWithoutPassword(_ proxy: String) -> String {
        guard var parts = URLComponents(string: proxy), parts.password != nil else { return proxy }
        parts.password = nil
        return parts.string ?? proxy
    }
}

/// Where the run's payload came from, as given: a file (`-` for standard input), the alert
/// options, `--background`, or a Live Activity event's options.
public struct BulkRunPayload: Codable, Equatable, Sendable {
    public var file: String?
    public var alert: String?
    public var title: String?
    public var sound: String?
    public var badge: Int?
    public var background: Bool?
    /// A Live Activity event and its options, option name (without `--`) to value.
    public var event: String?
    public var eventOptions: [String: String]?

    public init() {}

    enum CodingKeys: String, CodingKey {
        case file, alert, title, sound, badge, background, event
        case eventOptions = "event_options"
    }

    var arguments: [String] {
        var words: [String] = []
        if let file { words += BulkResumeCommand.option("--payload", file) }
        if let event { words += BulkResumeCommand.option("--event", event) }
        if let alert { words += BulkResumeCommand.option("--alert", alert) }
        if let title { words += BulkResumeCommand.option("--title", title) }
        if let sound { words += BulkResumeCommand.option("--sound", sound) }
        if let badge { words += BulkResumeCommand.option("--badge", String(badge)) }
        if background == true { words.append("--background") }
        for (name, value) in (eventOptions ?? [:]).sorted(by: { $0.key < $1.key }) {
            words += value.isEmpty ? ["--" + name] : BulkResumeCommand.option("--" + name, value)
        }
        return words
    }
}

/// The command that continues a stopped run: its arguments after the program's name (to be
/// quoted for a shell, never split again), what feeds standard input, and the argument another
/// credential may replace after a stop the credential caused.
public struct BulkResumeCommand: Equatable, Sendable {
    public var arguments: [String]
    /// What feeds standard input, when the command reads it: the tokens (`--tokens -`) from a
    /// pipe or a redirected file; a payload read from standard input is a pipe of unknown origin.
    public var standardInput: TokenSource?
    /// True when standard input carries the payload, not the tokens.
    public var standardInputIsPayload: Bool
    /// The credential argument, when APNs refused the credential: another may take its place.
    public var credentialToChange: String?

    public init(
        arguments: [String],
        standardInput: TokenSource?,
        standardInputIsPayload: Bool = false,
        credentialToChange: String? = nil
    ) {
        self.arguments = arguments
        self.standardInput = standardInput
        self.standardInputIsPayload = standardInputIsPayload
        self.credentialToChange = credentialToChange
    }

    /// `--name value`, or `--name=value` when the value starts with `-` and would otherwise
    /// read as an option.
    static func option(_ name: String, _ value: String) -> [String] {
        value.hasPrefix("-") && value != "-" ? [name + "=" + value] : [name, value]
    }
}

extension BulkRunHeader {
    /// The arguments (after the program's name) that continue this run with its results in
    /// `resultsPath`, or nil when the header does not record its command (a version-1 header,
    /// or a run started by a program rather than the command line).
    public func resumeArguments(resultsPath: String) -> [String]? {
        guard let command else { return nil }
        typealias R = BulkResumeCommand
        // A credential path that starts with "-" would read as an option.
        let credential = command.credential.hasPrefix("-") ? "./" + command.credential : command.credential
        var words = ["send", credential]
        if let store = command.store { words += R.option("--store", store) }
        if let identity = command.identity { words += R.option("--identity", identity) }
        if let name = command.passwordEnv { words += R.option("--password-env", name) }
        if let path = command.passwordFile { words += R.option("--password-file", path) }
        if command.passwordStdin == true { words.append("--password-stdin") }
        if let teamID = command.teamID { words += R.option("--team-id", teamID) }
        if let keyID = command.keyID { words += R.option("--key-id", keyID) }
        words += R.option("--tokens", command.tokens)
        words += command.payload.arguments
        if let topic { words += R.option("--topic", topic) }
        words += R.option("--push-type", pushType)
        if let priority { words += ["--priority", String(priority)] }
        if let expiration { words += ["--expiration", String(expiration)] }
        if let collapseID { words += R.option("--collapse-id", collapseID) }
        if let environment = command.environment { words += R.option("--environment", environment) }
        if let gateway = command.gateway { words += R.option("--gateway", gateway) }
        if let port = command.port { words += ["--port", String(port)] }
        for file in command.ca ?? [] { words += R.option("--ca", file) }
        if let proxy = command.proxy { words += R.option("--proxy", proxy) }
        if let timeout = command.timeout { words += ["--timeout", String(timeout)] }
        if let connections = command.connections { words += ["--connections", String(connections)] }
        if let maxAttempts = command.maxAttempts { words += ["--max-attempts", String(maxAttempts)] }
        if command.allowDuplicates == true { words.append("--allow-duplicates") }
        if command.quiet == true { words.append("--quiet") }
        if command.json == true { words.append("--json") }
        return words + R.option("--resume", resultsPath)
    }

    /// The command that continues this run, fed the same standard input (`source`, as the run
    /// found it), naming the credential argument when the run stopped because APNs refused it.
    public func resumeCommand(resultsPath: String, source: TokenSource, credentialStopped: Bool) -> BulkResumeCommand? {
        guard let arguments = resumeArguments(resultsPath: resultsPath), let command else { return nil }
        var standardInput: TokenSource?
        var isPayload = false
        if command.tokens == "-" {
            standardInput = source
        } else if command.payload.file == "-" {
            standardInput = .pipe(producer: nil)
            isPayload = true
        }
        return BulkResumeCommand(
            arguments: arguments,
            standardInput: standardInput,
            standardInputIsPayload: isPayload,
            credentialToChange: credentialStopped ? command.credential : nil
        )
    }
}
