import ArgumentParser
import Foundation
import PushCredentials
import PushGateway

struct Preflight: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preflight",
        abstract: "The one command a deploy pipeline runs: check, handshake and auth-check every credential.",
        discussion: """
            For each named (or every stored) credential: the `check` findings for the environment and \
            topic, a TLS/HTTP/2 handshake with the gateway, and an auth check (one notification to a \
            made-up token, which APNs answers without notifying anyone). One line per credential, then \
            a summary.

            Exit status: 0 only when every credential would work for this deploy; 1 when any would not; \
            2 when something could not be checked at all (no credential, store unreadable).

            Examples, against a local gateway on port 2197 (apnsctl gateway serve); \
            without --gateway and --ca they go to APNs itself. The .p12 password is in the \
            environment variable P12_PASSWORD.
              apnsctl preflight com.example.app-universal --environment sandbox \\
                --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
              apnsctl preflight app.p12 --password-env P12_PASSWORD \\
                --environment sandbox --json --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
            """
    )

    @Argument(
        help: ArgumentHelp("Aliases or files (default: every stored credential).", valueName: "ALIAS|FILE"),
        completion: .storedAliasOrFile
    )
    var credentialNames: [String] = []

    @Option(
        help: ArgumentHelp("The bundle ID about to be pushed to (default: each credential's own).", valueName: "BUNDLE")
    )
    var topic: String?

    @Option(
        name: .customLong("warn-days"),
        help: ArgumentHelp("Warn about certificates that expire within this many days.", valueName: "N")
    )
    var warnDays = 30

    @Flag(help: "Print a versioned JSON report.")
    var json = false

    @Option(
        help: ArgumentHelp("The environment you are deploying against (required).", valueName: "sandbox|production")
    )
    var environment: PushEnvironment

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var credentials: CredentialOptions

    func run() async throws {
        let names: [String] = try await withUserErrors {
            let names =
                credentialNames.isEmpty ? try credentials.store.credentialStore.list().map(\.alias) : credentialNames
            if names.isEmpty {
                throw CredentialError(
                    .aliasNotFound,
                    path: nil,
                    "There is no credential to check: the store is empty and none was named.",
                    hint: "Import one (`apnsctl import FILE`) or name files."
                )
            }
            return names
        }
        let style = TerminalStyle.stdout
        let preflight = PreflightCheck(
            environment: environment,
            topic: topic,
            warnDays: warnDays,
            settings: connection.settings(environment: environment)
        )
        var entries: [PreflightReport] = []
        for name in names {
            let entry = Self.forCommandLine(
                await preflight.check(name, loader: credentials.loader),
                environment: environment
            )
            entries.append(entry)
            if !json { print(render(entry, style: style)) }
        }
        let failed = entries.filter { !$0.ready }
        if json {
            try printJSON(
                PreflightOutput(
                    schemaVersion: ReportSchema.schemaVersion,
                    environment: environment,
                    topic: topic,
                    ready: failed.isEmpty,
                    credentials: entries
                )
            )
        } else {
            let summary =
                "\(entries.count - failed.count) of \(entries.count) credential\(entries.count == 1 ? "" : "s") ready for \(environment)"
            print(
                "\n"
                    + (failed.isEmpty
                        ? style.paint("✓ " + summary, .green, .bold) : style.paint("✗ " + summary, .red, .bold))
            )
        }
        if !failed.isEmpty { throw ExitStatus.problem }
    }

    /// The report with the command line's hints.
    static func forCommandLine(_ report: PreflightReport, environment: PushEnvironment) -> PreflightReport {
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
            report.error = error.forCommandLine.reported
            report.handshake?.error = report.error
        }
        report.authCheck = report.authCheck?.forCommandLine
        return report
    }

    private func render(_ entry: PreflightReport, style: TerminalStyle) -> String {
        let mark = entry.ready ? style.paint("✓", .green, .bold) : style.paint("✗", .red, .bold)
        var verdict: String
        if let error = entry.error {
            let text = error.message + (error.hint.map { " (\($0))" } ?? "")
            verdict = "could not connect: \(UserFacing.sanitize(text))"
        } else if let auth = entry.authCheck, auth.verdict != .accepted {
            verdict =
                "APNs \(auth.verdict == .rejected ? "rejects" : "gave no verdict on") it\(auth.reason.map { ": \($0)" } ?? "") — \(auth.fix ?? auth.explanation)"
        } else if let blocking = entry.blockingFinding {
            verdict = blocking.message
        } else {
            let total = entry.handshake?.totalDuration.map(HandshakeRenderer.milliseconds) ?? "?"
            verdict = "handshake \(total), accepted for \(entry.topic ?? "its topic")"
        }
        var lines = ["\(mark) \(style.paint(entry.credential, .bold))  \(verdict)"]
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
    var schemaVersion: Int
    var environment: PushEnvironment
    var topic: String?
    var ready: Bool
    var credentials: [PreflightReport]
}
