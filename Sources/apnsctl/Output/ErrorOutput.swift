import ArgumentParser
import CredentialFormats
import Foundation
import PushStore

/// A failure of the command line itself, not of a library: standard output that cannot be
/// written, a listener that cannot be opened, a bulk run that stopped, a usage error found after
/// parsing. It is reported through the same path as the libraries' errors.
struct CommandLineError: ReportableError {
    var code: ErrorCode
    var message: String
    var hint: String?
    var subject: ErrorSubject?

    init(
        _ code: ErrorCode,
        _ message: String,
        hint: String? = nil,
        subject: ErrorSubject? = nil
    ) {
        self.code = code
        self.message = message
        self.hint = hint
        self.subject = subject
    }

    /// Standard output (a closed pipe, a full disk) refused the report: exit 2 whatever was found.
    static func standardOutputFailed(_ reason: String) -> CommandLineError {
        CommandLineError(.failed, "standard output could not be written (\(reason)); the output is incomplete.")
    }

    /// A usage error as the argument parser words it: its first line is the message, its
    /// "See 'apnsctl … --help'" line the hint.
    static func usage(_ text: String) -> CommandLineError {
        let lines = TerminalSafe.filter(text, colours: false).split(separator: "\n").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        var message = lines.first ?? "The command line is not valid."
        if message.hasPrefix("Error: ") { message.removeFirst("Error: ".count) }
        let hint = lines.last(where: { $0.hasPrefix("See ") }) ?? "See apnsctl --help."
        return CommandLineError(.usage, message, hint: hint)
    }
}

extension ErrorCode {
    /// The command line cannot be understood (the argument parser's refusals and the options'
    /// own validation).
    static let usage = ErrorCode("usage", failure: .invalidRequest)
}

/// The one rendering of an error, for standard error and for `--json`: the same code, message
/// and hint in both, with the command line's hint (which may name its options) in place of the
/// library's words.
enum ErrorOutput {
    /// "error: MESSAGE" and, when there is one, "  hint: HINT" on the next line. A file name or a
    /// certificate's text in the message may hold anything: it is shown, never obeyed.
    static func text(_ error: any ReportableError, style: TerminalStyle = .stderr) -> String {
        let reported = json(error)
        var text = style.paint("error:", .red, .bold) + " " + reported.message
        if let hint = reported.hint { text += "\n  " + style.paint("hint:", .bold) + " " + hint }
        return text
    }

    /// The `error` object of a JSON report: `{"code", "message", "hint"}`.
    static func json(_ error: any ReportableError) -> ReportedError {
        ReportedError(
            code: error.code.rawValue,
            message: Untrusted.display(error.statement),
            hint: ErrorHints.hint(for: error).map(Untrusted.display)
        )
    }

    /// The document a command that failed under `--json` prints: `{"schema_version": 1, "error": {…}}`.
    struct Document: Encodable {
        var schemaVersion: Int
        var error: ReportedError

        init(_ error: ReportedError) {
            schemaVersion = ReportSchema.schemaVersion
            self.error = error
        }
    }
}

/// Reports an error on standard error, and keeps it for the JSON document if the command ends
/// without its report.
func reportError(_ error: any ReportableError, style: TerminalStyle = .stderr) {
    JSONFailure.note(error)
    printError(ErrorOutput.text(error, style: style))
}

/// The exit status an error calls for: 1 when it is itself a finding about the credential (a
/// server refused the client certificate), 64 when what was asked cannot be done as asked, else
/// 2, the check could not be made.
func exitStatus(for error: any Error) -> ExitCode {
    switch (error as? any ReportableError)?.failure {
    case .problem: return ExitStatus.problem
    case .invalidRequest: return ExitCode(64)
    case .couldNotCheck, nil: return ExitStatus.couldNotCheck
    }
}

/// Reports any of the libraries' errors (or the command line's own) with the command line's hint
/// and returns the exit status it calls for; nil for any other error.
func reportLibraryError(_ error: any Error) -> ExitCode? {
    guard let error = error as? any ReportableError else { return nil }
    reportError(error)
    return exitStatus(for: error)
}

/// Runs a command body, turning the libraries' errors into the project's messages and exit codes:
/// the one way every command handles them. `wording` lets a command word a store refusal its own
/// way (a hint naming its options) before it is reported.
func withUserErrors<R>(
    wording: (CredentialError) -> CredentialError = { $0 },
    _ body: () async throws -> R
) async throws -> R {
    do {
        return try await body()
    } catch let exit as ExitCode {
        throw exit
    } catch {
        if let error = error as? CredentialError {
            reportError(wording(error))
            throw exitStatus(for: error)
        }
        if let status = reportLibraryError(error) { throw status }
        reportError(CommandLineError(.failed, error.localizedDescription))
        throw ExitStatus.couldNotCheck
    }
}
