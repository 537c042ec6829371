import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The one wait for a child program's end with a deadline: the deadline only ends a hung test
/// (a program that ignores its signal is a failure to report, not a suite that hangs), and it
/// measures nothing.
extension Process {
    /// Waits until the program has ended, at most `seconds`; true when it ended.
    @discardableResult
    public func waitForExit(within seconds: TimeInterval = 30) -> Bool {
        waitUntil(timeout: seconds) { !isRunning }
    }

    /// Sends `signal` (none when nil: the program was asked to end another way), waits at most
    /// `seconds` for the end, and records an issue and kills the program when it did not come.
    /// Returns when the program has been reaped.
    public func stop(signal: Int32? = SIGTERM, within seconds: TimeInterval = 30, _ what: String? = nil) {
        if let signal, isRunning { kill(processIdentifier, signal) }
        if !waitForExit(within: seconds) {
            let name = what ?? executableURL?.lastPathComponent ?? "a child program"
            Issue.record("\(name) (pid \(processIdentifier)) did not end within \(Int(seconds)) s")
            kill(processIdentifier, SIGKILL)
        }
        waitUntilExit()
    }
}
