import ArgumentParser
import CredentialFormats
import Foundation
import PushStore

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add a push certificate bundle or a token key (.p8) to the credential store.",
        discussion: """
            Certificates: the bundle (.p12/.pfx, or PEM with its key) is inspected first; a bundle \
            with no key or a key that belongs to another certificate is refused. A password-protected \
            PKCS#12 is kept as it is in the store and its password goes to the Secret Service; otherwise \
            only the certificate is kept on disk and the private key goes to the Secret Service. \
            Nothing secret is ever written to a plain file.

            A certificate alone (the aps.cer Apple's portal hands out) is paired with the key of the \
            pending request it was issued for (see `apnsctl request`); a key made elsewhere is given \
            with --key KEYFILE.

            Token keys: `apnsctl import AuthKey_KEYID.p8 --team-id TEAMID --topic com.example.app \
            --environment both`. The key goes to the Secret Service; the store keeps its key ID, team \
            ID, topics, environments and public-key fingerprint.

            Rotation: importing a certificate for the same topic and environments as a stored one, \
            under any alias, is refused unless you name the one it replaces with --replace OLD (or \
            keep both on purpose with --force). The new credential takes OLD's alias unless --alias \
            says otherwise, so scripts that use the alias keep working; the old one is removed only \
            once the new one is stored. A chosen --alias that is taken is refused. A certificate that \
            expires sooner than the one it would replace, one that is expired or not yet valid, and \
            one that is not an Apple push certificate are refused (exit 1) unless you add --force.

            A token key replaces a credential the same way: `apnsctl import AuthKey_NEWKEYID.p8 \
            --replace OLD` keeps OLD's alias, team, topics and environments unless --team-id, --topic \
            or --environment say otherwise, and refuses (exit 1) a replacement that would serve fewer \
            apps or environments, or another team, unless you add --force. An alias made from the old \
            key's ID (token-OLDKEYID) is kept too, so that scripts keep working; the import says that \
            it now holds another key. When the new key is already stored under an alias of its own \
            (rolled out beside the old one), that entry is folded in: one alias holds the key and \
            serves what both served.

            Exit status: 0 imported; 1 refused, nothing changed (already stored, alias taken, the \
            app's credential already stored and no --replace, a rotation that would expire sooner \
            or serve less, expired or not yet valid, not a push certificate); 2 could not be \
            imported (unreadable file, wrong password, a token key without --team-id, no key for a \
            certificate alone, Secret Service unavailable, or, in a team store, imported but not \
            committed: the folder holds what apnsctl did not write, or git knows no identity); 64 \
            usage error.

            Examples. The .p12 password is in the environment variable P12_PASSWORD.
              apnsctl import app.p12 --password-env P12_PASSWORD
              apnsctl import AuthKey_ABC123DEFG.p8 --team-id ABCDE12345 \\
                --topic com.example.app --environment both
            """
    )

    @Argument(help: ArgumentHelp("The .p12/.pfx, PEM or .p8 file.", valueName: "FILE"), completion: .credentialFile)
    var file: String

    @Option(
        help: ArgumentHelp(
            "The name to store it under (default: the replaced credential's, else derived from topic and environment).",
            valueName: "NAME"
        )
    )
    var alias: String?

    @Option(
        help: ArgumentHelp("Replace this stored credential (certificate rotation).", valueName: "OLD"),
        completion: .storedAlias
    )
    var replace: String?

    @Option(
        help: ArgumentHelp(
            "Certificates: the private key that belongs to FILE (PEM or DER, PKCS#1 or PKCS#8, encrypted or not).",
            valueName: "KEYFILE"
        )
    )
    var key: String?

    @Option(help: ArgumentHelp("Token keys: your 10-character team ID.", valueName: "TEAMID"))
    var teamID: String?

    @Option(
        help: ArgumentHelp("Token keys: the 10-character key ID (default: from AuthKey_KEYID.p8).", valueName: "KEYID")
    )
    var keyID: String?

    @Option(help: ArgumentHelp("Token keys: a bundle ID this key will push to (repeatable).", valueName: "BUNDLE"))
    var topic: [String] = []

    @Option(
        help: ArgumentHelp("Token keys: the environments it will be used with.", valueName: "sandbox|production|both")
    )
    var environment: EnvironmentScope?

    @Flag(
        help:
            "Import a certificate that is expired, not yet valid, not a push certificate, expires sooner than the one it replaces, or serves the same app and environments as a stored one (keeping both); a replacement that serves less than the credential it replaces."
    )
    var force = false

    @OptionGroup var store: StoreOptions
    @OptionGroup var password: PasswordOptions

    @Flag(help: "Print the stored entry as JSON.")
    var json = false

    var isTokenKey: Bool {
        TokenKeyFile.isTokenKeyPath(file) || teamID != nil
    }

    func validate() throws {
        for topic in topic { try TopicPlaceholder.refuse(topic) }
        if let alias {
            do {
                try CredentialStore.validateAlias(alias)
            } catch let error as CredentialError {
                throw error.forCommandLine
            }
        }
        if isTokenKey, key != nil {
            throw ValidationError("--key is for certificates; a token key (.p8) is its own key.")
        }
        if !isTokenKey, keyID != nil || !topic.isEmpty || environment != nil {
            throw ValidationError(
                "--key-id, --topic and --environment are for token keys (.p8) only; a certificate carries its own."
            )
        }
    }

    func run() async throws {
        let store = try await self.store.credentialStore
        try await withUserErrors {
            let result =
                isTokenKey
                ? try await store.importTokenKey(
                    path: file,
                    teamID: teamID,
                    keyID: keyID,
                    topics: topic,
                    environments: environment?.environments ?? [],
                    alias: alias,
                    replacing: replace,
                    force: force
                )
                : try await store.importCertificate(
                    path: file,
                    keyFile: key,
                    password: password.source(),
                    alias: alias,
                    replacing: replace,
                    force: force
                )
            if json {
                try printJSON(
                    ImportOutput(
                        store: store.path,
                        imported: CredentialSummary(result.credential),
                        replaced: result.replaced?.alias
                    )
                )
            } else {
                let style = TerminalStyle.stdout
                let entry = result.credential
                print(
                    "\(style.paint("✓", .green)) Imported \(style.paint(entry.alias, .bold)) (\(describe(entry))) into \(store.path)"
                )
                print(
                    "  secret (\(entry.secret.rawValue)) kept \(store.secrets.placeOf(entry.secretItem(store: store.path)))"
                )
                if let replaced = result.replaced, replaced.alias == entry.alias, entry.kind == .tokenKey,
                    replaced.keyID == entry.keyID
                {
                    print("  replaced the metadata of \(replaced.alias); its key stays where it was")
                } else if let replaced = result.replaced {
                    print(
                        result.replacedCleanly
                            ? "  replaced the previous \(replaced.alias); its files and secret are removed"
                            : style.paint(
                                "  ! replaced the previous \(replaced.alias), but its old secret or files could not all be removed (see `secret-tool search application apnsctl alias \(replaced.alias)`)",
                                .yellow
                            )
                    )
                }
                if let merged = result.merged, merged.alias != entry.alias {
                    print(
                        "  \(merged.alias) held the same key: it is folded into \(entry.alias), which serves what both served (the alias \(merged.alias) is gone)"
                    )
                }
                if let replaced = result.replaced, replaced.alias == entry.alias, let oldKey = replaced.keyID,
                    let newKey = entry.keyID, oldKey != newKey, entry.alias.contains(oldKey)
                {
                    print(
                        "  the alias \(entry.alias) names key \(oldKey) but now holds key \(newKey): it is kept so that scripts that use it keep working"
                    )
                }
                if entry.kind == .tokenKey, let replaced = result.replaced, topic.isEmpty || environment == nil {
                    let kept = [
                        topic.isEmpty ? "topics" : nil, environment == nil ? "environments" : nil,
                        teamID == nil ? "team" : nil,
                    ]
                    .compactMap { $0 }
                    let words =
                        kept.count > 1 ? kept.dropLast().joined(separator: ", ") + " and " + kept.last! : kept[0]
                    print("  kept \(replaced.alias)'s \(words)")
                }
                if entry.kind == .tokenKey, entry.topics.isEmpty || entry.environments.isEmpty {
                    print(
                        style.paint(
                            "  ! no --topic/--environment given: `apnsctl check` will report the metadata as incomplete",
                            .yellow
                        )
                    )
                }
            }
        }
    }

    private func describe(_ entry: StoredCredential) -> String {
        let environments =
            entry.environments.isEmpty
            ? "environment unknown" : entry.environments.map(\.rawValue).joined(separator: " + ")
        let topics = entry.topics.isEmpty ? "no topic" : entry.topics.joined(separator: ", ")
        if entry.kind == .tokenKey {
            return "token key \(entry.keyID ?? "?") of team \(entry.teamID ?? "?"), \(topics), \(environments)"
        }
        let expires = entry.notAfter.map { "expires \(CertificateRenderer.day($0))" } ?? ""
        return "certificate for \(topics), \(environments), \(expires)"
    }
}

struct ImportOutput: Encodable {
    var schemaVersion = ReportSchema.schemaVersion
    var store: String
    var imported: CredentialSummary
    var replaced: String?
}
