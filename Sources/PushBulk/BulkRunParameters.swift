import Foundation
import PushCore

/// The options a run was started with, as the run recorded them in its header (under the key
/// `command`), so that a front end can say how to continue it from the record rather than from
/// whatever its process was given: the credential as given (a stored alias or a file path), and
/// each option by the front end's own name with its values as given (one per time it was given,
/// none for a flag). Which options are recorded, and how they are named and read back, is the
/// front end's: the library keeps them as values and never interprets a name. No secret is
/// recorded: the front end names a password by where it is read from.
///
/// A header of version 2 or 3 recorded a fixed set of values instead (``init(from:)`` reads it
/// into the same form: its keys were the options' names with `_` for `-`).
public struct BulkRunParameters: Codable, Equatable, Sendable {
    /// The credential as given: a stored alias, or a `.p12`/`.pem`/`.p8` path.
    public var credential: String
    /// The options as given, by name, each with its values (none for a flag that was set).
    public var options: [String: [String]]
    /// What the run read from standard input, if anything: a resume must be fed the same.
    public var standardInput: StandardInputUse?
    /// The token input as the run was given it (a path, or `-` for standard input), recorded by
    /// ``BulkSendJob``.
    public var tokens: String?
    /// The connections the run used, recorded by ``BulkSendJob``: what a resume whose journal
    /// is gone may have had in flight is bounded by them.
    public var connections: Int?

    /// What a run reads from standard input.
    public enum StandardInputUse: String, Codable, Sendable {
        case tokens, payload
    }

    public init(credential: String, options: [String: [String]] = [:], standardInput: StandardInputUse? = nil) {
        self.credential = credential
        self.options = options
        self.standardInput = standardInput
    }

    enum CodingKeys: String, CodingKey {
        case credential, options, tokens, connections
        case standardInput = "standard_input"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        credential = try container.decode(String.self, forKey: .credential)
        tokens = try container.decodeIfPresent(String.self, forKey: .tokens)
        connections = try container.decodeIfPresent(Int.self, forKey: .connections)
        if container.contains(.options) {
            options = try container.decode([String: [String]].self, forKey: .options)
            standardInput = try container.decodeIfPresent(StandardInputUse.self, forKey: .standardInput)
        } else {
            options = [:]
            try readVersionThree(try decoder.container(keyedBy: AnyKey.self))
        }
    }

    /// The `command` of a version-2 or version-3 header: its keys are the options' names with
    /// `_` for `-`, a flag is `true`, and the payload's values are grouped under `payload`
    /// (the payload file as its `file`, a Live Activity's values under `event_options` by their
    /// names, a flag as an empty value); `tokens` and `connections` are this type's own, and
    /// `results` is not an option a resume repeats.
    private mutating func readVersionThree(_ container: KeyedDecodingContainer<AnyKey>) throws {
        let own = ["credential", "results", "tokens", "connections"]
        for key in container.allKeys where !own.contains(key.stringValue) {
            let value = try container.decode(RecordedValue.self, forKey: key)
            if key.stringValue == "payload", case .object(let payload) = value {
                for (name, value) in payload {
                    if name == "event_options", case .object(let values) = value {
                        // An empty value was a flag that was set.
                        for (name, value) in values { options[name] = value.words.map { $0 == [""] ? [] : $0 } }
                    } else {
                        options[name == "file" ? "payload" : Self.name(name)] = value.words
                    }
                }
            } else {
                options[Self.name(key.stringValue)] = value.words
            }
        }
        if tokens == "-" {
            standardInput = .tokens
        } else if options["payload"] == ["-"] {
            standardInput = .payload
        }
    }

    private static func name(_ key: String) -> String { key.replacingOccurrences(of: "_", with: "-") }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// A value of a version-3 `command`: words, a flag, or a group of values.
    private enum RecordedValue: Decodable {
        case words([String])
        case flag(Bool)
        case object([String: RecordedValue])

        /// The option's values (none for a flag that was set), or nil for a flag that was not.
        var words: [String]? {
            switch self {
            case .words(let words): words
            case .flag(let set): set ? [] : nil
            case .object: nil
            }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                self = .flag(flag)
            } else if let number = try? container.decode(Int.self) {
                self = .words([String(number)])
            } else if let number = try? container.decode(Double.self) {
                self = .words([String(number)])
            } else if let text = try? container.decode(String.self) {
                self = .words([text])
            } else if let list = try? container.decode([String].self) {
                self = .words(list)
            } else {
                self = .object(try container.decode([String: RecordedValue].self))
            }
        }
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
        switch parameters.standardInput {
        case .tokens?: standardInput = source
        case .payload?:
            standardInput = .pipe(producer: nil)
            isPayload = true
        case nil: break
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
