import Foundation
import SystemPackage

/// The bytes of a path as the user gave them.
///
/// Swift decodes each command-line argument as UTF-8 and replaces what is not UTF-8 with U+FFFD,
/// so a file name in Latin-1 (or any bytes a file system allows) reaches the commands as a
/// String that names no file. The original bytes are still in the process's argv: a path that
/// holds U+FFFD is matched back to the argument (or the value of an `--option=value` argument)
/// it was decoded from, and that argument's bytes are what the file system is asked for.
public enum RawPath {
    /// The bytes to give the file system for `path`, without a terminating NUL.
    public static func bytes(_ path: String) -> [UInt8] {
        guard path.unicodeScalars.contains("\u{FFFD}") else { return Array(path.utf8) }
        for index in 0..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let raw = Array(UnsafeBufferPointer(start: argument, count: strlen(argument))).map {
                UInt8(bitPattern: $0)
            }
            if String(decoding: raw, as: UTF8.self) == path { return raw }
            if let equals = raw.firstIndex(of: UInt8(ascii: "=")) {
                let value = Array(raw[(equals + 1)...])
                if String(decoding: value, as: UTF8.self) == path { return value }
            }
        }
        return Array(path.utf8)
    }

    /// `path` as a `FilePath` holding the bytes the user gave.
    public static func filePath(_ path: String) -> FilePath {
        let raw = bytes(path)
        return raw.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in
                var terminated = Array(characters)
                terminated.append(0)
                return terminated.withUnsafeBufferPointer { FilePath(platformString: $0.baseAddress!) }
            }
        }
    }
}
