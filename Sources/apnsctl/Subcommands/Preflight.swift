import ArgumentParser
import Foundation
import PushCredentials
import PushGateway

struct Preflight: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The one command a deploy pipeline runs: check, handshake and auth-check every credential.",
        discussion: """
            For each named (or every stored) credential: the `check` findings for the environment and \
            topic, a TLS/HTTP/2 handshake with the gateway, and an auth check (one notification to a \
            made-up token, which APNs answers without notifying anyone). One line per credential, then \
            a summary.

            Exit status: 0 only when every credential would work for this deploy; 1 when any would not; \
            2 when something could not be checked at all (no credential, store unreadable).
            """
    )

    @Argument(help: ArgumentHelp("Aliases or files (default: every stored credential).", valueName: "ALIAS|FILE"))
    var credentialNames: [String] = []

    @Option(help: ArgumentHelp("The bundle ID about to be pushed to (default: each credential's own).", valueName: "BUNDLE"))
    var topic: String?

    @Option(name: .customLong("warn-days"), help: "Warn about certificates that expire within this many days.")
    var warnDays = 30

    @Flag(help: "Print a versioned JSON report.")
    var json = false

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var credentials: CredentialOptions

    func validate() throws {
        if connection.environment == nil { throw ValidationError("preflight needs --environment sandbox|production: the one you are deploying against.") }
    }

    func run() async throws {
        let environment = connection.environment!
        let names: [String] = try await withUserErrors {
            let names = credentialNames.isEmpty ? try credentials.store.credentialStore.list().map(\.alias) : credentialNames
            if names.isEmpty {
                throw CredentialError(.aliasNotFound, path: nil, "There is no credential to check: the store is empty and none was named.",
                                      hint: "Import one (`apnsctl import FILE`) or name files.")
            }
            return names
        }
        let style = TerminalStyle.stdout
        var entries: [PreflightEntry] = []
        for name in names {
            let entry = await check(name, environment: environment)
            entries.append(entry)
            if !json { print(render(entry, style: style)) }
        }
        let failed = entries.filter { !$0.ready }
        if json {
            try printJSON(PreflightOutput(schemaVersion: ReportSchema.schemaVersion, environment: environment, topic: topic,
                                          ready: failed.isEmpty, credentials: entries))
        } else {
            let summary = "\(entries.count - failed.count) of \(entries.count) credential\(entries.count == 1 ? "" : "s") ready for \(environment)"
            print("\n" + (failed.isEmpty ? style.paint("✓ " + summary, .green, .bold) : style.paint("✗ " + summary, .red, .bold)))
        }
        if !failed.isEmpty { throw ExitStatus.problem }
    }

    /// Findings that would make a deploy fail; the rest are shown but do not block.
    static let blocking: Set<String> = ["expired", "not_yet_valid", "environment_mismatch", "topic_not_covered", "key_mismatch", "not_push_certificate"]

    private func check(_ name: String, environment: PushEnvironment) async -> PreflightEntry {
        var entry = PreflightEntry(credential: name, ready: false, findings: [])
        do {
            let loaded = try credentials.load(name)
            let topic = self.topic ?? loaded.defaultTopic
            entry.topic = topic
            entry.findings = loaded.preflightFindings(environment: environment, topic: topic, warnDays: warnDays)
            let (configuration, _) = try connection.configuration(for: loaded, environment: environment)
            let outcome = await HandshakeOutcome.run(configuration: configuration, environment: environment, credential: loaded,
                                                     topic: topic, authCheck: true, warnings: entry.findings, notices: [])
            entry.handshake = outcome.output.handshake
            entry.authCheck = outcome.output.authCheck
            if let error = outcome.error { entry.error = error.message + (error.hint.map { " (\($0))" } ?? "") }
            entry.ready = outcome.error == nil && outcome.output.authCheck?.verdict == .accepted
                && !entry.findings.contains { Self.blocking.contains($0.code) }
        } catch let error as CredentialError {
            entry.error = error.message
        } catch let error as GatewayError {
            entry.error = error.message
        } catch {
            entry.error = "\(error)"
        }
        return entry
    }

    private func render(_ entry: PreflightEntry, style: TerminalStyle) -> String {
        let mark = entry.ready ? style.paint("✓", .green, .bold) : style.paint("✗", .red, .bold)
        var verdict: String
        if let error = entry.error {
            verdict = "could not connect: \(error)"
        } else if let auth = entry.authCheck, auth.verdict != .accepted {
            verdict = "APNs \(auth.verdict == .rejected ? "rejects" : "gave no verdict on") it\(auth.reason.map { ": \($0)" } ?? "") — \(auth.fix ?? auth.explanation)"
        } else if let blocking = entry.findings.first(where: { Self.blocking.contains($0.code) }) {
            verdict = blocking.message
        } else {
            let total = entry.handshake?.totalDuration.map(HandshakeRenderer.milliseconds) ?? "?"
            verdict = "handshake \(total), accepted for \(entry.topic ?? "its topic")"
        }
        var lines = ["\(mark) \(style.paint(entry.credential, .bold))  \(verdict)"]
        for finding in entry.findings where !(Self.blocking.contains(finding.code) && lines[0].contains(finding.message)) {
            lines.append("    \(Self.blocking.contains(finding.code) ? style.paint("✗", .red) : style.paint("!", .yellow)) \(finding.message)")
        }
        return lines.joined(separator: "\n")
    }
}

struct PreflightEntry: Encodable {
    var credential: String
    var ready: Bool
    var topic: String?
    var findings: [Finding]
    var handshake: HandshakeReport?
    var authCheck: AuthCheck?
    var error: String?
}

struct PreflightOutput: Encodable {
    var schemaVersion: Int
    var environment: PushEnvironment
    var topic: String?
    var ready: Bool
    var credentials: [PreflightEntry]
}
