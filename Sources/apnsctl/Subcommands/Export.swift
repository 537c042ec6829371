import ArgumentParser
import Foundation
import PushCredentials

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

            Files are written with mode 0600. A private key is never written to a terminal: give --out.

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
        do {
            if out == nil, isatty(STDOUT_FILENO) == 1 {
                throw CredentialError(
                    .invalidArgument,
                    path: nil,
                    "Refusing to write a private key to the terminal, where it would stay in the scrollback.",
                    hint: "Give --out PATH, or redirect standard output to a file."
                )
            }
            let store = self.store.credentialStore
            guard let credential = try store.credential(named: alias) else {
                throw CredentialError(
                    .aliasNotFound,
                    path: nil,
                    "No credential named \(alias) in the store at \(store.path).",
                    hint: "See `apnsctl list`."
                )
            }
            let bytes: [UInt8]
            switch (credential.kind, format) {
            case (.tokenKey, .pem):
                let key = try store.tokenKey(of: credential)
                bytes = Array(PEMWriter.privateKey(key.pkcs8).utf8)
            case (.tokenKey, .p12):
                throw CredentialError(
                    .invalidArgument,
                    path: nil,
                    "A token key has no certificate, so it cannot be a PKCS#12 bundle.",
                    hint: "Use --format pem to get the .p8 key."
                )
            case (.certificate, .pem):
                let identity = try store.identity(of: credential)
                let chain = ([identity.certificate] + identity.chain).map { PEMWriter.certificate($0.der) }.joined()
                bytes = Array((chain + PEMWriter.privateKey(identity.privateKeyPKCS8!)).utf8)
            case (.certificate, .p12):
                let identity = try store.identity(of: credential)
                let newPassword = try self.newPassword()
                bytes = try PKCS12Writer.write(
                    certificateDER: identity.certificate.der,
                    chainDER: identity.chain.map(\.der),
                    privateKey: identity.privateKeyPKCS8!,
                    password: newPassword,
                    friendlyName: credential.alias,
                    style: legacy ? .legacy : .modern
                )
            }
            try write(bytes)
            if let out {
                printError(
                    "Wrote \(credential.alias) as \(format == .p12 ? (legacy ? "legacy PKCS#12" : "PKCS#12") : "PEM") to \(out) (mode 0600)."
                )
            }
        } catch let error as CredentialError {
            reportError(error)
            throw ExitStatus.couldNotCheck
        }
    }

    private func newPassword() throws -> SecretBytes {
        if password.isGiven {
            guard
                let secret = try password.source()(
                    PasswordRequest(path: out ?? "output", what: "new PKCS#12", isRetry: false)
                )
            else {
                throw CredentialError(
                    .passwordRequired,
                    path: nil,
                    "No password was given for the new bundle.",
                    hint: nil
                )
            }
            return secret
        }
        guard isatty(STDIN_FILENO) == 1 else {
            throw CredentialError(
                .passwordRequired,
                path: nil,
                "A PKCS#12 export needs a new password.",
                hint: "Give it with --password-stdin, --password-env NAME or --password-file PATH."
            )
        }
        guard let first = TerminalPrompt.readSecret(prompt: "New password for the PKCS#12 bundle: "),
            let second = TerminalPrompt.readSecret(prompt: "Repeat it: "), first == second
        else {
            throw CredentialError(
                .invalidArgument,
                path: nil,
                "The two passwords differ; nothing was written.",
                hint: "Run the export again."
            )
        }
        return first
    }

    private func write(_ bytes: [UInt8]) throws {
        guard let out else {
            try writeStandardOutput(bytes)
            return
        }
        try PrivateFile.write(bytes, to: out, overwrite: force)
    }
}
