import ArgumentParser
import Foundation
import LocalGateway
import PushCredentials
import PushGateway

/// The command line's wording of the libraries' advice.
///
/// The libraries say what to do in words ("give the key's team ID") and carry a code; here each
/// code whose remedy is an option of this tool gets a hint that names the option, and hints that
/// name a command name it so that it works when pasted (with the same `--store`).
enum ErrorHints {
    /// The hint to print for a credential error.
    static func hint(for error: CredentialError) -> String? {
        switch error.code {
        case .passwordRequired:
            return
                "Give the password with --password-stdin, --password-env NAME or --password-file PATH, or run in a terminal to be asked."
        case .teamIDRequired:
            return "Add --team-id TEAMID (Apple Developer portal > Membership details)."
        case .keyIDRequired:
            return
                "Give it with --key-id; it is shown next to the key under Certificates, Identifiers & Profiles > Keys."
        case .invalidTeamID:
            return "Copy the team ID from the Apple Developer portal (Membership details) and give it with --team-id."
        case .invalidKeyID:
            return
                "Copy the key ID from the Apple Developer portal (Certificates, Identifiers & Profiles > Keys) and give it with --key-id."
        case .invalidAlias:
            return "For example --alias com.example.app-production."
        case .aliasTaken:
            guard let alias = error.alias else { return error.hint }
            return
                "Choose another --alias; or, if this replaces \(shellQuoted(alias)), run the same import with --replace \(shellQuoted(alias)) instead of --alias."
        case .sameAppStored:
            guard let alias = error.alias else { return error.hint }
            return
                "To rotate, run the same import with --replace \(shellQuoted(alias)): the new one takes that alias, and the old one is kept until the new one is stored. To keep both on purpose, run it with --force."
        case .notAPushCertificate:
            return
                (error.hint.map {
                    $0.replacingOccurrences(of: " To store this one all the same, force it.", with: "") + " "
                } ?? "")
                + "To store it all the same, run the same import with --force."
        case .alreadyImported:
            guard let alias = error.alias else { return error.hint }
            if let path = error.path, TokenKeyFile.isTokenKeyPath(path) {
                // A token key has nothing to re-import: what it is for is changed in place.
                return
                    "Use `\(command("list"))` to see it; to change what it is recorded for: `\(command("update", alias, "--topic", "<BUNDLE-ID>", "--environment", "both"))`, with the app's bundle ID in place of the placeholder."
            }
            return "Use `\(command("list"))` to see it, or `\(command("remove", alias))` first to import it again."
        case .secretNotFound:
            guard let alias = error.alias else { return error.hint }
            return "Remove it with `\(command("remove", alias))` and import it again."
        case .expiresSooner:
            let inspect = error.path.map { " (`apnsctl inspect \(shellQuoted($0))` shows its dates)" } ?? ""
            return
                "Check that this is the newer certificate\(inspect); to replace it all the same, run the same import with --force."
        case .outsideValidity:
            return (error.hint.map { $0 + " " } ?? "") + "To store it all the same, run the same import with --force."
        case .notATokenKey:
            guard let alias = error.alias else { return error.hint }
            return "To change them, import the new certificate with --replace \(shellQuoted(alias))."
        case .noMatchingRequest:
            return
                "Import the .p12 exported together with its key, or give the private key with --key KEYFILE. To have a key made and kept for the next certificate, start with `\(command("request", "--out", "push.csr"))`."
        case .notAStore:
            return "Give --store an empty or new folder, or the folder of an existing store."
        case .entryOutsideStore:
            guard let alias = error.alias else { return error.hint }
            return
                "The index was changed outside apnsctl: take the entry out with `\(command("remove", alias))` (files outside the store are left alone) and import the credential again, or restore index.json from a backup."
        case .fileExists:
            return "Choose another path, or add --force where the command offers it."
        case .secretStoreUnavailable, .secretStoreLocked:
            let alternative =
                "In CI, name the bundle file and give its password with --password-env NAME or --password-file PATH instead of using the store."
            return error.hint.map { $0 + " " + alternative } ?? alternative
        default:
            return error.hint
        }
    }

    /// The hint to print for a gateway error.
    static func hint(for error: GatewayError) -> String? {
        switch error.code {
        case .connectTimeout:
            return
                "A firewall may be dropping the packets; try --port 2197, which APNs also serves, or a proxy (--proxy URL or HTTPS_PROXY)."
        case .caFileUnreadable:
            return "Check the path given with --ca."
        case .caFileInvalid:
            return
                "Give --ca a PEM file with -----BEGIN CERTIFICATE----- blocks, such as the one `apnsctl gateway serve` writes with --ca-out."
        case .tlsUntrusted:
            return
                "APNs moved to the \"USERTrust RSA Certification Authority\" root in 2025 (sandbox in January, production on 24 February); this machine's trust store may lack it: update the ca-certificates package, or give the root with --ca. For a local gateway, give its CA with --ca."
        default:
            return error.hint
        }
    }

    /// The hint to print for an error of the APNs vocabulary.
    static func hint(for error: PushCoreError) -> String? {
        switch error.code {
        case .invalidTeamID:
            return "Copy the team ID from the Apple Developer portal (Membership details) and give it with --team-id."
        case .invalidKeyID:
            return
                "Copy the key ID from the Apple Developer portal (Certificates, Identifiers & Profiles > Keys) and give it with --key-id."
        default:
            return error.hint
        }
    }

    /// The hint to print for a local gateway error.
    static func hint(for error: LocalGatewayError) -> String? {
        switch error.code {
        case .cannotListen:
            return "Pick another --port, or --port 0 for any free port (with --port-file FILE to learn which)."
        case .invalidCA:
            return
                "Give the CA files that `apnsctl gateway serve --ca-out FILE` wrote, or certs/ca/*.pem with its .key."
        case .invalidMintRequest:
            return "Give --topic com.example.app and --environment sandbox, production or both."
        default:
            return error.hint
        }
    }

    /// `apnsctl ARGUMENTS…`, with the `--store` this run was given, each argument quoted for a shell.
    static func command(_ arguments: String...) -> String { command(arguments) }

    static func command(_ arguments: [String]) -> String {
        var words = ["apnsctl"] + arguments
        if let store = HintContext.store { words += ["--store", store] }
        return words.map(shellQuoted).joined(separator: " ")
    }

    /// A word as a POSIX shell reads it back: bare when it is safe, else in single quotes.
    static func shellQuoted(_ word: String) -> String {
        let safe = CharacterSet(
            charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%_+=:,./-"
        )
        if !word.isEmpty, word.unicodeScalars.allSatisfy(safe.contains) { return word }
        // A placeholder reads as one ("<BUNDLE-ID>"), and is refused if pasted unchanged.
        if TopicPlaceholder.isPlaceholder(word), word.hasPrefix("<"), word.hasSuffix(">"),
            !word.contains(where: { "\"$`\\!".contains($0) })
        {
            return "\"" + word + "\""
        }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// What the hints need to know about this run: the `--store` given, if any.
enum HintContext {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var storeValue: String?

    static var store: String? {
        get { lock.withLock { storeValue } }
        set { lock.withLock { storeValue = newValue } }
    }
}

extension CredentialError {
    /// This error with the command line's hint.
    var forCommandLine: CredentialError { withHint(ErrorHints.hint(for: self)) }
}

extension GatewayError {
    /// This error with the command line's hint.
    var forCommandLine: GatewayError { withHint(ErrorHints.hint(for: self)) }

    func print() {
        JSONFailure.note(code: code.name, message: message, hint: ErrorHints.hint(for: self))
        var text = TerminalStyle.stderr.paint("error:", .red, .bold) + " " + message
        if let hint = ErrorHints.hint(for: self) {
            text += "\n  " + TerminalStyle.stderr.paint("hint:", .bold) + " " + hint
        }
        printError(text)
    }
}

/// Prints a library error (credential, gateway or APNs vocabulary) with the command line's hint
/// and returns the exit status it calls for; nil for any other error.
func reportLibraryError(_ error: any Error) -> ExitCode? {
    switch error {
    case let error as CredentialError:
        reportError(error)
    case let error as GatewayError:
        error.print()
    case let error as LocalGatewayError:
        JSONFailure.note(
            code: error.code.name,
            message: (error.path.map { "\($0): " } ?? "") + error.message,
            hint: ErrorHints.hint(for: error)
        )
        var text =
            TerminalStyle.stderr.paint("error:", .red, .bold) + " " + (error.path.map { "\($0): " } ?? "")
            + error.message
        if let hint = ErrorHints.hint(for: error) {
            text += "\n  " + TerminalStyle.stderr.paint("hint:", .bold) + " " + hint
        }
        printError(text)
    case let error as BulkRunError:
        JSONFailure.note(
            code: error.code.rawValue,
            message: (error.path.map { "\($0): " } ?? "") + error.message,
            hint: error.hint
        )
        var text =
            TerminalStyle.stderr.paint("error:", .red, .bold) + " " + (error.path.map { "\($0): " } ?? "")
            + error.message
        if let hint = error.hint { text += "\n  " + TerminalStyle.stderr.paint("hint:", .bold) + " " + hint }
        printError(text)
    case let error as PushCoreError:
        JSONFailure.note(code: error.code.name, message: error.message, hint: ErrorHints.hint(for: error))
        var text = TerminalStyle.stderr.paint("error:", .red, .bold) + " " + error.message
        if let hint = ErrorHints.hint(for: error) {
            text += "\n  " + TerminalStyle.stderr.paint("hint:", .bold) + " " + hint
        }
        printError(text)
    default:
        return nil
    }
    return exitStatus(for: error)
}

/// 1 when the error is itself a finding about the credential (a server refused the client
/// certificate), else 2: the check could not be made.
func exitStatus(for error: any Error) -> ExitCode {
    if let error = error as? GatewayError, error.code == .clientCertificateRejected { return ExitStatus.problem }
    // A proxy scheme that is not spoken is a usage error, wherever the setting came from.
    if let error = error as? GatewayError, error.code == .unsupportedProxy { return ExitCode(64) }
    // A results file that exists or belongs to another run, tokens from a terminal: usage errors.
    if let error = error as? BulkRunError, error.isUsageError { return ExitCode(64) }
    // A time, Live Activity or channel ID the user wrote that cannot be sent: usage errors.
    if let error = error as? PushCoreError, [.invalidTime, .invalidLiveActivity, .invalidChannel].contains(error.code) {
        return ExitCode(64)
    }
    return ExitStatus.couldNotCheck
}

/// Runs a command body, turning the libraries' errors into the project's messages and exit codes.
func withUserErrors<R>(_ body: () async throws -> R) async throws -> R {
    do {
        return try await body()
    } catch let exit as ExitCode {
        throw exit
    } catch {
        if let status = reportLibraryError(error) { throw status }
        printError(TerminalStyle.stderr.paint("error:", .red, .bold) + " \(error.localizedDescription)")
        throw ExitStatus.couldNotCheck
    }
}
