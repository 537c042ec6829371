import PushCore
/// Why a bulk run's files cannot be used: a results file that exists, is held by another run,
/// belongs to another run, cannot be read or written, or a resume that read no tokens.
public struct BulkRunError: ReportableError, CustomStringConvertible {
    /// The codes are ``ErrorCode``'s static members; those of a bulk run's files are declared
    /// here, and ``ErrorCode/runMismatch``, ``ErrorCode/notAResultsFile`` and
    /// ``ErrorCode/writeFailed`` beside ``PushCoreError``.
    public typealias Code = ErrorCode

    public let code: Code
    /// The file it is about.
    public let path: String?
    public let message: String
    public let hint: String?

    public init(_ code: Code, path: String?, _ message: String, hint: String? = nil) {
        self.code = code
        self.path = path
        self.message = message
        self.hint = hint
    }

    public var subject: ErrorSubject? { path.map(ErrorSubject.file) }

    public var description: String { statement }

    /// Usage errors (exit 64): the user asked for something that is not this run.
    public var isUsageError: Bool { [.runMismatch, .notAResultsFile, .terminalInput].contains(code) }

    /// A results file that exists is a refusal (exit 1, nothing changed), as every output file
    /// that exists is; the others are usage errors or could not be done.
    public var failure: FailureKind {
        if code == .resultsExist { return .problem }
        return isUsageError ? .invalidRequest : .couldNotCheck
    }
}

extension ErrorCode {
    /// A new run was given a results file that exists.
    public static let resultsExist = ErrorCode("results_exist")
    /// Another process runs (or resumes) this results file now.
    public static let resultsLocked = ErrorCode("results_locked")
    /// The results file to resume cannot be read.
    public static let resultsUnreadable = ErrorCode("results_unreadable")
    /// Tokens would be read from a terminal.
    public static let terminalInput = ErrorCode("terminal_input")
}
