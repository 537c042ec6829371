import ArgumentParser
import Foundation
import PushCredentials

struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check credentials for expiry, environment and topic before a deploy, in CI, or for monitoring.",
        discussion: """
            With no argument, every stored credential is checked. Arguments may be aliases or files \
            (a file is read with the password options, so a CI job needs no store).

            Findings: expired; expiring within --warn-days; not yet valid; environment mismatch with \
            --environment; topic not covered (--topic); key/certificate mismatch; token key metadata \
            incomplete. Each says what to do.

            Exit status: 0 all well, 1 any finding, 2 something could not be checked.

            --format prometheus writes node_exporter textfile-collector metrics: point the output at \
            the collector's folder (write to a temporary name and rename, as node_exporter advises) \
            and alert on apnsctl_credential_seconds_left or apnsctl_credential_problem.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json, prometheus }

    @Argument(help: ArgumentHelp("Aliases or files (default: every stored credential).", valueName: "ALIAS|FILE"))
    var credentials: [String] = []

    @Option(help: ArgumentHelp("The environment you are about to deploy against.", valueName: "sandbox|production"))
    var environment: PushEnvironment?

    @Option(help: ArgumentHelp("The bundle ID you are about to push to.", valueName: "BUNDLE"))
    var topic: String?

    @Option(help: "Output format.")
    var format: Format = .text

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
        let expectations = CheckExpectations(
            date: report.date,
            warnDays: report.warnDays,
            environment: environment,
            topic: topic
        )
        var results: [CheckResult] = []
        do {
            let references: [CredentialReference] =
                credentials.isEmpty
                ? try store.list().map { .stored($0) }
                : try credentials.map { try CredentialReference.resolve($0, store: store) }
            let orphaned = orphanResults(store)
            if references.isEmpty, orphaned.isEmpty {
                printError(
                    "The store at \(store.path) is empty: nothing to check. Import a credential or name files to check."
                )
                throw ExitStatus.couldNotCheck
            }
            let source = password.source()
            for reference in references {
                var result = check(reference, store: store, expectations: expectations, password: source)
                result.findings = FindingHints.forCommandLine(
                    result.findings,
                    about: .init(
                        name: result.name,
                        stored: reference.origin == "store",
                        kind: result.kind,
                        environment: environment
                    )
                )
                results.append(result)
            }
            results += orphaned
        } catch let error as CredentialError {
            reportError(error)
            throw ExitStatus.couldNotCheck
        }

        let outputFormat = report.json ? .json : format
        switch outputFormat {
        case .json:
            try printJSON(
                CheckOutput(
                    schemaVersion: ReportSchema.schemaVersion,
                    evaluatedAt: expectations.date,
                    environment: environment,
                    topic: topic,
                    warnDays: report.warnDays,
                    credentials: results
                )
            )
        case .prometheus:
            print(PrometheusExport.render(results, at: expectations.date), terminator: "")
        case .text:
            printText(results)
        }
        if results.contains(where: { $0.error != nil }) { throw ExitStatus.couldNotCheck }
        if results.contains(where: { !$0.findings.isEmpty }) { throw ExitStatus.problem }
    }

    private func check(
        _ reference: CredentialReference,
        store: CredentialStore,
        expectations: CheckExpectations,
        password: PasswordSource
    ) -> CheckResult {
        let name: String
        switch reference {
        case .stored(let credential): name = credential.alias
        case .file(let path): name = path
        }
        do {
            switch reference {
            case .file(let path):
                let file = try CredentialFile.read(path: path, password: password)
                return CredentialCheck.certificate(
                    file,
                    name: path,
                    origin: "file",
                    keyVerified: true,
                    expectations: expectations
                )
            case .stored(let credential) where credential.kind == .tokenKey:
                var present: Bool?
                if !skipSecrets {
                    do {
                        _ = try store.tokenKey(of: credential)
                        present = true
                    } catch let error as CredentialError where error.code == .secretNotFound {
                        present = false
                    }
                }
                return CredentialCheck.tokenKey(credential, keyPresent: present, expectations: expectations)
            case .stored(let credential):
                if skipSecrets {
                    return CredentialCheck.certificate(
                        try store.certificate(of: credential),
                        name: name,
                        origin: "store",
                        keyVerified: false,
                        expectations: expectations
                    )
                }
                return CredentialCheck.certificate(
                    try store.identity(of: credential),
                    name: name,
                    origin: "store",
                    keyVerified: true,
                    expectations: expectations
                )
            }
        } catch let error as CredentialError {
            return .failed(name: name, origin: reference.origin, error: error.forCommandLine)
        } catch {
            return .failed(
                name: name,
                origin: reference.origin,
                error: CredentialError(.corrupt, path: name, "\(error)")
            )
        }
    }

    private func printText(_ results: [CheckResult]) {
        let style = TerminalStyle.stdout
        for result in results {
            let mark =
                result.error != nil
                ? style.paint("?", .red, .bold) : result.ok ? style.paint("✓", .green) : style.paint("✗", .red, .bold)
            var summary: [String] = []
            if let kind = result.kind { summary.append(kind == .tokenKey ? "token key" : "certificate") }
            if !result.topics.isEmpty {
                summary.append(result.topics[0] + (result.topics.count > 1 ? " (+\(result.topics.count - 1))" : ""))
            }
            if !result.environments.isEmpty {
                summary.append(result.environments.map(\.rawValue).joined(separator: "+"))
            }
            if let notAfter = result.notAfter, let days = result.daysLeft {
                summary.append("expires \(CertificateRenderer.day(notAfter)) (\(days) days)")
            }
            print("\(mark) \(style.paint(result.name, .bold))  \(style.paint(summary.joined(separator: "  "), .dim))")
            for finding in result.findings {
                print("    \(finding.message)")
                if let hint = finding.hint { print("    \(style.paint("→ \(hint)", .dim))") }
            }
            if let error = result.error {
                print("    could not check: \(error.message)")
                if let hint = error.hint { print("    \(style.paint("→ \(hint)", .dim))") }
            }
        }
        let bad = results.filter { !$0.ok }.count
        print("\n\(results.count) checked: \(results.count - bad) fine, \(bad) with findings or errors")
    }
}

struct CheckOutput: Encodable {
    var schemaVersion: Int
    var evaluatedAt: Date
    var environment: PushEnvironment?
    var topic: String?
    var warnDays: Int
    var credentials: [CheckResult]
}
