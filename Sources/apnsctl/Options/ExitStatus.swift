import ArgumentParser
import Foundation
import PushStore

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

    /// The exit status of a check's outcome: the one place a verdict becomes a status.
    static func of(_ outcome: CheckOutcome) -> ExitCode {
        switch outcome {
        case .allWell: return ok
        case .problemFound: return problem
        case .couldNotCheck: return couldNotCheck
        }
    }

    /// Ends a command whose check did not come out all well with the outcome's status.
    static func end(with outcome: CheckOutcome) throws {
        if outcome != .allWell { throw of(outcome) }
    }
}

/// Writes a line to standard error: notes, warnings and progress, and the errors that
/// ``reportError(_:style:)`` renders.
func printError(_ text: String) {
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
        reportError(CommandLineError.standardOutputFailed(String(cString: strerror(errno))))
        throw ExitStatus.couldNotCheck
    }
}
