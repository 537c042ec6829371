import ArgumentParser
import CredentialFormats
import Foundation
import PushChecks
import PushGateway

struct Handshake: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handshake",
        abstract: "Connect to APNs with a credential and report each phase, the TLS details and the server's chain.",
        discussion: """
            Connects TCP → TLS 1.2+ → ALPN h2 → HTTP/2 SETTINGS to the chosen gateway and reports how \
            long each phase took, the TLS version, the server's certificate chain and the trust verdict, \
            and the server's MAX_CONCURRENT_STREAMS. Before connecting it warns when the credential does \
            not cover the environment or topic, or has expired.

            The report names the address connected to and the anchor: the root the server's chain was \
            verified up to, where it came from (system trust store, --ca-bundle, --ca) and whether it is \
            one of APNs' roots. Without -4 or -6 every address of the name is tried the Happy Eyeballs \
            way (RFC 8305: IPv6 and IPv4 interleaved, a new attempt every 250 ms); --resolve gives a \
            name its addresses without DNS.

            --auth-check also sends one notification to a made-up device token: APNs answers 400 \
            BadDeviceToken only after it has accepted the credential and topic, and 403 when it has not, \
            so no device is notified either way.

            Exit status: 0 connected (and, with --auth-check, accepted); 1 the server refused the \
            client certificate, or APNs rejected the credential or topic; 2 could not connect \
            (credential unreadable or not there, DNS, TCP, TLS or proxy failure), or the auth check \
            got no verdict (APNs busy or failing); 64 usage error, a proxy that is not http:// \
            included.

            Examples, against a local gateway on port 2197 (apnsctl gateway serve); \
            without --gateway and --ca they go to APNs itself.
              apnsctl handshake com.example.app-universal --auth-check \\
                --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
            """
    )

    @Argument(
        help: ArgumentHelp("A stored alias, or a .p12/.pem/.p8 file.", valueName: "CREDENTIAL"),
        completion: .storedAliasOrFile
    )
    var credential: String

    @Flag(name: .customLong("auth-check"), help: "Also prove that APNs accepts the credential and topic.")
    var authCheck = false

    @Option(
        help: ArgumentHelp("The topic for --auth-check (default: the credential's bundle ID).", valueName: "BUNDLE")
    )
    var topic: String?

    @Flag(help: "Print a versioned JSON report.")
    var json = false

    @Option(help: ConnectionOptions.optionalEnvironmentHelp)
    var environment: PushEnvironment?

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var credentials: CredentialOptions

    func run() async throws {
        let style = TerminalStyle.stdout
        let (plan, notes) = try await withUserErrors {
            try connection.plan(for: try await credentials.load(credential), requested: environment, topic: topic)
        }
        let warnings = FindingHints.forCommandLine(
            plan.warnings,
            about: .init(plan.credential, environment: plan.environment)
        )
        if !json { printHeader(plan, notes: notes, warnings: warnings, style: style) }
        var check = await HandshakeCheck.run(plan, authCheck: authCheck)
        check.authCheck = check.authCheck?.forCommandLine
        // The report's error carries the command line's hint, as the printed error does.
        if let error = check.error { check.handshake.error = error.forCommandLine }
        if json {
            try printJSON(
                HandshakeOutput(
                    credential: plan.credential.name,
                    environment: plan.environment,
                    topic: plan.topic,
                    notices: plan.notices,
                    warnings: warnings,
                    handshake: check.handshake,
                    authCheck: check.authCheck,
                    error: check.handshake.error?.reported
                )
            )
        } else {
            if HandshakeRenderer.measuredAnything(check.handshake) {
                print(HandshakeRenderer(style: style).render(check.handshake))
            }
            if let auth = check.authCheck { print(AuthCheckRenderer(style: style).render(auth)) }
            if let error = check.error { reportError(error) }
        }
        throw ExitCode(check.exitCode)
    }

    /// What is about to happen, before the connection starts: notes, the target, and warnings.
    private func printHeader(_ plan: GatewayPlan, notes: [String], warnings: [Finding], style: TerminalStyle) {
        for line in notes { printError(style.paint("note: ", .bold) + line) }
        let kind = plan.credential.kind == .tokenKey ? "token key" : "certificate"
        print(
            "Connecting to \(style.paint(plan.configuration.endpoint.description, .bold)) (\(plan.environment)) as \(plan.credential.name) (\(kind))"
        )
        for warning in warnings {
            print(style.paint("! ", .yellow, .bold) + warning.message)
            if let hint = warning.hint { print("  " + style.paint("→ \(hint)", .dim)) }
        }
        print("")
    }
}

extension HandshakeCheck {
    /// 0 connected (and, with an auth check, accepted); 1 rejected; 2 could not connect or no verdict.
    var exitCode: Int32 {
        switch verdict {
        case .connected, .accepted: return 0
        case .rejected: return 1
        case .inconclusive, .failed: return 2
        }
    }
}

extension AuthCheck {
    /// The check with the command line's hint when the notification could not be sent.
    var forCommandLine: AuthCheck {
        guard let error else { return self }
        var check = self
        check.fix = ErrorHints.hint(for: error)
        return check
    }
}

struct HandshakeOutput: Encodable {
    var schemaVersion = ReportSchema.schemaVersion
    var credential: String
    var environment: PushEnvironment
    var topic: String?
    var notices: [String]
    var warnings: [Finding]
    var handshake: HandshakeReport
    var authCheck: AuthCheck?
    /// Why the handshake failed, on top as in every report (also under `handshake`, where it was first).
    var error: ReportedError?
}

struct AuthCheckRenderer {
    let style: TerminalStyle
    func render(_ check: AuthCheck) -> String {
        let head: String
        switch check.verdict {
        case .accepted: head = style.paint("✓ credential accepted", .green)
        case .rejected: head = style.paint("✗ credential rejected", .red, .bold)
        case .inconclusive: head = style.paint("? no verdict", .yellow, .bold)
        }
        var lines = [
            "",
            "  Auth check  \(head)" + (check.status.map { "  (\($0)\(check.reason.map { " \($0)" } ?? ""))" } ?? ""),
        ]
        lines.append("              \(check.explanation)")
        if let fix = check.fix { lines.append("              " + style.paint("→ \(fix)", .dim)) }
        return lines.joined(separator: "\n")
    }
}
