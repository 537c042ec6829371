import ArgumentParser
import Foundation
import PushCredentials
import PushMonitoring

struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check credentials for expiry, environment and topic before a deploy, in CI, or for monitoring.",
        discussion: """
            With no argument, every stored credential is checked. Arguments may be aliases or files \
            (a certificate file is read with the password options, a token key AuthKey_KEYID.p8 with \
            --team-id and, unless its name says it, --key-id; a CI job needs no store).

            --topic with no argument answers "is there a working credential for this app?": only \
            the stored credentials for that app (its bundle ID, or a derived topic such as \
            BUNDLE.voip) are judged, the others are listed as skipped with the reason, and the check \
            passes when at least one is fit. A credential named as an argument is judged strictly.

            Findings are problems (expired, not yet valid, environment or topic mismatch, \
            key/certificate mismatch, token key metadata incomplete, secret missing) or warnings \
            (expiring within --warn-days, secret not verified). Each says what to do.

            Exit status: 0 all well (with --topic alone: at least one fit credential for the app, \
            even if it has warnings); 1 a finding, warnings included (with --topic alone: no fit \
            credential for the app); 2 something could not be checked, including a key the Secret \
            Service could not be asked for (use --skip-secrets to check only what the stored files \
            say), or the output could not be written. With --format prometheus the findings are in \
            the metrics, so it exits 0 whenever it could check; --fail-on sets when a finding also \
            makes it exit 1 (warning: any finding, the default for text and JSON; problem: \
            problems only; never).

            --format prometheus writes node_exporter textfile-collector metrics. With --output FILE \
            the file is replaced atomically (a temporary file in the same folder, synced, renamed, \
            mode 0644), so the collector never reads half a file: point it at the collector's \
            folder, e.g. --output /var/lib/prometheus/node-exporter/apnsctl.prom. The file is written \
            on every run, also for an empty or unreadable store (apnsctl_check_success 0, and the \
            exit status still says what happened). Certificates are published in \
            x509-certificate-exporter's names (x509_cert_not_after...), so its alert rules and \
            dashboards see them; apnsctl_credential_problem, apnsctl_credential_warning and \
            apnsctl_app_ready say what only apnsctl knows (see docs/monitoring.md).

            Examples. The .p12 password is in the environment variable P12_PASSWORD.
              apnsctl check
              apnsctl check com.example.app-universal --environment production \\
                --topic com.example.app
              apnsctl check --topic com.example.app --environment production
              apnsctl check app.p12 --password-env P12_PASSWORD --warn-days 21
              apnsctl check --format prometheus --output apnsctl.prom
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json, prometheus }

    @Argument(
        help: ArgumentHelp("Aliases or files (default: every stored credential).", valueName: "ALIAS|FILE"),
        completion: .storedAliasOrFile
    )
    var credentials: [String] = []

    @Option(help: ArgumentHelp("The environment you are about to deploy against.", valueName: "sandbox|production"))
    var environment: PushEnvironment?

    @Option(
        help: ArgumentHelp(
            "The topic (bundle ID) you are about to push to; alone, judges only that app's credentials.",
            valueName: "BUNDLE"
        )
    )
    var topic: String?

    @Option(
        name: .customLong("team-id"),
        help: ArgumentHelp("Token key files: the team ID the key belongs to.", valueName: "TEAMID")
    )
    var teamID: String?

    @Option(
        name: .customLong("key-id"),
        help: ArgumentHelp("Token key files: the key ID (default: from AuthKey_KEYID.p8).", valueName: "KEYID")
    )
    var keyID: String?

    @Option(help: ArgumentHelp("Output format.", valueName: "text|json|prometheus"))
    var format: Format = .text

    @Option(
        help: ArgumentHelp(
            "Write the report to FILE, replaced atomically (for node_exporter's textfile collector).",
            valueName: "FILE"
        ),
        completion: .file()
    )
    var output: String?

    enum FailOn: String, ExpressibleByArgument, CaseIterable { case warning, problem, never }

    @Option(
        name: .customLong("fail-on"),
        help: ArgumentHelp(
            "Which findings make the exit status 1 (default: warning; never with --format prometheus).",
            valueName: "warning|problem|never"
        )
    )
    var failOn: FailOn?

    @Flag(
        name: .customLong("skip-secrets"),
        help: "Do not read keys from the Secret Service (metadata-only checks, e.g. on a monitoring host)."
    )
    var skipSecrets = false

    @OptionGroup var report: ReportOptions
    @OptionGroup var store: StoreOptions
    @OptionGroup var password: PasswordOptions

    func run() async throws {
        let store = self.store.credentialStore
        // What a command killed earlier left is completed or undone before it is judged.
        if credentials.isEmpty || !credentials.allSatisfy(FileManager.default.fileExists) {
            store.settleInterruptedChanges()
        }
        let expectations = CheckExpectations(
            date: report.date,
            warnDays: report.warnDays,
            environment: environment,
            topic: topic
        )
        var results: [CheckResult] = []
        var selection: CheckSelection?
        do {
            var references: [CredentialReference]
            // Secrets of this store that no entry references: reported when the whole store is checked.
            let orphaned =
                credentials.isEmpty && topic == nil ? orphanResults(store) + unaccountedResults(store) : []
            if credentials.isEmpty {
                let stored = try store.list()
                if stored.isEmpty, orphaned.isEmpty {
                    // The metrics still say when the check ran and that there was nothing to check.
                    try publishMetricsAnyway(CheckRun(date: expectations.date, results: [], secretsAsked: !skipSecrets))
                    printError(
                        "The store at \(store.path) is empty: nothing to check. Import a credential or name files to check."
                    )
                    throw ExitStatus.couldNotCheck
                }
                references = stored.map { .stored($0) }
                if let topic {
                    let scoped = CheckSelection(topic: topic, stored: stored)
                    selection = scoped
                    references = scoped.candidates.map { .stored($0) }
                }
            } else {
                references = try credentials.map { try CredentialReference.resolve($0, store: store) }
            }
            let judge = CheckJudge(
                store: store,
                expectations: expectations,
                password: password.source(),
                skipSecrets: skipSecrets,
                teamID: teamID,
                keyID: keyID
            )
            for reference in references {
                var result = judge.check(reference)
                // Removed by another command since the store was listed: no longer in the store.
                if credentials.isEmpty, case .stored = reference,
                    result.error?.code == CredentialError.Code.aliasNotFound.name
                {
                    continue
                }
                var subject = FindingHints.Subject(
                    name: result.name,
                    stored: reference.origin == "store",
                    kind: result.kind,
                    environment: environment,
                    topic: topic
                )
                if case .stored(let credential) = reference {
                    subject.topics = credential.topics
                    subject.environments = credential.environments
                }
                result.findings = FindingHints.forCommandLine(result.findings, about: subject)
                results.append(result)
            }
            results += orphaned
        } catch let error as CredentialError {
            try? publishMetricsAnyway(.failed(at: expectations.date, error.message))
            reportError(error)
            throw ExitStatus.couldNotCheck
        }

        let outputFormat = report.json ? .json : format
        let text: String
        switch outputFormat {
        case .json:
            let data = try ReportSchema.encoder().encode(
                CheckOutput(
                    schemaVersion: ReportSchema.schemaVersion,
                    evaluatedAt: expectations.date,
                    environment: environment,
                    topic: topic,
                    warnDays: report.warnDays,
                    credentials: results,
                    fit: selection.map { _ in results.filter(\.fit).map(\.name) },
                    skipped: selection.map { $0.skipped(judged: results) }
                )
            )
            text = String(decoding: data, as: UTF8.self) + "\n"
        case .prometheus:
            // A whole store (or one app of it) gets the library's per-app verdict; files named on
            // the command line have no store to select among.
            let apps =
                credentials.isEmpty
                ? AppReadiness.verdicts(
                    stored: (try? store.list()) ?? [],
                    results: results,
                    topics: topic.map { [$0] } ?? [],
                    environments: environment.map { [$0] } ?? PushEnvironment.allCases
                ) : nil
            var run = CheckRun(date: expectations.date, results: results, secretsAsked: !skipSecrets, apps: apps)
            run.locateFiles(in: store)
            text = CheckMetrics.render(run)
        case .text:
            text = StandardOutput.capture {
                let printer = CheckTextOutput(style: output == nil ? .stdout : TerminalStyle(fileDescriptor: -1))
                if let selection {
                    printer.printSelection(selection, results: results, environment: environment)
                } else {
                    printer.printResults(results)
                }
            }
        }
        // The report is the JSON answer, wherever it goes: no error object follows it.
        if outputFormat == .json { JSONFailure.printed = true }
        if let output {
            try Self.writeAtomically(text, to: output)
        } else {
            try writeStandardOutput(
                Array(TerminalSafe.filter(text, colours: outputFormat == .text && TerminalStyle.stdout.enabled).utf8)
            )
        }
        let unverified = { (result: CheckResult) in result.findings.contains { $0.code == "secret_unverified" } }
        if selection != nil {
            if results.contains(where: { $0.fit && !unverified($0) }) { return }
            if results.contains(where: { $0.fit || $0.error != nil }) { throw ExitStatus.couldNotCheck }
            throw ExitStatus.problem
        }
        if results.contains(where: unverified) || results.contains(where: { $0.error != nil }) {
            throw ExitStatus.couldNotCheck
        }
        let policy = failOn ?? (outputFormat == .prometheus ? .never : .warning)
        let failing = results.flatMap(\.findings).contains { finding in
            switch policy {
            case .warning: return true
            case .problem: return finding.severity == .problem
            case .never: return false
            }
        }
        if failing { throw ExitStatus.problem }
    }
}

struct CheckOutput: Encodable {
    var schemaVersion: Int
    var evaluatedAt: Date
    var environment: PushEnvironment?
    var topic: String?
    var warnDays: Int
    var credentials: [CheckResult]
    /// With --topic alone: the credentials fit for the app.
    var fit: [String]?
    /// With --topic alone: every other stored credential and why it was not chosen.
    var skipped: [CheckSelection.Skipped]?
}
