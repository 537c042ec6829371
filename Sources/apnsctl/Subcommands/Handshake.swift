import ArgumentParser
import Foundation
import PushCredentials
import PushGateway

struct Handshake: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Connect to APNs with a credential and report each phase, the TLS details and the server's chain.",
        discussion: """
            Connects TCP → TLS 1.2+ → ALPN h2 → HTTP/2 SETTINGS to the chosen gateway and reports how \
            long each phase took, the TLS version, the server's certificate chain and the trust verdict, \
            and the server's MAX_CONCURRENT_STREAMS. Before connecting it warns when the credential does \
            not cover the environment or topic, or has expired.

            --auth-check also sends one notification to a made-up device token: APNs answers 400 \
            BadDeviceToken only after it has accepted the credential and topic, and 403 when it has not, \
            so no device is notified either way.

            Exit status: 0 connected (and, with --auth-check, accepted); 1 APNs rejected the credential \
            or topic; 2 could not connect.
            """
    )

    @Argument(help: ArgumentHelp("A stored alias, or a .p12/.pem/.p8 file.", valueName: "CREDENTIAL"))
    var credential: String

    @Flag(name: .customLong("auth-check"), help: "Also prove that APNs accepts the credential and topic.")
    var authCheck = false

    @Option(help: ArgumentHelp("The topic for --auth-check (default: the credential's bundle ID).", valueName: "BUNDLE"))
    var topic: String?

    @Flag(help: "Print a versioned JSON report.")
    var json = false

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var credentials: CredentialOptions

    func run() async throws {
        let style = TerminalStyle.stdout
        let outcome: HandshakeOutcome = try await withUserErrors {
            let loaded = try credentials.load(credential)
            let (environment, note) = connection.chosenEnvironment(for: loaded)
            let (configuration, notices) = try connection.configuration(for: loaded, environment: environment)
            let topic = self.topic ?? loaded.defaultTopic
            let warnings = loaded.preflightFindings(environment: environment, topic: topic)
            if !json {
                for line in notices + [note].compactMap({ $0 }) { printError(style.paint("note: ", .bold) + line) }
                print("Connecting to \(style.paint(configuration.endpoint.description, .bold)) (\(environment)) as \(loaded.name) (\(loaded.kind == .tokenKey ? "token key" : "certificate"))")
                for warning in warnings {
                    print(style.paint("! ", .yellow, .bold) + warning.message)
                    if let hint = warning.hint { print("  " + style.paint("→ \(hint)", .dim)) }
                }
                print("")
            }
            return await HandshakeOutcome.run(configuration: configuration, environment: environment, credential: loaded,
                                              topic: topic, authCheck: authCheck, warnings: warnings, notices: notices)
        }
        if json {
            try printJSON(outcome.output)
        } else {
            print(HandshakeRenderer(style: style).render(outcome.output.handshake))
            if let auth = outcome.output.authCheck { print(AuthCheckRenderer(style: style).render(auth)) }
            if let error = outcome.error { error.print() }
        }
        throw ExitCode(outcome.exitCode)
    }
}

/// The handshake and optional auth check, shared with `preflight`.
struct HandshakeOutcome {
    var output: HandshakeOutput
    var error: GatewayError?

    var exitCode: Int32 {
        if error != nil { return 2 }
        if let auth = output.authCheck { return auth.verdict == .accepted ? 0 : auth.verdict == .rejected ? 1 : 2 }
        return 0
    }

    static func run(configuration: GatewayConfiguration, environment: PushEnvironment, credential: LoadedCredential, topic: String?,
                    authCheck: Bool, warnings: [Finding], notices: [String]) async -> HandshakeOutcome {
        let connection = GatewayConnection(configuration: configuration)
        var output = HandshakeOutput(schemaVersion: ReportSchema.schemaVersion, credential: credential.name, environment: environment,
                                     topic: topic, notices: notices, warnings: warnings, handshake: connection.handshakeReport)
        do {
            output.handshake = try await connection.connect()
        } catch let error as GatewayError {
            output.handshake = connection.handshakeReport
            await connection.close()
            return HandshakeOutcome(output: output, error: error)
        } catch {
            output.handshake = connection.handshakeReport
            await connection.close()
            return HandshakeOutcome(output: output, error: GatewayError(.connectionClosed, "\(error)", hint: nil))
        }
        if authCheck {
            output.authCheck = await AuthCheck.run(on: connection, topic: topic)
        }
        await connection.close()
        return HandshakeOutcome(output: output, error: nil)
    }
}

struct HandshakeOutput: Encodable {
    var schemaVersion: Int
    var credential: String
    var environment: PushEnvironment
    var topic: String?
    var notices: [String]
    var warnings: [Finding]
    var handshake: HandshakeReport
    var authCheck: AuthCheck?
}

/// One notification to a made-up token, read as a verdict on the credential.
struct AuthCheck: Encodable {
    enum Verdict: String, Encodable { case accepted, rejected, inconclusive }

    var verdict: Verdict
    var status: Int?
    var reason: String?
    var explanation: String
    var fix: String?
    var latency: Double?

    static func run(on connection: GatewayConnection, topic: String?) async -> AuthCheck {
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        do {
            let token = try DeviceToken(bytes.map { String(format: "%02x", $0) }.joined())
            let notification = PushNotification(deviceToken: token, topic: topic, pushType: .background, priority: .powerConsiderate,
                                                expiration: Date(timeIntervalSince1970: 0), payload: try Payload.background())
            let response = try await connection.send(notification)
            return interpret(response)
        } catch let error as GatewayError {
            return AuthCheck(verdict: .inconclusive, explanation: "The check notification could not be sent: \(error.message)", fix: error.hint)
        } catch {
            return AuthCheck(verdict: .inconclusive, explanation: "The check notification could not be sent: \(error)")
        }
    }

    static func interpret(_ response: PushResponse) -> AuthCheck {
        let reason = response.reason
        let topicReasons: [APNsReason] = [.topicDisallowed, .badTopic, .missingTopic]
        switch response.status {
        case 200:
            return AuthCheck(verdict: .accepted, status: 200, explanation: "The gateway accepted the credential and topic (and the made-up token: a test gateway without a device registry does).", latency: response.latency)
        case 400 where reason.map { !topicReasons.contains($0) } ?? true:
            return AuthCheck(verdict: .accepted, status: 400, reason: reason?.rawValue,
                             explanation: "APNs answered \(reason?.rawValue ?? "400") for the made-up token, which it does only after accepting the credential and topic.",
                             latency: response.latency)
        case 403, 400:
            return AuthCheck(verdict: .rejected, status: response.status, reason: reason?.rawValue,
                             explanation: reason?.explanation ?? "APNs rejected the request with status \(response.status).", fix: reason?.fix,
                             latency: response.latency)
        default:
            return AuthCheck(verdict: .inconclusive, status: response.status, reason: reason?.rawValue,
                             explanation: "APNs answered \(response.status) \(reason?.rawValue ?? ""): no verdict on the credential; try again later.",
                             fix: reason?.fix, latency: response.latency)
        }
    }
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
        var lines = ["", "  Auth check  \(head)" + (check.status.map { "  (\($0)\(check.reason.map { " \($0)" } ?? ""))" } ?? "")]
        lines.append("              \(check.explanation)")
        if let fix = check.fix { lines.append("              " + style.paint("→ \(fix)", .dim)) }
        return lines.joined(separator: "\n")
    }
}
