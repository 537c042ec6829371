import ArgumentParser
import Foundation
import PushCredentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The project's exit codes (see `apnsctl --help`).
enum ExitStatus {
    static let ok = ExitCode(0)
    static let problem = ExitCode(1)
    static let couldNotCheck = ExitCode(2)
}

/// Prints a user-facing error to stderr in the one format every command uses.
func reportError(_ error: CredentialError, style: TerminalStyle = .stderr) {
    JSONFailure.note(
        code: error.code.name,
        message: Untrusted.display((error.path.map { "\($0): " } ?? "") + error.message),
        hint: ErrorHints.hint(for: error).map(Untrusted.display)
    )
    // A file name or a certificate's text in the message may hold anything: shown, never obeyed.
    var text =
        style.paint("error:", .red, .bold) + " "
        + Untrusted.display((error.path.map { "\($0): " } ?? "") + error.message)
    if let hint = ErrorHints.hint(for: error) {
        text += "\n  " + style.paint("hint:", .bold) + " " + Untrusted.display(hint)
    }
    printError(text)
}

func printError(_ text: String) {
    JSONFailure.noteText(text)
    writeAll(STDERR_FILENO, Array(TerminalSafe.filter(text + "\n", colours: colourErr.enabled).utf8))
}

/// Writes to a file descriptor without Foundation's trapping FileHandle.write: a closed pipe or
/// a full disk is an error to report, not a crash.
@discardableResult
func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0, errno == EINTR { continue }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }
}

/// Writes to standard output, failing with exit 2 and a message when it cannot.
func writeStandardOutput(_ bytes: [UInt8]) throws {
    guard writeAll(STDOUT_FILENO, bytes) else {
        printError(
            "error: standard output could not be written (\(String(cString: strerror(errno)))); the output is incomplete."
        )
        throw ExitStatus.couldNotCheck
    }
}
