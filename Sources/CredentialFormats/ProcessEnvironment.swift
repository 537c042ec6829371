#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's environment, read one variable at a time.
///
/// `ProcessInfo.processInfo.environment` builds a dictionary of every variable, on every call:
/// in a CI job's or a desktop session's environment (hundreds of variables) that was about a
/// millisecond of a cold `send`, which asked it five times for three names
/// (docs/performance.md). Code that reads a few known names asks for those.
public enum ProcessEnvironment {
    /// The variable's value, or nil when it is not set.
    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The variables among `names` that are set: the default for a function that reads those
    /// names from an environment it is given (tests give their own).
    public static func subset(_ names: [String]) -> [String: String] {
        var found: [String: String] = [:]
        for name in names {
            if let value = value(name) { found[name] = value }
        }
        return found
    }
}
