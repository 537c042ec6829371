import ArgumentParser
import Foundation
import PushCredentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check credentials for expiry, environment and topic before a deploy, in CI, or for monitoring.",
        discussion: """
            With no argument, every stored credential is checked. Arguments may be aliases or files \
            (a file is read with the password options, so a CI job needs no store).

            Findings: expired; expiring within --warn-days; not yet valid; environment mismatch with \
            --environment; topic not covered (--topic); key/certificate mismatch; token key metadata \
            incomplete. Each says what to do.

            Exit status: 0 all well, 1 a finding, 2 something could not be checked (or the output \
            could not be written). With --format prometheus the findings are in the metrics, so it \
            exits 0 whenever it could check; --fail-on sets when a finding also makes it exit 1 \
            (warning: any finding, the default for text and JSON; problem: expired, mismatched or \
            unusable only; never).

            --format prometheus writes node_exporter textfile-collector metrics. With --output FILE \
            the file is replaced atomically (a temporary file in the same folder, synced, renamed, \
            mode 0644), so the collector never reads half a file: point it at the collector's \
            folder, e.g. --output /var/lib/prometheus/node-exporter/apnsctl.prom, and alert on \
            apnsctl_credential_seconds_left or apnsctl_credential_problem.
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

    @Option(
        help: ArgumentHelp(
            "Write the report to FILE, replaced atomically (for node_exporter's textfile collector).",
            valueName: "FILE"
        )
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
            if references.isEmpty {
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
        } catch let error as CredentialError {
            reportError(error)
            throw ExitStatus.couldNotCheck
        }

        let outputFormat = report.json ? .json : format
        if let output {
            try Self.writeAtomically(render(results, as: outputFormat, expectations: expectations), to: output)
        } else {
            switch outputFormat {
            case .json, .prometheus:
                try writeStandardOutput(Array(try render(results, as: outputFormat, expectations: expectations).utf8))
            case .text: printText(results)
            }
        }
        if results.contains(where: { $0.error != nil }) { throw ExitStatus.couldNotCheck }
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

    /// The report as text for a file or standard output (JSON or Prometheus; text is printed).
    private func render(_ results: [CheckResult], as format: Format, expectations: CheckExpectations) throws -> String {
        switch format {
        case .json:
            let data = try ReportSchema.encoder().encode(
                CheckOutput(
                    schemaVersion: ReportSchema.schemaVersion,
                    evaluatedAt: expectations.date,
                    environment: environment,
                    topic: topic,
                    warnDays: report.warnDays,
                    credentials: results
                )
            )
            return String(decoding: data, as: UTF8.self) + "\n"
        case .prometheus:
            return PrometheusExport.render(results, at: expectations.date)
        case .text:
            let previous = StandardOutput.capture { printText(results) }
            return previous
        }
    }

    /// A temporary file beside `path`, written, synced and renamed over it: a reader sees the old
    /// file or the new one, never half of either. Mode 0644, as node_exporter's collector reads it.
    static func writeAtomically(_ text: String, to path: String) throws {
        let destination = URL(fileURLWithPath: path)
        let temporary = destination.deletingLastPathComponent()
            .appendingPathComponent(".\(destination.lastPathComponent).\(getpid()).tmp")
        let bytes = Array(text.utf8)
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw CredentialError(
                .writeFailed,
                path: path,
                "The report cannot be written: the folder does not take a new file (\(String(cString: strerror(errno)))).",
                hint: "Check that the folder exists and is writable."
            )
        }
        fchmod(fd, 0o644)  // whatever the umask: the collector may run as another user
        let written = writeAll(fd, bytes) && fsync(fd) == 0
        let reason = String(cString: strerror(errno))
        close(fd)
        guard written, rename(temporary.path, destination.path) == 0 else {
            let failure = written ? String(cString: strerror(errno)) : reason
            unlink(temporary.path)
            throw CredentialError(
                .writeFailed,
                path: path,
                "The report could not be written (\(failure)); the previous one, if any, is unchanged.",
                hint: "Free some space or fix the folder's permissions."
            )
        }
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
                summary.append(
                    Untrusted.display(result.topics[0])
                        + (result.topics.count > 1 ? " (+\(result.topics.count - 1))" : "")
                )
            }
            if !result.environments.isEmpty {
                summary.append(result.environments.map(\.rawValue).joined(separator: "+"))
            }
            if let notAfter = result.notAfter, let days = result.daysLeft {
                summary.append("expires \(CertificateRenderer.day(notAfter)) (\(days) days)")
            }
            let name = Untrusted.display(result.name)
            print("\(mark) \(style.paint(name, .bold))  \(style.paint(summary.joined(separator: "  "), .dim))")
            for finding in result.findings {
                print("    \(Untrusted.display(finding.message))")
                if let hint = finding.hint { print("    \(style.paint("→ \(Untrusted.display(hint))", .dim))") }
            }
            if let error = result.error {
                print("    could not check: \(Untrusted.display(error.message))")
                if let hint = error.hint { print("    \(style.paint("→ \(Untrusted.display(hint))", .dim))") }
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
