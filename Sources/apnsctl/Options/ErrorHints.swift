import ArgumentParser
import CredentialFormats
import Foundation
import LocalGateway
import PushGateway
import PushStore

/// The command line's wording of the libraries' advice.
///
/// The libraries say what to do in words ("give the key's team ID") and carry a code; here each
/// code whose remedy is an option of this tool gets a hint that names the option, and hints that
/// name a command name it so that it works when pasted (with the same `--store`).
enum ErrorHints {
    /// The hint to print for a credential error: it may name the credential or file it is about.
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
        case .invalidTeamID, .invalidKeyID:
            return optionHint(for: error.code)
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
        case .alreadyImported:
            guard let alias = error.alias else { return error.hint }
            if let path = error.path, TokenKeyFile.isTokenKeyPath(path) {
                // A token key has nothing to re-import: what it is for is changed in place, and a
                // rotation to it names the credential it takes over.
                return
                    "To rotate to this key, run the same import with --replace <OLD-ALIAS>, the alias of the credential it takes over: it takes that alias and serves what both served, and \(shellQuoted(alias)) is folded into it. To change what it is recorded for: `\(command("update", alias, "--topic", "<BUNDLE-ID>", "--environment", "both"))`, with the app's bundle ID in place of the placeholder."
            }
            return "Use `\(command("list"))` to see it, or `\(command("remove", alias))` first to import it again."
        case .secretNotFound:
            guard let alias = error.alias else { return error.hint }
            return "Remove it with `\(command("remove", alias))` and import it again."
        case .expiresSooner:
            let inspect = error.path.map { " (`apnsctl inspect \(shellQuoted($0))` shows its dates)" } ?? ""
            return
                "Check that this is the newer certificate\(inspect); to replace it all the same, run the same import with --force."
        case .narrowerCoverage where error.path.map(TokenKeyFile.isTokenKeyPath) ?? false:
            return
                "Leave out --topic, --environment and --team-id to keep \(error.alias.map(shellQuoted) ?? "the replaced credential")'s, or give all that it serves; to replace it all the same, run the same import with --force."
        case .narrowerCoverage:
            let inspect = error.path.map { " (`apnsctl inspect \(shellQuoted($0))` shows what it covers)" } ?? ""
            return
                "Check that this is the right certificate\(inspect); to replace it all the same, run the same import with --force."
        case .notAPushCertificate, .outsideValidity:
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
            return error.remedy.map { RemedyText.text($0, words: error.hint) } ?? error.hint
        }
    }

    /// The hint to print for any error: the credential's own advice for a credential error, else
    /// the command line's wording for the codes whose remedy is one of its options.
    static func hint(for error: any ReportableError) -> String? {
        if let remedy = error.remedy { return RemedyText.text(remedy, words: error.hint) }
        if let error = error as? CredentialError { return hint(for: error) }
        switch error.code {
        case .invalidTeamID, .invalidKeyID:
            // The same code and remedy whichever module read the identifier.
            return optionHint(for: error.code)
        case .connectTimeout:
            return
                "A firewall may be dropping the packets; try --port 2197, which APNs also serves, or a proxy (--proxy URL or HTTPS_PROXY)."
        case .caFileUnreadable:
            return (error as? GatewayError)?.trustFile == .bundle
                ? "Check the path given with --ca-bundle." : "Check the path given with --ca."
        case .caFileInvalid where (error as? GatewayError)?.trustFile == .bundle:
            return "Give --ca-bundle a PEM bundle of root certificates, such as /etc/ssl/certs/ca-certificates.crt."
        case .noAddressForFamily:
            let other = (error as? GatewayError)?.family == .ipv6 ? "-4" : "-6"
            return "Give \(other) instead, or neither -4 nor -6 to try both families (Happy Eyeballs)."
        case .caFileInvalid:
            return
                "Give --ca a PEM file with -----BEGIN CERTIFICATE----- blocks, such as the one `apnsctl gateway serve` writes with --ca-out."
        case .tlsUntrusted:
            return
                "APNs moved to the \"USERTrust RSA Certification Authority\" root in 2025 (sandbox in January, production on 24 February); this machine's trust store may lack it: update the ca-certificates package, or give the root with --ca (`apnsctl trust` checks the store before connecting). For a local gateway, give its CA with --ca."
        case .cannotListen where error is LocalGatewayError:
            return "Pick another --port, or --port 0 for any free port (with --port-file FILE to learn which)."
        case .invalidCA:
            return
                "Give the CA files that `apnsctl gateway serve --ca-out FILE` wrote, or certs/ca/*.pem with its .key."
        case .resultsExist:
            return "Continue that run with --resume, or choose another results file."
        case .journalMissing:
            return
                "Put the journal back beside the results file (its name with .journal added), or add --resume-without-journal to send again what was in flight, knowing those devices may get the notification twice."
        case .terminalInput:
            return "Pipe the tokens in (for example: cat tokens.txt | apnsctl send …) or give the file itself."
        case .invalidMintRequest:
            return "Give --topic com.example.app and --environment sandbox, production or both."
        default:
            return error.hint
        }
    }

    /// The hint for a team or key ID that is not one, from whichever module found it.
    private static func optionHint(for code: ErrorCode) -> String? {
        switch code {
        case .invalidTeamID:
            return "Copy the team ID from the Apple Developer portal (Membership details) and give it with --team-id."
        case .invalidKeyID:
            return
                "Copy the key ID from the Apple Developer portal (Certificates, Identifiers & Profiles > Keys) and give it with --key-id."
        default:
            return nil
        }
    }

    /// `apnsctl ARGUMENTS…`, with the `--store` this run was given, each argument quoted for a shell.
    static func command(_ arguments: String...) -> String { command(arguments) }

    /// `apnsctl ARGUMENTS…` without this run's `--store` (a command meant for another folder).
    static func plainCommand(_ arguments: String...) -> String {
        (["apnsctl"] + arguments).map(shellQuoted).joined(separator: " ")
    }

    static func command(_ arguments: [String]) -> String {
        var words = ["apnsctl"] + arguments
        if let store = HintContext.store { words += ["--store", store] }
        return words.map(shellQuoted).joined(separator: " ")
    }

    /// A word as a POSIX shell reads it back: bare when it is safe, else in single quotes.
    static func shellQuoted(_ word: String) -> String {
        // A placeholder reads as one ("<BUNDLE-ID>"), and is refused if pasted unchanged.
        if TopicPlaceholder.isPlaceholder(word), word.hasPrefix("<"), word.hasSuffix(">"),
            !word.contains(where: { "\"$`\\!".contains($0) })
        {
            return "\"" + word + "\""
        }
        // The libraries' quoting, so that their printed commands and these read back alike.
        return ShellWords.quote(word)
    }
}

/// What the hints need to know about this run: the `--store` given, if any.
enum HintContext {
    static var store: String? {
        get { RunContext.current[\.storeArgument] }
        set { RunContext.current[\.storeArgument] = newValue }
    }
}

extension CredentialError {
    /// This error with the command line's hint.
    var forCommandLine: CredentialError { withHint(ErrorHints.hint(for: self)) }
}

extension GatewayError {
    /// This error with the command line's hint.
    var forCommandLine: GatewayError { withHint(ErrorHints.hint(for: self)) }
}
