import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a program keeps a password: the environment (CI secrets), a file (a mounted secret),
/// or standard input (a pipe). None of them puts the password in argv.
extension PasswordSource {
    /// The raw bytes of the environment variable `name`, as a file or standard input would give
    /// them: Foundation's view of the environment decodes UTF-8 and drops what is not, which
    /// would make a Latin-1 password that works from a file fail from the environment.
    ///
    /// `namedBy` says, in an error, what named the variable (a program's own option, say);
    /// without it the variable is named alone.
    public static func environment(_ name: String, namedBy: String? = nil) -> PasswordSource {
        PasswordSource { _ in
            guard let raw = getenv(name) else {
                throw CredentialError(
                    .invalidArgument,
                    "The environment variable \(name)\(namedBy.map { " named by \($0)" } ?? " that holds the password") is not set.",
                    hint: "Export it first, e.g. in CI from the job's secrets."
                )
            }
            let bytes = UnsafeBufferPointer(
                start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self),
                count: strlen(raw)
            )
            return SecretBytes(Array(bytes))
        }
    }

    /// The first line of the file at `path`, read each time a password is needed.
    public static func file(_ path: String, namedBy: String? = nil) -> PasswordSource {
        PasswordSource { _ in
            // Without blocking, as every file is opened: a FIFO nobody writes to would hold open(2).
            let descriptor = InputFile.openForReading(path, flags: O_NONBLOCK)
            guard descriptor >= 0 else {
                throw CredentialError.fileNotFound(
                    path: path,
                    "The password file\(namedBy.map { " named by \($0)" } ?? "") cannot be opened.",
                    hint: "Check the path and its permissions."
                )
            }
            defer { close(descriptor) }
            return try readLine(from: descriptor, what: path)
        }
    }

    /// The first line of standard input, read once however many files need the password
    /// (standard input cannot be read twice).
    public static func standardInput() -> PasswordSource {
        let once = Once<Result<SecretBytes, any Error>>()
        return PasswordSource { _ in
            try once.value { Result { try readLine(from: STDIN_FILENO, what: "standard input") } }.get()
        }
    }

    /// Reads up to the first newline; a trailing CR is dropped too. The password may be empty.
    /// Byte by byte, so that nothing after the line is taken from a pipe others read on. The
    /// line must come within ``InputFile/streamDeadline``, as any file's end must.
    public static func readLine(from descriptor: Int32, what: String) throws -> SecretBytes {
        var bytes: [UInt8] = []
        defer { for index in bytes.indices { bytes[index] = 0 } }
        let deadline = ContinuousClock.now + InputFile.streamDeadline
        while true {
            let readable: Bool
            do throws(InputFile.WaitFailure) {
                readable = try InputFile.waitUntilReadable(descriptor, until: deadline)
            } catch {
                throw CredentialError(
                    .unreadable,
                    "The password cannot be read from \(what) (\(String(cString: strerror(error.code)))).",
                    hint: "Give a file (not a folder) or a pipe that holds the password."
                )
            }
            guard readable else {
                let seconds = InputFile.streamDeadline.components.seconds
                throw CredentialError(
                    .unreadable,
                    "No password line came from \(what) in \(seconds) seconds: apnsctl waits at most \(seconds) seconds for one.",
                    hint: "Give a file that holds the password, or a pipe from a command that writes it and ends."
                )
            }
            var byte: UInt8 = 0
            let count = systemRead(descriptor, &byte, 1)
            if count < 0, errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
            if count < 0 {
                throw CredentialError(
                    .unreadable,
                    "The password cannot be read from \(what) (\(String(cString: strerror(errno)))).",
                    hint: "Give a file (not a folder) or a pipe that holds the password."
                )
            }
            if count == 0 || byte == 0x0A { break }
            bytes.append(byte)
            if bytes.count > 64 * 1024 {
                throw CredentialError(
                    .invalidArgument,
                    "The password read from \(what) is longer than 64 KiB.",
                    hint: "Give only the password, on one line."
                )
            }
        }
        if bytes.last == 0x0D { bytes.removeLast() }
        return SecretBytes(bytes)
    }
}
