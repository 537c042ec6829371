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
        guard response.isSuccess else {
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
    static func render(_ report: ReportWithRejection<ChannelReport>, style: TerminalStyle) -> String {
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
                lines.append(style.row("storage policy", "\(policy) (\(words))", width: 15))
            }
            if let type = report.channel?.pushType {
                lines.append(style.row("push type", Untrusted.display(type), width: 15))
            }
        }
        lines.append(style.row("app", report.bundleId, width: 15))
        if let request = report.requestId { lines.append(style.row("apns-request-id", request, width: 15)) }
        return lines.joined(separator: "\n")
    }
}
