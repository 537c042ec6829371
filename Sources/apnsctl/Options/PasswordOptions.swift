import ArgumentParser
import Foundation
import PushCredentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a command gets the password of a file it reads. There is deliberately no
/// `--password VALUE`: a value in argv is visible to every user of the machine.
struct PasswordOptions: ParsableArguments {
    @Flag(name: .customLong("password-stdin"), help: "Read the password from the first line of standard input.")
    var passwordStdin = false

    @Option(
        name: .customLong("password-env"),
        help: ArgumentHelp("Read the password from this environment variable.", valueName: "NAME")
    )
    var passwordEnv: String?

    @Option(
        name: .customLong("password-file"),
        help: ArgumentHelp("Read the password from the first line of this file.", valueName: "FILE"),
        completion: .file()
    )
    var passwordFile: String?

    func validate() throws {
        let given = [passwordStdin, passwordEnv != nil, passwordFile != nil].filter { $0 }.count
        if given > 1 {
            throw ValidationError("Give at most one of --password-stdin, --password-env and --password-file.")
        }
    }

    var isGiven: Bool { passwordStdin || passwordEnv != nil || passwordFile != nil }

    /// The source to read passwords from; without an option, a prompt when standard input
    /// is a terminal, else none (files that need a password then fail with a clear message).
    func source(prompt: String = "Password") -> PasswordSource {
        if passwordStdin {
            // Standard input can be read only once, however many files need the password.
            let once = Once<Result<SecretBytes, any Error>>()
            return PasswordSource { _ in
                try once.value {
                    Result { try PasswordOptions.readLine(from: FileHandle.standardInput, what: "standard input") }
                }.get()
            }
        }
        if let name = passwordEnv {
            return PasswordSource { _ in
                // The variable's raw bytes, as a file or standard input would give them: Foundation's
                // view of the environment decodes UTF-8 and drops what is not, which would make a
                // Latin-1 password that works from a file fail from the environment.
                guard let raw = getenv(name) else {
                    throw CredentialError(
                        .invalidArgument,
                        path: nil,
                        "The environment variable \(name) named by --password-env is not set.",
                        hint: "Export it first, e.g. in CI from the job's secrets."
                    )
                }
                let length = strlen(raw)
                return SecretBytes(
                    Array(
                        UnsafeBufferPointer(
                            start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self),
                            count: length
                        )
                    )
                )
            }
        }
        if let path = passwordFile {
            return PasswordSource { _ in
                let descriptor = InputFile.openForReading(path)
                guard descriptor >= 0 else {
                    throw CredentialError(
                        .fileNotFound,
                        path: path,
                        "The password file named by --password-file cannot be opened.",
                        hint: "Check the path and its permissions."
                    )
                }
                let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                defer { try? handle.close() }
                return try PasswordOptions.readLine(from: handle, what: path)
            }
        }
        guard isatty(STDIN_FILENO) == 1 else { return .none }
        return PasswordSource(isInteractive: true) { request in
            let label = request.isRetry ? "Wrong password, try again" : "\(prompt) for \(request.what) \(request.path)"
            return TerminalPrompt.readSecret(prompt: "\(label): ")
        }
    }

    /// Reads up to the first newline; a trailing CR is dropped too. The password may be empty.
    static func readLine(from handle: FileHandle, what: String) throws -> SecretBytes {
        var bytes: [UInt8] = []
        while true {
            var byte: UInt8 = 0
            let count = read(handle.fileDescriptor, &byte, 1)
            if count < 0, errno == EINTR { continue }
            if count < 0 {
                throw CredentialError(
                    .unreadable,
                    path: nil,
                    "The password cannot be read from \(what) (\(String(cString: strerror(errno)))).",
                    hint: "Give a file (not a folder) or a pipe that holds the password."
                )
            }
            if count == 0 { break }
            if byte == 0x0A { break }
            bytes.append(byte)
            if bytes.count > 64 * 1024 {
                throw CredentialError(
                    .invalidArgument,
                    path: nil,
                    "The password read from \(what) is longer than 64 KiB.",
                    hint: "Give only the password, on one line."
                )
            }
        }
        if bytes.last == 0x0D { bytes.removeLast() }
        let secret = SecretBytes(bytes)
        for index in bytes.indices { bytes[index] = 0 }
        return secret
    }
}

/// Reads a line from the terminal with echo off, restoring the terminal even on Ctrl-C.
enum TerminalPrompt {
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var savedFD: Int32 = -1

    static func readSecret(prompt: String) -> SecretBytes? {
        let fd = STDIN_FILENO
        var original = termios()
        guard tcgetattr(fd, &original) == 0 else { return nil }
        saved = original
        savedFD = fd
        signal(SIGINT) { signalNumber in
            if TerminalPrompt.savedFD >= 0 { tcsetattr(TerminalPrompt.savedFD, TCSANOW, &TerminalPrompt.saved) }
            signal(signalNumber, SIG_DFL)
            raise(signalNumber)
        }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        // Echo goes off before the prompt appears, so even an answer pasted the moment the
        // prompt shows is never echoed. TCSANOW keeps what was typed ahead.
        tcsetattr(fd, TCSANOW, &silent)
        writeAll(STDERR_FILENO, Array(prompt.utf8))
        defer {
            tcsetattr(fd, TCSANOW, &original)
            savedFD = -1
            signal(SIGINT, SIG_DFL)
            writeAll(STDERR_FILENO, [0x0A])
        }
        return try? PasswordOptions.readLine(from: FileHandle.standardInput, what: "the terminal")
    }
}
