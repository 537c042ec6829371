import ArgumentParser
import CredentialFormats
import Foundation
import PushStore

#if canImport(Glibc)
import Glibc
#endif

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a stored identity for other tools (curl, apns2, Houston, Pushy...).",
        discussion: """
            --format pem writes the certificate chain and the unencrypted private key (what \
            `curl --cert FILE` wants); a token key is written as its .p8 PEM. --format p12 writes a new \
            PKCS#12 protected by a new password, given with the password options or asked on the \
            terminal: modern AES-256 by default, or Keychain-style RC2-40/3DES with --legacy for tools \
            whose PKCS#12 parser predates OpenSSL 3.

            Files are written with mode 0600. A private key is never written to a terminal: give --out, \
            outside every store folder (a path inside one is refused).

            Exit status: 0 written; 1 refused, nothing written: the --out file exists (--force \
            replaces it); 2 nothing written: no such alias, standard output is a terminal, no new \
            password (or two that differ), an --out inside a store folder, a credential that cannot be exported in that format, the \
            Secret Service unavailable, the file could not be written; 64 usage error.

            Examples. The .p12 password is in the environment variable P12_PASSWORD.
              apnsctl export com.example.app-universal --format pem --out app.pem
              apnsctl export com.example.app-universal --format p12 --legacy \\
                --out app-legacy.p12 --password-env P12_PASSWORD
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable { case pem, p12 }

    @Argument(
        help: ArgumentHelp("The stored credential (see `apnsctl list`).", valueName: "ALIAS"),
        completion: .storedAlias
    )
    var alias: String

    @Option(help: ArgumentHelp("Output format.", valueName: "pem|p12"))
    var format: Format

    @Flag(help: "With --format p12: RC2-40/3DES and a SHA-1 MAC, for old PKCS#12 readers.")
    var legacy = false

    @Option(help: ArgumentHelp("Write here instead of standard output.", valueName: "FILE"), completion: .file())
    var out: String?

    @Flag(help: "Overwrite --out if it exists.")
    var force = false

    @OptionGroup var store: StoreOptions
    @OptionGroup(title: "New password (for --format p12)") var password: PasswordOptions

    func validate() throws {
        if legacy && format != .p12 { throw ValidationError("--legacy applies to --format p12 only.") }
    }

    func run() async throws {
        try await withUserErrors(wording: Self.worded) {
            if out == nil, isatty(STDOUT_FILENO) == 1 {
                throw CredentialError(
                    .invalidArgument,
                    "Refusing to write a private key to the terminal, where it would stay in the scrollback.",
                    hint: "Give --out PATH, or redirect standard output to a file."
                )
            }
            let exportFormat: ExportFormat =
                switch format {
                case .pem: .pem
                case .p12: .pkcs12(newPassword: newPassword, style: legacy ? .legacy : .modern)
                }
            let credentials = try await store.credentialStore
            if let out { try credentials.checkExportDestination(out) }
            let exported = try await credentials.export(named: alias, as: exportFormat)
            try write(exported.contents.bytes)
            if let out {
                printError("Wrote \(exported.alias) as \(exported.formatName) to \(out) (mode 0600).")
            }
        }
    }

    /// The command's wording of the library's refusals, whose hints name no command or option.
    static func worded(_ error: CredentialError) -> CredentialError {
        switch error.code {
        case .aliasNotFound: error.withHint("See `\(ErrorHints.command("list"))`.")
        default: error
        }
    }

    /// The new bundle's password: from the password options, else typed twice on the terminal.
    private var newPassword: PasswordSource {
        let request = PasswordRequest(path: out ?? "output", what: "new PKCS#12", isRetry: false)
        if password.isGiven {
            let given = password.source()
            return PasswordSource { _ in
                guard let secret = try given(request) else {
                    throw CredentialError(.passwordRequired, "No password was given for the new bundle.", hint: nil)
                }
                return secret
            }
        }
        return PasswordSource(isInteractive: true) { _ in
            guard isatty(STDIN_FILENO) == 1 else {
                throw CredentialError(
                    .passwordRequired,
                    "A PKCS#12 export needs a new password.",
                    hint: "Give it with --password-stdin, --password-env NAME or --password-file PATH."
                )
            }
            guard let first = TerminalPrompt.readSecret(prompt: "New password for the PKCS#12 bundle: "),
                let second = TerminalPrompt.readSecret(prompt: "Repeat it: "), first == second
            else {
                throw CredentialError(
                    .invalidArgument,
                    "The two passwords differ; nothing was written.",
                    hint: "Run the export again."
                )
            }
            return first
        }
    }

    private func write(_ bytes: [UInt8]) throws {
        guard let out else {
            try writeStandardOutput(bytes)
            return
        }
        try PrivateFile.write(bytes, to: out, overwrite: force)
    }
}
