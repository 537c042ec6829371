/// A stable, machine-readable name for a kind of failure (`wrong_password`, `connection_refused`),
/// as JSON reports give it in `error.code`.
///
/// One struct over a string with static members, as swift-certificates names its error codes:
/// each code is declared once, with its string, in the
/// module whose error throws it (`extension ErrorCode`); every module's error carries the one
/// type (its `Code`), so a code such as `invalid_team_id` means the same thing whichever module
/// found it. Programs compare with the static members, never with text.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    /// What an error of this code says about the thing checked, declared with the code: a problem
    /// found (a refusal: nothing changed), a request that is wrong as asked, or, for most, a check
    /// that could not be made. It decides the exit status.
    public let failure: FailureKind
    /// A code read back (from JSON): compared by its string, its kind not known.
    public init(rawValue: String) { self.init(rawValue) }
    public init(_ rawValue: String, failure: FailureKind = .couldNotCheck) {
        self.rawValue = rawValue
        self.failure = failure
    }
    /// The code as JSON gives it.
    public var name: String { rawValue }
    public var description: String { rawValue }
    /// Two codes are the same code when their strings are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}

/// What an error is about, so that a person can find it and a program tell two apart.
public enum ErrorSubject: Hashable, Sendable, CustomStringConvertible {
    /// A file (or files) named by its path as it was given.
    case file(String)
    /// A stored credential, by its alias.
    case credential(String)
    /// A server, by its address.
    case server(String)

    public var description: String {
        switch self {
        case .file(let name), .credential(let name), .server(let name): return name
        }
    }
}

/// What a failure says about the thing that was being checked: the exit status it calls for.
public enum FailureKind: Sendable, Hashable {
    /// Checked, and found a problem (a server refused the client certificate).
    case problem
    /// The check could not be made: unreadable input, a network or TLS failure, a secret store
    /// that is not available, a write that failed.
    case couldNotCheck
    /// What was asked cannot be done as asked (a time that has passed, a results file of
    /// another run): the request itself is wrong.
    case invalidRequest
}

/// The one shape of every error the libraries (and the command line) report to a person or a
/// program: a typed ``code``, a ``message`` saying what went wrong, a ``hint`` saying what to do
/// (in words: libraries never name a command-line option; a front end maps the code to its own
/// wording), the ``subject`` it is about, and the ``failure`` kind, which decides the exit status.
///
/// Two errors are equal when their code and subject are: the wording may change, what happened
/// to what does not. Messages and hints never contain a password, a private key or a JWT.
public protocol ReportableError: Error, Equatable, Sendable {
    var code: ErrorCode { get }
    /// What went wrong, as one sentence, without the subject's path.
    var message: String { get }
    /// What to do about it, when there is something to say.
    var hint: String? { get }
    /// The file, credential or server the error is about, when there is one.
    var subject: ErrorSubject? { get }
    /// What the failure says about the check: a problem, could not check, or an invalid request
    /// (its code's kind, unless the error knows better).
    var failure: FailureKind { get }
    /// What to do about it as a value, for a front end to render as its own command.
    var remedy: Remedy? { get }
}

extension ReportableError {
    public var subject: ErrorSubject? { nil }
    public var failure: FailureKind { code.failure }
    public var remedy: Remedy? { nil }

    /// The message as a person reads it: after the file's path when it is about a file.
    public var statement: String {
        if case .file(let path) = subject { return "\(path): \(message)" }
        return message
    }

    /// The error as JSON reports give it.
    public var reported: ReportedError { ReportedError(self) }

    /// The one equality rule of every error: the same code about the same subject.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code && lhs.subject == rhs.subject }
}

extension ReportedError {
    /// Any error's JSON shape: its code, its message after the subject's path, and its hint.
    public init(_ error: some ReportableError) {
        self.init(code: error.code.rawValue, message: error.statement, hint: error.hint)
    }
}

extension ErrorCode {
    /// A failure no module has a more precise code for; its message says what happened.
    public static let failed = ErrorCode("failed")
}
