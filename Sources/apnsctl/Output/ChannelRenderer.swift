import CredentialFormats
import Foundation
import PushGateway
import PushStore

/// The report of one channel request (`apnsctl channels … --json`).
struct ChannelReport: Encodable {
    struct Channel: Encodable {
        var id: String
        var messageStoragePolicy: Int?
        var pushType: String?
    }

    var schemaVersion = ReportSchema.schemaVersion
    var action: String
    var credential: String
    var environment: PushEnvironment
    var gateway: String
    var bundleId: String
    var status: Int
    var requestId: String?
    var latency: Double
    /// create, show, delete: the channel.
    var channel: Channel?
    /// list: every channel's ID.
    var channels: [String]?
    /// For the human output; JSON gives it as the contract says (see ``ChannelErrorObject``).
    var error: ChannelErrorObject?

    enum CodingKeys: String, CodingKey {
        case schemaVersion, action, credential, environment, gateway, bundleId, status, requestId, latency, channel
        case channels
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(schemaVersion, forKey: .schemaVersion)
        try container.encode(action, forKey: .action)
        try container.encode(credential, forKey: .credential)
        try container.encode(environment, forKey: .environment)
        try container.encode(gateway, forKey: .gateway)
        try container.encode(bundleId, forKey: .bundleId)
        try container.encode(status, forKey: .status)
        try container.encodeIfPresent(requestId, forKey: .requestId)
        try container.encode(latency, forKey: .latency)
        try container.encodeIfPresent(channel, forKey: .channel)
        try container.encodeIfPresent(channels, forKey: .channels)
        try error?.encodeFields(to: encoder)
    }

    init(
        action: String,
        credential: String,
        environment: PushEnvironment,
        gateway: String,
        bundleID: String,
        asked: ChannelID?,
        response: ChannelResponse
    ) {
        self.action = action
        self.credential = credential
        self.environment = environment
        self.gateway = gateway
        self.bundleId = bundleID
        status = response.status
        requestId = response.requestID
        latency = response.latency
        error = ChannelErrorObject(response)
        guard error == nil else {
            channel = asked.map { Channel(id: $0.rawValue) }
            return
        }
        switch action {
        case "list":
            channels = response.channels ?? []
        case "create":
            channel = response.channelID.map { Channel(id: $0, messageStoragePolicy: nil, pushType: nil) }
        default:
            channel = Channel(
                id: response.channelID ?? asked?.rawValue ?? "",
                messageStoragePolicy: response.messageStoragePolicy,
                pushType: response.pushType
            )
        }
    }
}

enum ChannelRenderer {
    static func render(_ report: ChannelReport, style: TerminalStyle) -> String {
        let latency = HandshakeRenderer.milliseconds(report.latency)
        let place = "\(report.gateway) (\(report.environment)) in \(latency)"
        var lines: [String] = []
        if let error = report.error {
            lines.append(style.paint("✗ \(report.status) \(error.code)", .red, .bold) + "  from \(place)")
            lines.append("  " + error.message)
            if let hint = error.hint { lines.append("  " + style.paint("→ \(hint)", .bold)) }
            return lines.joined(separator: "\n")
        }
        let id = Untrusted.display(report.channel?.id ?? "")
        switch report.action {
        case "create":
            lines.append(style.paint("✓ \(report.status) created channel \(id)", .green, .bold) + "  at \(place)")
        case "delete":
            lines.append(style.paint("✓ \(report.status) deleted channel \(id)", .green, .bold) + "  at \(place)")
        case "list":
            let count = report.channels?.count ?? 0
            lines.append(
                style.paint("✓ \(report.bundleId) has \(count) channel\(count == 1 ? "" : "s")", .green, .bold)
                    + "  at \(place)"
            )
            for channel in report.channels ?? [] { lines.append("  " + Untrusted.display(channel)) }
        default:
            lines.append(style.paint("✓ channel \(id)", .green, .bold) + "  at \(place)")
            if let policy = report.channel?.messageStoragePolicy {
                let words = MessageStoragePolicy(rawValue: policy)?.description ?? "unknown"
                lines.append(row("storage policy", "\(policy) (\(words))", style))
            }
            if let type = report.channel?.pushType { lines.append(row("push type", Untrusted.display(type), style)) }
        }
        lines.append(row("app", report.bundleId, style))
        if let request = report.requestId { lines.append(row("apns-request-id", request, style)) }
        return lines.joined(separator: "\n")
    }

    private static func row(_ label: String, _ value: String, _ style: TerminalStyle) -> String {
        "  \(style.paint(label.padding(toLength: 15, withPad: " ", startingAt: 0), .dim))  \(value)"
    }
}
