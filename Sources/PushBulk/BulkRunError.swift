/// Why a bulk run's files cannot be used: a results file that exists, is held by another run,
/// belongs to another run, cannot be read or written, or tokens that would be typed at a
/// terminal.
///
/// One error type of this module, in swift-certificates' manner: callers compare ``code`` (each
/// declared once, below, with its string), people read ``message`` and ``hint`` (in words: the command line adds its own
/// options from the code), ``path`` is the file it is about, and ``file`` and ``line`` say where
/// it was thrown. Made by the static functions below, never field by field.
public struct BulkRunError: ReportableError, CustomStringConvertible {
    /// A module's codes are ``ErrorCode``s: one string each, the one JSON gives (declared once,
    /// below).
    public typealias Code = ErrorCode

    public let code: Code
    /// The file it is about.
    public let path: String?
    public let message: String
    public let hint: String?
    /// Where it was made (`#fileID`), for a person debugging; never part of what is reported.
    public let file: String
    public let line: UInt

    init(_ code: Code, path: String?, _ message: String, hint: String?, file: String, line: UInt) {
        self.code = code
        self.path = path
        self.message = message
        self.hint = hint
        self.file = file
        self.line = line
    }

    public var subject: ErrorSubject? { path.map(ErrorSubject.file) }

    public var description: String { statement }

}

extension BulkRunError {
    /// A new run was given `path`, a results file that exists.
    public static func resultsExist(path: String, file: String = #fileID, line: UInt = #line) -> BulkRunError {
        BulkRunError(
            .resultsExist,
            path: path,
            "The results file already exists.",
            hint: "Continue that run (resume it), or choose another results file.",
            file: file,
            line: line
        )
    }

    /// Another process holds the lock of `path`; `holder` names it.
    public static func resultsLocked(
        path: String,
        holder: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> BulkRunError {
        BulkRunError(
            .resultsLocked,
            path: path,
            "Another apnsctl run is using this results file now (\(holder)); nothing was sent.",
            hint: "Wait for that run to end (or stop it), then continue with the printed resume command.",
            file: file,
            line: line
        )
    }

    /// The results file to resume cannot be opened (`reason`), or, without one, read.
    public static func resultsUnreadable(
        path: String,
        reason: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> BulkRunError {
        BulkRunError(
            .resultsUnreadable,
            path: path,
            reason.map { "The results file cannot be opened (\($0))." } ?? "The results file to resume cannot be read.",
            hint: "Give the results file of the run to continue.",
            file: file,
            line: line
        )
    }

    /// The results file to resume has no run header.
    public static func noRunHeader(path: String, file: String = #fileID, line: UInt = #line) -> BulkRunError {
        BulkRunError(
            .notAResultsFile,
            path: path,
            "This results file has no run header, so what it was sent with cannot be checked.",
            hint: "Start a new run with a new results file; the lines already done are listed in this one.",
            file: file,
            line: line
        )
    }

    /// Line `number` of the results file to resume is not a result line.
    public static func notAResultLine(
        path: String,
        number: Int,
        file: String = #fileID,
        line: UInt = #line
    ) -> BulkRunError {
        BulkRunError(
            .notAResultsFile,
            path: path,
            "Line \(number) is not a result line of a bulk run.",
            hint: "Give the results file of the run to continue, unchanged.",
            file: file,
            line: line
        )
    }

    /// The results file belongs to another run: `differences` in words ("the payload"...), and
    /// whether the credential differs where another is not accepted.
    public static func runMismatch(
        path: String,
        differences: [String],
        credentialDiffers: Bool,
        file: String = #fileID,
        line: UInt = #line
    ) -> BulkRunError {
        let credentialNote =
            credentialDiffers
            ? " (another credential is accepted only after a run stopped because APNs refused its credential)" : ""
        let verb = differences.count == 1 ? "differs" : "differ"
        return BulkRunError(
            .runMismatch,
            path: path,
            "This results file belongs to another run: \(differences.joined(separator: ", ")) \(verb)\(credentialNote). Nothing was sent.",
            hint:
                "Resume with exactly the credential, topic, push type, payload, gateway and shard the run started with (its results file's header records them), or start a new run with a new results file.",
            file: file,
            line: line
        )
    }

    /// A results file or journal cannot be opened for writing (`reason`).
    public static func cannotOpenForWriting(
        path: String,
        reason: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> BulkRunError {
        BulkRunError(
            .writeFailed,
            path: path,
            "The file cannot be opened for writing (\(reason)).",
            hint: "Check the folder exists and is writable.",
            file: file,
            line: line
        )
    }

    /// A torn results file or journal cannot be cut back to its last whole line (`reason`).
    public static func cannotRepair(
        path: String,
        reason: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> BulkRunError {
        BulkRunError(
            .writeFailed,
            path: path,
            "The file cannot be repaired (\(reason)).",
            hint: "Check the file is writable and the disk has space.",
            file: file,
            line: line
        )
    }

    /// The run recorded in `path` did not finish and its journal is gone: up to `inFlightBound`
    /// notifications may have been in flight, and a resume would send them again unmarked.
    public static func journalMissing(
        path: String,
        inFlightBound: Int,
        file: String = #fileID,
        line: UInt = #line
    ) -> BulkRunError {
        BulkRunError(
            .journalMissing,
            path: path,
            "The run in this results file did not finish, and its journal (\(ResumeState.journalPath(forResults: path))) "
                + "is missing: up to \(inFlightBound) notifications may have been in flight when it stopped, and which "
                + "ones cannot be known. Resuming would send them again, and those devices would get them twice. Nothing was sent.",
            hint:
                "Put the journal back beside the results file (it is the results file's name with .journal added), "
                + "or resume accepting that up to \(inFlightBound) devices may get the notification twice.",
            file: file,
            line: line
        )
    }

    /// Tokens would be read from standard input, and it is a terminal.
    public static func terminalInput(file: String = #fileID, line: UInt = #line) -> BulkRunError {
        BulkRunError(
            .terminalInput,
            path: nil,
            "Standard input is a terminal: the tokens are read from a file or a pipe, never typed.",
            hint: "Pipe the tokens in, or give the file itself.",
            file: file,
            line: line
        )
    }
}

extension ErrorCode {
    /// A new run was given a results file that exists.
    public static let resultsExist = ErrorCode("results_exist", failure: .problem)
    /// Another process runs (or resumes) this results file now.
    public static let resultsLocked = ErrorCode("results_locked")
    /// The results file to resume cannot be read.
    public static let resultsUnreadable = ErrorCode("results_unreadable")
    /// Tokens would be read from a terminal.
    public static let terminalInput = ErrorCode("terminal_input", failure: .invalidRequest)
    /// The run to resume did not finish and its journal is gone.
    public static let journalMissing = ErrorCode("journal_missing", failure: .problem)
    /// A results file whose run is not the one being resumed (another credential, topic,
    /// push type, payload or gateway).
    public static let runMismatch = ErrorCode("run_mismatch", failure: .invalidRequest)
    /// A results file that was not written by a bulk run.
    public static let notAResultsFile = ErrorCode("not_a_results_file", failure: .invalidRequest)
    /// Results files given together that belong to different runs (another notification,
    /// credential, gateway, token file or number of shards).
    public static let runsDiffer = ErrorCode("runs_differ", failure: .invalidRequest)
}
