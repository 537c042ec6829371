import ArgumentParser
import CredentialFormats
import Foundation
import PushChecks

struct Inspect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show what a push certificate file holds: environments, topics, validity, fingerprints, key.",
        discussion: """
            Reads .p12/.pfx bundles in every encryption in use (macOS Keychain's RC2-40/3DES exports \
            included), PEM files (certificate with optional key; "Bag Attributes" text is fine) and DER \
            .cer certificates. The format is told from the contents, not the file name. A certificate \
            signing request (.csr) is described too: subject, key, and whether a pending request in the \
            store (--store) holds its key.

            Token keys (AuthKey_KEYID.p8): the key ID (from the file name, or --key-id), that the key \
            is EC P-256 as APNs requires (other curves are refused), its public-key fingerprint, and \
            the team (--team-id) and restrictions Apple gave it (--topic for topic-specific keys, \
            --environment for keys of one environment), which the file itself does not record.

            A bundle that needs a password is opened with --password-stdin, --password-env or \
            --password-file, or by asking on the terminal. Bundles with an empty password open without one.

            Exit status: 0 every file read and fine; 1 a certificate or token key with a finding \
            (expired, expiring within --warn-days, not yet valid, a key that does not match), or a \
            CSR Apple's portal would refuse (not RSA 2048, a signature that does not verify); 2 a \
            file could not be read (missing, unreadable, wrong password, not a credential), which \
            wins over 1; 64 usage error.

            Examples. The .p12 password is in the environment variable P12_PASSWORD.
              apnsctl inspect app.p12 --password-env P12_PASSWORD
              apnsctl inspect AuthKey_ABC123DEFG.p8 --team-id ABCDE12345
              apnsctl inspect app.p12 --password-env P12_PASSWORD --warn-days 60 --json
            """
    )

    @Argument(
        help: ArgumentHelp("Certificate or token key (.p8) files to inspect.", valueName: "FILE"),
        completion: .credentialFile
    )
    var files: [String]

    @Option(help: ArgumentHelp("Token keys: the key ID (default: from AuthKey_KEYID.p8).", valueName: "KEYID"))
    var keyID: String?

    @Option(help: ArgumentHelp("Token keys: the team ID the key belongs to.", valueName: "TEAMID"))
    var teamID: String?

    @Option(help: ArgumentHelp("Token keys: a topic the key is restricted to (repeatable).", valueName: "BUNDLE"))
    var topic: [String] = []

    @Option(help: ArgumentHelp("Token keys: the environments the key serves.", valueName: "sandbox|production|both"))
    var environment: EnvironmentScope?

    func validate() throws {
        for (name, value) in [("--key-id", keyID), ("--team-id", teamID)] {
            if let value, !ProviderKey.isIdentifier(value) {
                throw ValidationError("\(name) takes 10 upper-case letters and digits, not \"\(value)\".")
            }
        }
    }

    @OptionGroup var password: PasswordOptions
    @OptionGroup var report: ReportOptions
    @OptionGroup var store: StoreOptions

    func run() async throws {
        let date = report.date
        let source = password.source()
        var reports: [FileReport] = []
        var errors: [CredentialError] = []
        var requests: [RequestReport] = []
        for path in files {
            do {
                let inspected = try FileReport.inspect(
                    path: path,
                    password: source,
                    keyID: keyID,
                    teamID: teamID,
                    topics: topic,
                    environments: environment?.environments ?? [],
                    at: date,
                    warnDays: report.warnDays
                )
                switch inspected {
                case .credential(var fileReport):
                    fileReport.findings = FindingHints.forCommandLine(
                        fileReport.findings,
                        about: .init(
                            name: path,
                            stored: false,
                            kind: fileReport.tokenKey != nil ? .tokenKey : .certificate
                        )
                    )
                    reports.append(fileReport)
                case .request(let request):
                    requests.append(await RequestReport(request, store: try await store.credentialStore))
                }
            } catch let error as CredentialError {
                errors.append(error)
                reports.append(FileReport(path: path, error: error.forCommandLine))
            }
        }

        if report.json {
            try printJSON(
                InspectOutput(
                    evaluatedAt: date,
                    files: reports,
                    requests: requests.isEmpty ? nil : requests
                )
            )
        } else {
            let style = TerminalStyle.stdout
            var first = true
            for file in reports where file.error == nil {
                if !first { print("") }
                first = false
                print(
                    file.tokenKey != nil
                        ? TokenKeyRenderer(style: style).render(file) : CertificateRenderer(style: style).render(file)
                )
            }
            for request in requests {
                if !first { print("") }
                first = false
                print(RequestRenderer(style: style).render(request))
            }
        }
        // Errors go to stderr in both modes, so a JSON consumer can still show them.
        for error in errors { reportError(error) }

        if !errors.isEmpty { throw ExitStatus.couldNotCheck }
        if reports.contains(where: \.needsAttention) || requests.contains(where: { !$0.problems.isEmpty }) {
            throw ExitStatus.problem
        }
    }
}

struct InspectOutput: Encodable {
    var schemaVersion = ReportSchema.schemaVersion
    var evaluatedAt: Date
    var files: [FileReport]
    var requests: [RequestReport]?
}
