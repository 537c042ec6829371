import Foundation

/// The answer of the channel-management service, or of the gateway to a broadcast.
///
/// As with ``PushResponse``, the HTTP status is always kept, and whatever cannot be decoded is
/// kept raw (at most 512 bytes) rather than failing.
public struct ChannelResponse: Sendable, Codable, Equatable {
    public var status: Int
    /// `apns-request-id` (lower case): ours when we sent one, else the server's.
    public var requestID: String?
    /// `apns-channel-id`: the new channel's ID (create), or the one asked about.
    public var channelID: String?
    /// `apns-unique-id` (sandbox broadcasts).
    public var apnsUniqueID: String?
    public var reason: APNsReason?
    /// The IDs of the app's channels (list).
    public var channels: [String]?
    /// A channel's configuration (read).
    public var messageStoragePolicy: Int?
    public var pushType: String?
    public var retryAfter: Int?
    public var latency: Double
    public var rawBody: String?

    public init(status: Int, latency: Double = 0) {
        self.status = status
        self.latency = latency
    }

    /// 200, 201 and 204 are answers that did what was asked.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// Decodes the status, headers and body as they came off the wire. Never fails.
    public init(status: Int, headers: [(String, String)], body: [UInt8], latency: Double) {
        func header(_ name: String) -> String? { APNsHeader.value(name, in: headers) }
        self.init(status: status, latency: latency)
        requestID = header(APNsHeader.requestID).flatMap(UUID.init(uuidString:)).map(TextEncoding.lowercaseUUID)
        channelID = header(APNsHeader.channelID)
        apnsUniqueID = header(APNsHeader.uniqueID)
        retryAfter = header(APNsHeader.retryAfter).flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !body.isEmpty else { return }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            rawBody = String(decoding: body.prefix(512), as: UTF8.self)
            return
        }
        var understood = false
        if let text = object["reason"] as? String {
            reason = APNsReason(rawValue: text)
            understood = true
        }
        if let list = object["channels"] as? [Any] {
            channels = list.compactMap { $0 as? String }
            understood = true
        }
        if let policy = object["message-storage-policy"] as? Int {
            messageStoragePolicy = policy
            understood = true
        }
        if let type = object["push-type"] as? String {
            pushType = type
            understood = true
        }
        if !understood { rawBody = String(decoding: body.prefix(512), as: UTF8.self) }
    }
}
