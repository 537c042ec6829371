/// Why a bulk run's files cannot be used: a results file that exists, is held by another run,
/// belongs to another run, cannot be read or written, or a resume that read no tokens.
public struct BulkRunError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Code: String, Sendable {
        /// A new run was given a results file that exists.
        case resultsExist = "results_exist"
        /// Another process runs (or resumes) this results file now.
        case resultsLocked = "results_locked"
        /// The results file to resume cannot be read.
        case resultsUnreadable = "results_unreadable"
        /// A file that is not a bulk run's results (or its journal) was given.
        case notAResultsFile = "not_a_results_file"
        /// The results belong to another run (credential, topic, push type, payload, gateway).
        case runMismatch = "run_mismatch"
        /// The results or the journal cannot be opened or written.
        case writeFailed = "write_failed"
        /// Tokens would be read from a terminal.
        case terminalInput = "terminal_input"
    }

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

    public var description: String { (path.map { "\($0): " } ?? "") + message }

    /// Usage errors (exit 64): the user asked for something that is not this run.
    public var isUsageError: Bool { [.runMismatch, .notAResultsFile, .terminalInput].contains(code) }
}
