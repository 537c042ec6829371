import ArgumentParser
import Foundation
import PushCredentials
import PushGateway

struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a notification and explain APNs' answer.",
        discussion: """
            The device token may be pasted in any form: plain hex, upper case, with spaces, or as old iOS \
            code printed it (<740f4707 bebcf74f ...>). The payload is --alert (with --title, --sound, \
            --badge), --background, or a JSON file (--payload FILE, or - for standard input); its size is \
            checked before sending (4096 bytes, 5120 for voip).

            A rejection is printed with its likely fix; the classic one, 400 BadDeviceToken, usually means \
            a token from a development build sent to production or the reverse.

            Exit status: 0 accepted; 1 rejected; 2 could not send.
            """
    )

    @Argument(help: ArgumentHelp("A stored alias, or a .p12/.pem/.p8 file.", valueName: "CREDENTIAL"))
    var credential: String

    @Option(help: ArgumentHelp("The device token.", valueName: "TOKEN"))
    var token: String

    @Option(help: ArgumentHelp("Alert text (the body).", valueName: "TEXT"))
    var alert: String?

    @Option(help: "Alert title, with --alert.")
    var title: String?

    @Option(help: "Sound name, with --alert (e.g. default).")
    var sound: String?

    @Option(help: "Badge number, with --alert.")
    var badge: Int?

    @Flag(help: "A background (content-available) push: priority 5, push type background.")
    var background = false

    @Option(help: ArgumentHelp("The JSON payload from a file, or - for standard input.", valueName: "FILE|-"))
    var payload: String?

    @Option(name: .customLong("push-type"), help: "apns-push-type (alert, background, voip, complication, fileprovider, mdm, location, liveactivity, pushtotalk, widgets).")
    var pushType: String?

    @Option(help: "apns-priority: 10, 5 or 1.")
    var priority: Int?

    @Option(help: ArgumentHelp("apns-expiration as UNIX seconds (0: deliver now or never).", valueName: "SECONDS"))
    var expiration: Int?

    @Option(name: .customLong("collapse-id"), help: "apns-collapse-id (at most 64 bytes).")
    var collapseID: String?

    @Option(name: .customLong("apns-id"), help: "apns-id (a UUID; APNs makes one when absent).")
    var apnsID: String?

    @Option(help: ArgumentHelp("apns-topic (default: the credential's bundle ID).", valueName: "BUNDLE"))
    var topic: String?

    @Flag(help: "Print a versioned JSON report.")
    var json = false

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var credentials: CredentialOptions

    func validate() throws {
        let sources = [alert != nil, background, payload != nil].filter { $0 }.count
        if sources != 1 { throw ValidationError("Give exactly one of --alert TEXT, --background and --payload FILE.") }
        if alert == nil, title != nil || sound != nil || badge != nil { throw ValidationError("--title, --sound and --badge go with --alert.") }
        if let priority, ![1, 5, 10].contains(priority) { throw ValidationError("--priority is 10, 5 or 1.") }
        if let expiration, !(0...Int(UInt32.max)).contains(expiration) {
            throw ValidationError("--expiration is UNIX seconds between 0 and \(UInt32.max).")
        }
        if let apnsID, UUID(uuidString: apnsID) == nil { throw ValidationError("--apns-id must be a UUID such as 123e4567-e89b-12d3-a456-426614174000.") }
        if let pushType, !PushType.known.map(\.rawValue).contains(pushType) {
            throw ValidationError("--push-type \(pushType) is not one APNs knows: \(PushType.known.map(\.rawValue).joined(separator: ", ")).")
        }
        if payload == "-", credentials.password.passwordStdin { throw ValidationError("--payload - and --password-stdin cannot both read standard input.") }
    }

    func run() async throws {
        let style = TerminalStyle.stdout
        let result: SendOutput = try await withUserErrors {
            let deviceToken = try DeviceToken(token)
            let type: PushType = pushType.map { PushType($0) } ?? (background ? .background : .alert)
            let body = try makePayload()
            try Payload.validate(body, pushType: type)
            let loaded = try credentials.load(credential)
            let (environment, note) = connection.chosenEnvironment(for: loaded)
            let (configuration, notices) = try connection.configuration(for: loaded, environment: environment)
            // The push type's suffix (.voip, .complication...) unless the bundle ID already has it,
            // as a VoIP Services certificate's does.
            let topic = self.topic ?? loaded.defaultTopic.map { base in
                type.topicSuffix.map { base.hasSuffix($0) ? base : base + $0 } ?? base
            }
            let notification = PushNotification(
                deviceToken: deviceToken, topic: topic, pushType: type,
                priority: priority.map(PushPriority.init) ?? (type == .background ? .powerConsiderate : nil),
                expiration: expiration.map { Date(timeIntervalSince1970: TimeInterval($0)) }, collapseID: collapseID,
                apnsID: apnsID.flatMap(UUID.init(uuidString:)), payload: body)
            try notification.validate()
            if !json {
                for line in notices + [note].compactMap({ $0 }) { printError(style.paint("note: ", .bold) + line) }
                for warning in loaded.preflightFindings(environment: environment, topic: topic) {
                    printError(style.paint("warning: ", .yellow, .bold) + warning.message)
                }
            }
            let connection = GatewayConnection(configuration: configuration)
            defer { Task { await connection.close() } }
            _ = try await connection.connect()
            let response = try await connection.send(notification)
            await connection.close()
            return SendOutput(schemaVersion: ReportSchema.schemaVersion, credential: loaded.name, environment: environment,
                              gateway: configuration.endpoint.description, topic: topic, pushType: type.rawValue,
                              token: deviceToken.hex, payloadBytes: body.count, response: response,
                              explanation: response.reason?.explanation, fix: response.reason?.fix)
        }
        if json {
            try printJSON(result)
        } else {
            print(render(result, style: style))
        }
        if !result.response.isAccepted { throw ExitStatus.problem }
    }

    private func makePayload() throws -> [UInt8] {
        if let alert { return try Payload.alert(title: title, body: alert, sound: sound, badge: badge) }
        if background { return try Payload.background() }
        guard let payload else { return [] }
        if payload == "-" {
            guard let data = try? FileHandle.standardInput.readToEnd() else { return [] }
            return [UInt8](data)
        }
        return try CredentialFile.readBytes(path: payload)
    }

    private func render(_ result: SendOutput, style: TerminalStyle) -> String {
        let response = result.response
        var lines: [String] = []
        let latency = HandshakeRenderer.milliseconds(response.latency)
        if response.isAccepted {
            lines.append(style.paint("✓ \(response.status) accepted", .green, .bold) + "  by \(result.gateway) (\(result.environment)) in \(latency)")
        } else {
            let reason = response.reason?.rawValue ?? "no reason given"
            lines.append(style.paint("✗ \(response.status) \(reason)", .red, .bold) + "  from \(result.gateway) (\(result.environment)) in \(latency)")
        }
        var rows: [(String, String)] = [("topic", result.topic ?? "(none)"), ("push type", result.pushType), ("token", result.token),
                                        ("payload", "\(result.payloadBytes) bytes")]
        if let id = response.apnsID { rows.append(("apns-id", id.uuidString.lowercased())) }
        if let unique = response.apnsUniqueID { rows.append(("apns-unique-id", unique)) }
        if let timestamp = response.timestamp { rows.append(("unregistered", CertificateRenderer.timestamp(timestamp))) }
        if let retry = response.retryAfter { rows.append(("retry-after", "\(retry) s")) }
        for (label, value) in rows { lines.append("  \(style.paint(label.padding(toLength: 14, withPad: " ", startingAt: 0), .dim))  \(value)") }
        if let explanation = result.explanation { lines.append("  " + explanation) }
        if let fix = result.fix { lines.append("  " + style.paint("→ \(fix)", .bold)) }
        return lines.joined(separator: "\n")
    }
}

struct SendOutput: Encodable {
    var schemaVersion: Int
    var credential: String
    var environment: PushEnvironment
    var gateway: String
    var topic: String?
    var pushType: String
    var token: String
    var payloadBytes: Int
    var response: PushResponse
    var explanation: String?
    var fix: String?
}
