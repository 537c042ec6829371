import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What every command prints goes through here: Swift's own `print` ignores write errors, so
/// `apnsctl check > /dev/full` would say nothing and exit 0. A failed write is remembered, and
/// the command then ends with exit 2 and a message (see ``APNSCtl/main()``).
enum StandardOutput {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var firstFailure: String?

    /// Why standard output could not be written, if it could not.
    static var failure: String? { lock.withLock { firstFailure } }

    static func write(_ text: String) {
        lock.withLock {
            guard firstFailure == nil else { return }
            if !writeAll(STDOUT_FILENO, Array(text.utf8)) { firstFailure = String(cString: strerror(errno)) }
        }
    }
}

/// Shadows Swift's `print` in this module, so that no command can print without the write being
/// checked.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    StandardOutput.write(items.map { "\($0)" }.joined(separator: separator) + terminator)
}
