import Foundation
import PushCore

/// The options a run was started with, as the run recorded them in its header (version 2,
/// under the key `command`), so that a front end can say how to continue it from the record
/// rather than from whatever its process was given. Sources are kept as they were given (a
/// stored alias or a file path, a payload file or the alert text); the notification's values
/// are the header's own (topic, push type, priority, expiration as an instant, collapse ID), so
/// that a relative expiration is repeated as the time it meant. No secret is recorded: a
/// password is named by where it is read from, and a proxy URL loses its password.
///
/// These are values, not words of a command line: the command line turns them into the
/// arguments of the command that continues the run.
public struct BulkRunParameters: Codable, Equatable, Sendable {
    /// The credential: a stored alias, or a `.p12`/`.pem`/`.p8` path.
    public var credential: String
    /// The store, when the default store was not used.
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

/// Where the run's payload came from, as given: a file (`-` for standard input), the alert's
/// text, title, sound and badge, a background notification, or a Live Activity event and its
/// values.
public struct BulkRunPayload: Codable, Equatable, Sendable {
    public var file: String?
    public var alert: String?
    public var title: String?
    public var sound: String?
    public var badge: Int?
    public var background: Bool?
    /// A Live Activity event and its values, by name (`content-state`, `stale-date`...; an
    /// empty value for a flag that is set).
    public var event: String?
    public var eventOptions: [String: String]?

    public init() {}

    enum CodingKeys: String, CodingKey {
        case file, alert, title, sound, badge, background, event
        case eventOptions = "event_options"
    }
}

/// What continues a stopped run: the parameters it recorded (with the header's notification
/// values), the results file to resume, what feeds standard input, and the credential another
/// may replace after a stop the credential caused. A front end renders it (the command line as
/// the arguments of its resume command).
public struct BulkRunContinuation: Equatable, Sendable {
    /// The run's header, for the notification's values (topic, push type, priority, expiration,
    /// collapse ID).
    public var header: BulkRunHeader
    /// The options the run was started with.
    public var parameters: BulkRunParameters
    /// The results file the continuation resumes.
    public var resultsPath: String
    /// What feeds standard input, when the run reads it: the tokens (a token input of `-`) from a
    /// pipe or a redirected file; a payload read from standard input is a pipe of unknown origin.
    public var standardInput: TokenSource?
    /// True when standard input carries the payload, not the tokens.
    public var standardInputIsPayload: Bool
    /// The credential as given, when APNs refused the credential: another may take its place.
    public var credentialToChange: String?

    public init(
        header: BulkRunHeader,
        parameters: BulkRunParameters,
        resultsPath: String,
        standardInput: TokenSource?,
        standardInputIsPayload: Bool = false,
        credentialToChange: String? = nil
    ) {
        self.header = header
        self.parameters = parameters
        self.resultsPath = resultsPath
        self.standardInput = standardInput
        self.standardInputIsPayload = standardInputIsPayload
        self.credentialToChange = credentialToChange
    }
}

extension BulkRunHeader {
    /// What continues this run with its results in `resultsPath`, fed the same standard input
    /// (`source`, as the run found it), naming the credential when the run stopped because APNs
    /// refused it; nil when the header does not record its parameters (a version-1 header, or a
    /// run a program started without them).
    public func continuation(resultsPath: String, source: TokenSource, credentialStopped: Bool) -> BulkRunContinuation?
    {
        guard let parameters else { return nil }
        var standardInput: TokenSource?
        var isPayload = false
        if parameters.tokens == "-" {
            standardInput = source
        } else if parameters.payload.file == "-" {
            standardInput = .pipe(producer: nil)
            isPayload = true
        }
        return BulkRunContinuation(
            header: self,
            parameters: parameters,
            resultsPath: resultsPath,
            standardInput: standardInput,
            standardInputIsPayload: isPayload,
            credentialToChange: credentialStopped ? parameters.credential : nil
        )
    }
}
