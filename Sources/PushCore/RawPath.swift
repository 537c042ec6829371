import Foundation

/// The bytes of a path as the user gave them.
///
/// Swift decodes each command-line argument as UTF-8 and replaces what is not UTF-8 with U+FFFD,
/// so a file name in Latin-1 (or any bytes a file system allows) reaches the commands as a
/// String that names no file. The front end that holds the original arguments gives their bytes
/// once, before any path is used (``use(arguments:)``; a library never reads the process's
/// arguments): a path that holds U+FFFD is matched back to the argument (or the value of an
/// `--option=value` argument) it was decoded from, and that argument's bytes are what the file
/// system is asked for.
public enum RawPath {
    private static let given = GivenArguments()

    /// The arguments the program was given, as bytes (each without its terminating NUL).
    public static func use(arguments: [[UInt8]]) { given.set(arguments) }

    /// The bytes to give the file system for `path`, without a terminating NUL.
    public static func bytes(_ path: String) -> [UInt8] { bytes(path, arguments: given.get()) }

    /// The bytes to give the file system for `path`, one of `arguments` (or the value of one
    /// written `--option=value`) when it was decoded from it.
    public static func bytes(_ path: String, arguments: [[UInt8]]) -> [UInt8] {
        guard path.unicodeScalars.contains("\u{FFFD}") else { return Array(path.utf8) }
        for raw in arguments {
            if String(decoding: raw, as: UTF8.self) == path { return raw }
            if let equals = raw.firstIndex(of: UInt8(ascii: "=")) {
                let value = Array(raw[(equals + 1)...])
                if String(decoding: value, as: UTF8.self) == path { return value }
            }
        }
        return Array(path.utf8)
    }

    /// The arguments as the front end gave them, read from any thread.
    private final class GivenArguments: @unchecked Sendable {
        private let lock = NSLock()
        private var arguments: [[UInt8]] = []

        func set(_ arguments: [[UInt8]]) { lock.withLock { self.arguments = arguments } }
        func get() -> [[UInt8]] { lock.withLock { arguments } }
    }
}
