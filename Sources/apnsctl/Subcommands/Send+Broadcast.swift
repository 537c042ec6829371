import ArgumentParser
import CredentialFormats
import Foundation
import PushGateway
import PushStore

extension LiveActivity.Event: ExpressibleByArgument {}

extension Send {
    /// Exactly one payload: --alert, --background, --payload or --event (whose alert --alert and
    /// --title give).
    func validatePayloadSources() throws {
        let event = liveActivity.event
        let sources = [alert != nil && event == nil, background, payload != nil, event != nil].filter { $0 }.count
        if sources != 1 {
            throw ValidationError(
                "Give exactly one of --alert TEXT, --background, --payload FILE and --event start|update|end (with --event, --alert and --title make the Live Activity's alert)."
            )
        }
        if event != nil, badge != nil {
            throw ValidationError("--badge does not go with --event: a Live Activity has no badge.")
        }
        if alert == nil, title != nil || (sound != nil && event == nil) || badge != nil {
            throw ValidationError("--title, --sound and --badge go with --alert.")
        }
    }

    func validateLiveActivityAndChannel() throws {
        let stdinReaders =
            liveActivity.standardInputReaders + (payload == "-" ? 1 : 0) + (tokens == "-" ? 1 : 0)
            + (credentials.password.passwordStdin ? 1 : 0)
        if stdinReaders > 1 { throw ValidationError("Only one option can read standard input (-).") }
        if let channel { _ = try usage { try ChannelID(channel) } }
        try validateRequestRules()
    }

    /// `send --channel ID`: one broadcast, over one connection to the gateway.
    func runBroadcast(channel text: String) async throws {
        let style = TerminalStyle.stdout
        let result: ReportWithRejection<BroadcastOutput> = try await withUserErrors {
            let channel = try ChannelID(text)
            let request = try makeRequest()
            let (plan, notes) = try connection.plan(for: try await credentials.load(credential), requested: environment)
            let bundleID = try plan.channelBundleID(given: topic.map(TopicScope.app(of:)))
            let broadcast = try request.broadcast(bundleID: bundleID, channel: channel)
            if !json { for line in notes { printError(TerminalStyle.stderr.paint("note: ", .bold) + line) } }
            let response = try await plan.broadcast(broadcast)
            let output = BroadcastOutput(
                credential: plan.credential.name,
                environment: plan.environment,
                gateway: plan.configuration.endpoint.description,
                bundleId: bundleID,
                channelId: channel.rawValue,
                pushType: PushType.liveactivity.rawValue,
                payloadBytes: broadcast.payload.count,
                accepted: response.isSuccess,
                status: response.status,
                requestId: response.requestID,
                apnsUniqueId: response.apnsUniqueID,
                latency: response.latency
            )
            return ReportWithRejection(report: output, error: ChannelErrorObject(response))
        }
        if json {
            try printJSON(result)
        } else {
            print(render(result, style: style))
        }
        if !result.accepted { throw ExitStatus.problem }
    }

    private func render(_ result: ReportWithRejection<BroadcastOutput>, style: TerminalStyle) -> String {
        let latency = HandshakeRenderer.milliseconds(result.latency)
        var lines: [String] = []
        if result.accepted {
            lines.append(
                style.paint("✓ \(result.status) broadcast accepted", .green, .bold)
                    + "  by \(result.gateway) (\(result.environment)) in \(latency)"
            )
        } else {
            let reason = Untrusted.display(result.error?.code ?? "no reason given")
            lines.append(
                style.paint("✗ \(result.status) \(reason)", .red, .bold)
                    + "  from \(result.gateway) (\(result.environment)) in \(latency)"
            )
        }
        var rows: [(String, String)] = [
            ("app", result.bundleId), ("channel", result.channelId), ("push type", result.pushType),
            ("payload", "\(result.payloadBytes) bytes"),
        ]
        if let id = result.requestId { rows.append(("apns-request-id", id)) }
        if let unique = result.apnsUniqueId { rows.append(("apns-unique-id", Untrusted.display(unique))) }
        lines += rows.map { style.row($0, $1, width: 15) }
        if let error = result.error {
            lines.append("  " + error.message)
            if let hint = error.hint { lines.append("  " + style.paint("→ \(hint)", .bold)) }
        }
        return lines.joined(separator: "\n")
    }
}

struct BroadcastOutput: Encodable {
    var schemaVersion = ReportSchema.schemaVersion
    var credential: String
    var environment: PushEnvironment
    var gateway: String
    var bundleId: String
    var channelId: String
    var pushType: String
    var payloadBytes: Int
    var accepted: Bool
    var status: Int
    var requestId: String?
    var apnsUniqueId: String?
    var latency: Double
}

/// A channel-service report with its rejection written among the report's own fields, as the
/// contract says (see ``ChannelErrorObject``); the report's fields read through it.
@dynamicMemberLookup
struct ReportWithRejection<Report: Encodable>: Encodable {
    var report: Report
    var error: ChannelErrorObject?

    subscript<Value>(dynamicMember field: KeyPath<Report, Value>) -> Value { report[keyPath: field] }

    func encode(to encoder: any Encoder) throws {
        try report.encode(to: encoder)
        try error?.encodeFields(to: encoder)
    }
}

/// A rejection as every report gives errors: the reason as the code, what it means, what to do.
///
/// In JSON a rejection is what every report makes of one: APNs' `reason` with its
/// `explanation` and `fix`. An answer without a reason is an `error` object.
struct ChannelErrorObject {
    var code: String
    var message: String
    var hint: String?
    var reason: String?

    private enum Keys: String, CodingKey { case reason, explanation, fix, error }

    /// Writes this rejection's fields into the report being encoded.
    func encodeFields(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        if let reason {
            try container.encode(reason, forKey: .reason)
            try container.encode(message, forKey: .explanation)
            try container.encodeIfPresent(hint, forKey: .fix)
        } else {
            try container.encode(
                ReportedError(code: ErrorCode.unexpectedAnswer.rawValue, message: message, hint: hint),
                forKey: .error
            )
        }
    }

    init?(_ response: ChannelResponse) {
        guard !response.isSuccess else { return nil }
        if let reason = response.reason {
            code = Untrusted.display(reason.rawValue)
            self.reason = code
            message = reason.explanation
            hint = reason.fix
        } else {
            code = "http_\(response.status)"
            message =
                "The server answered \(response.status) without an APNs reason"
                + (response.rawBody.map { ": \(Untrusted.display(String($0.prefix(200))))" } ?? ".")
            hint = "Check that the address is an APNs gateway or channel-management service."
        }
    }
}

extension ErrorCode {
    /// A channel request that APNs answered with neither success nor a reason.
    static let unexpectedAnswer = ErrorCode("unexpected_answer")
}
