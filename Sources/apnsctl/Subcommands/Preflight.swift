import ArgumentParser
import CredentialFormats
import Foundation
import PushChecks
import PushGateway

struct Preflight: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preflight",
        abstract: "The one command a deploy pipeline runs: check, handshake and auth-check every credential.",
        discussion: """
            For each credential probed: the `check` findings for the environment and topic, a \
            TLS/HTTP/2 handshake with the gateway, and an auth check (one notification to a made-up \
            token, which APNs answers without notifying anyone). One line per credential, then one \
            verdict per app.

            With no credential named, the verdict is per app: --topic APP (repeatable) names the \
            apps, else every app found in the store is judged. Only the credentials that could serve \
            the app in --environment are probed; other apps', other environments' and superseded ones \
            are listed as skipped. An app is ready when at least one of its credentials is. A \
            development app found in the store (not named) is reported as sandbox only in a \
            production preflight, not as a failure.

            Against Apple's gateways it first checks, without connecting, that the trust store \
            (the system's, or --ca-bundle, plus every --ca) holds the root APNs' servers chain to \
            ("USERTrust RSA Certification Authority" since 2025); a store without it is not ready. \
            Against another gateway (--gateway HOST, a local gateway) each handshake reports the \
            root its chain ended at instead. When no port is given and port 443 cannot be reached \
            over TCP, port 2197 is tried, and the line says which worked.

            Exit status: 0 every app (or named credential) ready; 1 the trust store lacks APNs' \
            current root, or an app has no fit credential (or a named credential would not work), \
            which wins over 2; 2 nothing could be judged for an app or a named credential \
            (network, DNS, TLS or proxy failure, Secret Service out of reach, a mistyped alias), \
            an empty store with nothing named, the store unreadable; 64 usage error.

            --format junit writes a JUnit XML test report for CI (GitLab, Jenkins, GitHub's \
            test-report actions): one test case per app and environment ("com.example.app \
            (production)"), or per credential named, failed with why and the fix when it is not \
            ready, in error when it could not be checked, skipped when it is sandbox only; the \
            exit status is the same. --output FILE writes the json or junit report to FILE, \
            whole or not at all.

            Examples, against a local gateway on port 2197 (apnsctl gateway serve); \
            without --gateway and --ca they go to APNs itself. The .p12 password is in the \
            environment variable P12_PASSWORD.
              apnsctl preflight com.example.app-universal --environment sandbox \\
                --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
              apnsctl preflight app.p12 --password-env P12_PASSWORD \\
                --environment sandbox --json --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
              apnsctl preflight com.example.app-universal --environment sandbox \\
                --format junit --output preflight.xml \\
                --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
            """
    )

    @Argument(
        help: ArgumentHelp("Aliases or files (default: every stored credential).", valueName: "ALIAS|FILE"),
        completion: .storedAliasOrFile
    )
    var credentialNames: [String] = []

    @Option(
        help: ArgumentHelp(
            "The app (bundle ID) about to be pushed to; repeatable (default: every app in the store, or a named credential's own).",
            valueName: "BUNDLE"
        )
    )
    var topic: [String] = []

    @Option(help: ArgumentHelp("Warn about certificates that expire within this many days.", valueName: "N"))
    var warnDays = 30

    @Flag(help: "Print a versioned JSON report (--format json).")
    var json = false

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json, junit }

    @Option(help: ArgumentHelp("Output format.", valueName: "text|json|junit"))
    var format: Format = .text

    @Option(
        help: ArgumentHelp(
            "Write the json or junit report to FILE, replaced atomically (e.g. for CI's test reports).",
            valueName: "FILE"
        ),
        completion: .file()
    )
    var output: String?

    @Option(
        help: ArgumentHelp("The environment you are deploying against (required).", valueName: "sandbox|production")
    )
    var environment: PushEnvironment

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var credentials: CredentialOptions

    func validate() throws {
        if json, format != .text, format != .json {
            throw ValidationError("--json and --format \(format.rawValue) ask for two outputs: give one.")
        }
        if output != nil, !json, format == .text {
            throw ValidationError(
                "--output writes a report: add --format junit or --format json (the text shows progress as it goes)."
            )
        }
        if !credentialNames.isEmpty, topic.count > 1 {
            throw ValidationError(
                "A named credential is probed for one topic: give one --topic, or name no credential for a verdict per app."
            )
        }
        for topic in topic { try TopicPlaceholder.refuse(topic) }
    }

    func run() async throws {
        let started = Date()
        let clock = ContinuousClock.now
        let outputFormat = json ? .json : format
        let style = TerminalStyle.stdout
        let preflight = PreflightCheck(
            environment: environment,
            topic: topic.first,
            warnDays: warnDays,
            settings: connection.settings(environment: environment)
        )
        let target: PreflightTarget = credentialNames.isEmpty ? .apps(topics: topic) : .credentials(credentialNames)
        let run: PreflightRun
        do {
            run = try await withUserErrors {
                try await preflight.run(
                    target,
                    store: try await credentials.store.credentialStore,
                    loader: try await credentials.loader
                ) {
                    guard outputFormat == .text else { return }
                    switch $0 {
                    case .app(let app):
                        print(renderApp(app.verdict, reports: app.reports.map(forCommandLine), style: style))
                    case .credential(let report):
                        print(render(forCommandLine(report), style: style))
                    case .trustStore(let trust):
                        print(TrustRenderer(style: style).verdictLines(trust).joined(separator: "\n") + "\n")
                    }
                }
            }
        } catch {
            // A run that stopped (the store unreadable or empty) is still a JUnit report, in error.
            if outputFormat == .junit, let reported = JSONFailure.error {
                try? write(
                    JUnitReport.stopped(
                        suite: "apnsctl preflight",
                        classname: "apnsctl.preflight",
                        error: reported,
                        startedAt: started,
                        duration: Check.seconds(since: clock)
                    ).xml()
                )
            }
            throw error
        }
        let entries = run.reports.map(forCommandLine)
        let outcome = run.outcome
        switch outputFormat {
        case .json:
            let report = PreflightOutput(
                environment: environment,
                topic: topic.count == 1 ? topic[0] : nil,
                topics: topic,
                ready: outcome == .allWell,
                credentials: entries,
                apps: run.apps,
                trustStore: run.trustStore
            )
            if output == nil {
                try printJSON(report)
            } else {
                try write(String(decoding: try ReportSchema.encoder().encode(report), as: UTF8.self) + "\n")
            }
        case .junit:
            var checked = run
            checked.reports = entries
            try write(
                JUnitReport.preflight(
                    checked,
                    environment: environment,
                    topics: topic,
                    suite: "apnsctl preflight",
                    classname: "apnsctl.preflight",
                    startedAt: started,
                    duration: Check.seconds(since: clock)
                ).xml()
            )
        case .text:
            print(
                "\n"
                    + summary(
                        entries: entries,
                        verdicts: run.apps,
                        trust: run.trustStore,
                        outcome: outcome,
                        style: style
                    )
            )
        }
        try ExitStatus.end(with: outcome)
    }

    /// A report to --output (written whole or not at all) or standard output.
    private func write(_ text: String) throws {
        JSONFailure.printed = true
        if let output {
            try Check.writeAtomically(text, to: output)
        } else {
            try writeStandardOutput(Array(text.utf8))
        }
    }

    private func summary(
        entries: [PreflightReport],
        verdicts: [AppVerdict]?,
        trust: TrustStoreCheck?,
        outcome: CheckOutcome,
        style: TerminalStyle
    )
        -> String
    {
        let text: String
        if let verdicts {
            let ready = verdicts.filter(\.ready).count
            let sandbox = verdicts.filter { $0.state == .sandboxOnly }.count
            text =
                "\(ready) of \(verdicts.count) app\(verdicts.count == 1 ? "" : "s") ready for \(environment)"
                + (sandbox > 0 ? " (\(sandbox) sandbox only)" : "")
        } else {
            let ready = entries.filter(\.ready).count
            text =
                "\(ready) of \(entries.count) credential\(entries.count == 1 ? "" : "s") ready for \(environment)"
        }
        if let trust, !trust.ready {
            return style.paint(
                "✗ not ready: the trust store lacks the root APNs chains to (see above); " + text,
                .red,
                .bold
            )
        }
        switch outcome {
        case .allWell: return style.paint("✓ " + text, .green, .bold)
        case .couldNotCheck: return style.paint("? " + text + "; the rest could not be checked", .red, .bold)
        case .problemFound: return style.paint("✗ " + text, .red, .bold)
        }
    }

    private func renderApp(_ verdict: AppVerdict, reports: [PreflightReport], style: TerminalStyle) -> String {
        var lines: [String] = []
        let mark: String
        let what: String
        switch verdict.state {
        case .ready:
            mark = style.paint("✓", .green, .bold)
            what = "ready: \(verdict.fit.joined(separator: ", "))"
        case .sandboxOnly:
            mark = style.paint("-", .dim)
            what = "sandbox only: no production credential (not a failure; name it with --topic to require one)"
        case .couldNotCheck:
            mark = style.paint("?", .red, .bold)
            what = "could not be checked"
        case .notReady:
            mark = style.paint("✗", .red, .bold)
            what =
                verdict.unfit.isEmpty
                ? "no stored credential could serve it in \(environment)" : "no credential is fit for \(environment)"
        }
        lines.append("\(mark) \(style.paint(Untrusted.display(verdict.topic), .bold))  \(what)")
        for report in reports {
            lines.append(
                render(report, style: style).split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }
                    .joined(separator: "\n")
            )
        }
        let (listed, others) = verdict.skippedToList
        for entry in listed {
            lines.append(
                "  \(style.paint("-", .dim)) \(Untrusted.display(entry.credential))  \(style.paint("skipped: \(entry.message)", .dim))"
            )
        }
        if let others { lines.append("  \(style.paint("-", .dim)) \(style.paint(others, .dim))") }
        return lines.joined(separator: "\n")
    }

    /// The report with the command line's hints.
    private func forCommandLine(_ report: PreflightReport) -> PreflightReport {
        var report = report
        report.findings = FindingHints.forCommandLine(
            report.findings,
            about: .init(
                name: report.credential,
                stored: report.isStored,
                environment: environment
            )
        )
        if let error = report.connectionError {
            report.error = error.forCommandLine
            report.handshake?.error = error.forCommandLine
        }
        report.authCheck = report.authCheck?.forCommandLine
        return report
    }

    private func render(_ entry: PreflightReport, style: TerminalStyle) -> String {
        let mark =
            entry.ready
            ? style.paint("✓", .green, .bold)
            : entry.fitness == .couldNotCheck ? style.paint("?", .red, .bold) : style.paint("✗", .red, .bold)
        var verdict: String
        var hint: String?
        if let error = entry.error.map(PreflightCheck.reported) {
            // Whole, on a terminal or not: a CI log keeps the hint's end.
            verdict =
                (entry.connectionError != nil ? "could not connect: " : "could not be checked: ")
                + Untrusted.display(error.message)
            hint = error.hint.map(Untrusted.display)
        } else if let auth = entry.authCheck, auth.verdict != .accepted {
            verdict =
                "APNs \(auth.verdict == .rejected ? "rejects" : "gave no verdict on") it\(auth.reason.map { ": \($0)" } ?? "") — \(auth.fix ?? auth.explanation)"
        } else if let blocking = entry.blockingFinding {
            verdict = blocking.message
        } else {
            let total = entry.handshake?.totalDuration.map(HandshakeRenderer.milliseconds) ?? "?"
            verdict = "handshake \(total), accepted for \(entry.topic ?? "its topic")"
        }
        var lines = ["\(mark) \(style.paint(Untrusted.display(entry.credential), .bold))  \(verdict)"]
        if let hint { lines.append("    \(style.paint("→ " + hint, .dim))") }
        if let fallback = entry.portFallback { lines.append("    \(style.paint("! ", .yellow))\(fallback.summary)") }
        for finding in entry.findings where !(PreflightCheck.isBlocking(finding) && lines[0].contains(finding.message))
        {
            lines.append(
                "    \(PreflightCheck.isBlocking(finding) ? style.paint("✗", .red) : style.paint("!", .yellow)) \(finding.message)"
            )
        }
        return lines.joined(separator: "\n")
    }
}

struct PreflightOutput: Encodable {
    var schemaVersion = ReportSchema.schemaVersion
    var environment: PushEnvironment
    var topic: String?
    /// Every --topic given (empty: the apps found in the store).
    var topics: [String]
    var ready: Bool
    var credentials: [PreflightReport]
    /// With no credential named: one verdict per app.
    var apps: [AppVerdict]?
    /// Whether the trust store holds APNs' root (Apple's gateways only).
    var trustStore: TrustStoreCheck?
}

extension AppVerdict {
    /// The skipped credentials a person reads one by one, and the others as one line. For an
    /// app found in the store, every other app's credential is skipped: listed one by one that
    /// is a line per credential under every app, hundreds for a store of many apps, and says
    /// nothing about this app. An app named with --topic lists them all, as `check --topic`
    /// does (and JSON always does).
    var skippedToList: (listed: [AppSelection.Skipped], others: String?) {
        guard !named else { return (skipped, nil) }
        let others = skipped.filter { $0.reason == .otherApp }
        let listed = skipped.filter { $0.reason != .otherApp }
        guard !others.isEmpty else { return (listed, nil) }
        let count = others.count == 1 ? "1 credential" : "\(others.count) credentials"
        return (listed, "\(count) of other apps skipped (--json lists them)")
    }
}
