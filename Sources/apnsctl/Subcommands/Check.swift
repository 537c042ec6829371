import ArgumentParser
import CredentialFormats
import Foundation
import PushChecks
import PushMonitoring
import PushStore

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
            credential for the app); 2 something could not be checked (which, except with --topic \
            alone, wins over 1), including a key the Secret Service could not be asked for (use \
            --skip-secrets to check only what the stored files say), a name that is neither a file \
            nor a stored alias, an empty store, or the output could not be written; 64 usage \
            error. With --format prometheus the findings are in the metrics, so it exits 0 \
            whenever it could check; --fail-on sets when a finding also makes it exit 1 (warning: \
            any finding, the default for text and JSON; problem: problems only; never).

            --format prometheus writes node_exporter textfile-collector metrics. With --output FILE \
            the file is replaced atomically (a temporary file in the same folder, synced, renamed, \
            mode 0644), so the collector never reads half a file: point it at the collector's \
            folder, e.g. --output /var/lib/prometheus/node-exporter/apnsctl.prom. The file is written \
            on every run, also for an empty or unreadable store (apnsctl_check_success 0, and the \
            exit status still says what happened). Certificates are published in \
            x509-certificate-exporter's names (x509_cert_not_after...), so its alert rules and \
            dashboards see them; apnsctl_credential_problem, apnsctl_credential_warning and \
            apnsctl_app_ready say what only apnsctl knows (see docs/monitoring.md).

            --format junit writes a JUnit XML test report, as GitLab, Jenkins and GitHub's \
            test-report actions read it: one test case per app and environment ("com.example.app \
            (production)"), failed with the finding's code, message and fix when it would fail \
            the check, in error when it could not be checked, skipped when it was not judged; the \
            exit status is as for text. With --output FILE the report is written whole or not at \
            all, also when the check could not be made (one test case in error saying why).

            Examples. The .p12 password is in the environment variable P12_PASSWORD.
              apnsctl check
              apnsctl check com.example.app-universal --environment production \\
                --topic com.example.app
              apnsctl check --topic com.example.app --environment production
              apnsctl check app.p12 --password-env P12_PASSWORD --warn-days 21
              apnsctl check --format prometheus --output apnsctl.prom
              apnsctl check --topic com.example.app --environment production \\
                --format junit --output apnsctl-check.xml
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json, prometheus, junit }

    @Argument(
        help: ArgumentHelp("Aliases or files (default: every stored credential).", valueName: "ALIAS|FILE"),
        completion: .storedAliasOrFile
    )
    var credentials: [String] = []

    @Option(help: ArgumentHelp("The environment you are about to deploy against.", valueName: "sandbox|production"))
    var environment: PushEnvironment?

    @Option(
        help: ArgumentHelp(
            "The topic (bundle ID) you are about to push to; alone, judges only that app's credentials (repeatable: one verdict per app).",
            valueName: "BUNDLE"
        )
    )
    var topic: [String] = []

    @Option(help: ArgumentHelp("Token key files: the team ID the key belongs to.", valueName: "TEAMID"))
    var teamID: String?

    @Option(help: ArgumentHelp("Token key files: the key ID (default: from AuthKey_KEYID.p8).", valueName: "KEYID"))
    var keyID: String?

    @Option(help: ArgumentHelp("Output format.", valueName: "text|json|prometheus|junit"))
    var format: Format = .text

    @Option(
        help: ArgumentHelp(
            "Write the report to FILE, replaced atomically (for node_exporter's textfile collector, or CI's test reports).",
            valueName: "FILE"
        ),
        completion: .file()
    )
    var output: String?

    enum FailOn: String, ExpressibleByArgument, CaseIterable { case warning, problem, never }

    @Option(
        help: ArgumentHelp(
            "Which findings make the exit status 1 (default: warning; never with --format prometheus).",
            valueName: "warning|problem|never"
        )
    )
    var failOn: FailOn?

    @Flag(help: "Do not read keys from the Secret Service (metadata-only checks, e.g. on a monitoring host).")
    var skipSecrets = false

    @OptionGroup var report: ReportOptions
    @OptionGroup(title: "Prometheus") var x509: X509MetricsOptions
    @OptionGroup var store: StoreOptions
    @OptionGroup var password: PasswordOptions

    func validate() throws {
        if report.json, format != .text, format != .json {
            throw ValidationError("--json and --format \(format.rawValue) ask for two outputs: give one.")
        }
        if !credentials.isEmpty, topic.count > 1 {
            throw ValidationError(
                "A named credential is judged against one topic: give one --topic, or name no credential for a verdict per app."
            )
        }
        for topic in topic { try TopicPlaceholder.refuse(topic) }
    }

    func run() async throws {
        let started = Date()
        let clock = ContinuousClock.now
        let store = try await self.store.credentialStore
        let request = CheckRequest(
            credentials: credentials,
            topics: topic,
            date: report.date,
            warnDays: report.warnDays,
            environment: environment,
            password: password.source(),
            skipSecrets: skipSecrets,
            teamID: teamID,
            keyID: keyID
        )
        var checked: CheckReport
        do {
            checked = try await CredentialCheck.run(request, in: store)
            if checked.nothingToCheck {
                // The metrics still say when the check ran and that there was nothing to check.
                try publishMetricsAnyway(CheckRun(checked, store: store))
                reportError(
                    CommandLineError(
                        .failed,
                        "The store at \(store.path) is empty: nothing to check.",
                        hint: "Import a credential or name files to check."
                    )
                )
                try publishJUnitAnyway(started: started, since: clock)
                throw ExitStatus.couldNotCheck
            }
        } catch let error as CredentialError {
            try? publishMetricsAnyway(.failed(at: request.date, error.message, source: X509Source.of(store)))
            reportError(error)
            try? publishJUnitAnyway(started: started, since: clock)
            throw exitStatus(for: error)
        }
        checked.results = checked.results.map { hinted($0, stored: checked.stored) }

        let outputFormat = report.json ? .json : format
        let policy = failOn ?? (outputFormat == .prometheus ? .never : .warning)
        let text: String
        switch outputFormat {
        case .json:
            let data = try ReportSchema.encoder().encode(
                CheckOutput(
                    evaluatedAt: request.date,
                    environment: environment,
                    topic: topic.first,
                    warnDays: report.warnDays,
                    credentials: checked.results,
                    verdicts: checked.verdicts,
                    storeVerdicts: checked.storeVerdicts,
                    storeSkipped: checked.skipped
                )
            )
            text = String(decoding: data, as: UTF8.self) + "\n"
        case .prometheus:
            text = CheckMetrics.render(CheckRun(checked, store: store), x509: x509.exposition)
        case .junit:
            text = JUnitReport.check(
                checked,
                failingOn: policy.severity,
                suite: Self.junitSuite,
                classname: Self.junitClassname,
                startedAt: started,
                duration: Self.seconds(since: clock)
            ).xml()
        case .text:
            text = StandardOutput.capture {
                let printer = CheckTextOutput(style: output == nil ? .stdout : TerminalStyle(fileDescriptor: -1))
                if let verdicts = checked.verdicts {
                    for (index, verdict) in verdicts.enumerated() {
                        if index > 0 { print("") }
                        printer.printVerdict(verdict, results: checked.results)
                    }
                } else {
                    printer.printResults(checked.judged, skipped: checked.skipped)
                    if let storeVerdicts = checked.storeVerdicts { printer.printAppSummary(storeVerdicts) }
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
        try ExitStatus.end(with: checked.outcome(failingOn: policy.severity))
    }

    /// One result with the command line's hints: the findings and errors whose remedy is a
    /// command of this tool name it, with the credential, so that it works when pasted.
    private func hinted(_ result: CheckResult, stored: [StoredCredential]) -> CheckResult {
        var result = result
        result.error = result.error?.forCommandLine
        var subject = FindingHints.Subject(
            name: result.name,
            stored: result.origin == "store",
            kind: result.kind,
            environment: environment,
            topic: result.expectedTopic
        )
        if result.origin == "store", let credential = stored.first(where: { $0.alias == result.name }) {
            subject.topics = credential.topics
            subject.environments = credential.environments
        }
        result.findings = FindingHints.forCommandLine(result.findings, about: subject).map { finding in
            var finding = finding
            if finding.code == .orphanedSecret {
                finding.hint = "Remove them with `\(ErrorHints.command("remove", "--orphans"))`."
            }
            return finding
        }
        return result
    }
}

extension Check.FailOn {
    /// The least severe finding that fails the check; nil when none does.
    var severity: Finding.Severity? {
        switch self {
        case .warning: return .warning
        case .problem: return .problem
        case .never: return nil
        }
    }
}

struct CheckOutput: Encodable {
    var schemaVersion = ReportSchema.schemaVersion
    var evaluatedAt: Date
    var environment: PushEnvironment?
    var topic: String?
    var warnDays: Int
    var credentials: [CheckResult]
    /// With --topic alone: one verdict per app.
    var verdicts: [AppVerdict]?
    /// The whole store checked: one verdict per app found in it.
    var storeVerdicts: [AppVerdict]?
    /// The whole store checked for an environment: what another credential of the app serves.
    var storeSkipped: [AppSelection.Skipped] = []

    enum CodingKeys: String, CodingKey {
        case schemaVersion, evaluatedAt, environment, topic, warnDays, credentials, fit, skipped, apps
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(schemaVersion, forKey: .schemaVersion)
        try container.encode(evaluatedAt, forKey: .evaluatedAt)
        try container.encodeIfPresent(environment, forKey: .environment)
        try container.encodeIfPresent(topic, forKey: .topic)
        try container.encode(warnDays, forKey: .warnDays)
        try container.encode(credentials, forKey: .credentials)
        guard let verdicts else {
            if !storeSkipped.isEmpty {
                let skipped = storeSkipped.map { SkippedEntry(name: $0.credential, judged: true, reason: $0.message) }
                try container.encode(skipped, forKey: .skipped)
            }
            try container.encodeIfPresent(storeVerdicts, forKey: .apps)
            return
        }
        // `fit` and `skipped` across every app, as before there was more than one; `apps` per app.
        var fit: [String] = []
        var skipped: [SkippedEntry] = []
        for verdict in verdicts {
            for name in verdict.fit where !fit.contains(name) { fit.append(name) }
            for name in verdict.unfit + verdict.couldNotCheck {
                let result = credentials.first { $0.name == name }
                let why =
                    result?.error.map { "could not be checked: \($0.message)" }
                    ?? result?.findings.filter { $0.severity == .problem }.map(\.message).joined(separator: " ")
                    ?? "not judged"
                skipped.append(SkippedEntry(name: name, judged: true, reason: why))
            }
            for entry in verdict.skipped {
                skipped.append(SkippedEntry(name: entry.credential, judged: false, reason: entry.message))
            }
        }
        try container.encode(fit, forKey: .fit)
        try container.encode(skipped, forKey: .skipped)
        try container.encode(verdicts, forKey: .apps)
    }

    struct SkippedEntry: Encodable {
        var name: String
        var judged: Bool
        var reason: String

        enum CodingKeys: String, CodingKey {
            case name = "credential"
            case judged, reason
        }
    }
}
