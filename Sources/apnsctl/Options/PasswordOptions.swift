import ArgumentParser
import CredentialFormats
import Foundation
import PushStore

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

    @Option(help: ArgumentHelp("Read the password from this environment variable.", valueName: "NAME"))
    var passwordEnv: String?

    @Option(
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
        if passwordStdin { return .standardInput() }
        if let name = passwordEnv { return .environment(name, namedBy: "--password-env") }
        if let path = passwordFile { return .file(path, namedBy: "--password-file") }
        guard isatty(STDIN_FILENO) == 1 else { return .none }
        return PasswordSource(isInteractive: true) { request in
            let label = request.isRetry ? "Wrong password, try again" : "\(prompt) for \(request.what) \(request.path)"
            return TerminalPrompt.readSecret(prompt: "\(label): ")
        }
    }
}

/// Reads a line from the terminal with echo off, restoring the terminal even on Ctrl-C.
enum TerminalPrompt {
    // Plain memory a SIGINT handler may read (no lock is async-signal-safe): the one run state
    // kept outside RunContext.
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
        return try? PasswordSource.readLine(from: STDIN_FILENO, what: "the terminal")
    }
}
