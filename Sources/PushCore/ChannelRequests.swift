import Foundation

/// A broadcast channel's identifier, as APNs issues it: base64 text, sent back in the
/// `apns-channel-id` header.
public struct ChannelID: Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    /// Checks `text` is base64 (standard alphabet, padded or not) of at least one byte.
    public init(_ text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var padded = trimmed
        while padded.count % 4 != 0 { padded += "=" }
        guard !trimmed.isEmpty, trimmed.count <= 256, let bytes = Data(base64Encoded: padded), !bytes.isEmpty else {
            throw PushCoreError(
                .invalidChannel,
                "\"\(text)\" is not a channel ID: APNs issues channel IDs as base64 text, such as dHN0LXNyY2gtY2hubA==.",
                hint: "Copy the ID that creating the channel printed, or list the app's channels to find it."
            )
        }
        rawValue = trimmed
    }

    /// An ID from random bytes (what a gateway issues).
    public init(bytes: [UInt8]) { rawValue = Data(bytes).base64EncodedString() }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws { try self.init(decoder.singleValueContainer().decode(String.self)) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// What APNs keeps of a channel's broadcasts for devices that were offline.
public enum MessageStoragePolicy: Int, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// Nothing is stored: a device that is offline misses the broadcast.
    case noMessageStored = 0
    /// The most recent broadcast is stored and delivered when the device is back.
    case mostRecentMessageStored = 1

    public var description: String {
        switch self {
        case .noMessageStored: "no message stored"
        case .mostRecentMessageStored: "most recent message stored"
        }
    }
}

/// A broadcast: one Live Activity notification to every device subscribed to a channel.
public struct BroadcastNotification: Sendable, Equatable {
    public var bundleID: String
    public var channelID: ChannelID
    /// Nil: no `apns-priority` header (APNs uses 10).
    public var priority: PushPriority?
    /// Nil: no `apns-expiration` header. The epoch (0): try once, do not store.
    public var expiration: Date?
    /// `apns-request-id`; nil lets APNs make one.
    public var requestID: UUID?
    public var payload: [UInt8]

    public init(
        bundleID: String,
        channelID: ChannelID,
        priority: PushPriority? = nil,
        expiration: Date? = nil,
        requestID: UUID? = nil,
        payload: [UInt8]
    ) {
        self.bundleID = bundleID
        self.channelID = channelID
        self.priority = priority
        self.expiration = expiration
        self.requestID = requestID
        self.payload = payload
    }

    /// A broadcast carries a Live Activity payload, within the usual size limit.
    public func validate() throws {
        try ChannelRequestEncoder.checkBundleID(bundleID)
        try LiveActivity.check(payload: payload, pushType: .liveactivity, topic: nil, priority: priority)
    }
}

/// Builds the requests of broadcasts and of the channel-management service: the one place their
/// paths (`/1/apps/<bundle>/…`, `/4/broadcasts/apps/<bundle>`) and headers are spelled, next to
/// ``RequestEncoder`` for device notifications.
///
/// | request | method and path | headers |
/// |---|---|---|
/// | create | `POST /1/apps/<bundle>/channels`, body `{"message-storage-policy":…,"push-type":"LiveActivity"}` | |
/// | read | `GET /1/apps/<bundle>/channels` | `apns-channel-id` |
/// | delete | `DELETE /1/apps/<bundle>/channels` | `apns-channel-id` |
/// | list | `GET /1/apps/<bundle>/all-channels` | |
/// | broadcast | `POST /4/broadcasts/apps/<bundle>` | `apns-channel-id`, `apns-push-type`, `apns-priority`, `apns-expiration` |
///
/// Every request may carry `apns-request-id`, which the server echoes.
public struct ChannelRequestEncoder: Sendable {
    public typealias Header = RequestEncoder.Header

    /// The value of `push-type` in a channel's configuration: channels carry Live Activities only.
    public static let channelPushType = "LiveActivity"
    public static let managementPrefix = "/1/apps/"
    public static let broadcastPrefix = "/4/broadcasts/apps/"

    public static func channelsPath(bundleID: String) -> String { managementPrefix + bundleID + "/channels" }
    public static func allChannelsPath(bundleID: String) -> String { managementPrefix + bundleID + "/all-channels" }
    public static func broadcastPath(bundleID: String) -> String { broadcastPrefix + bundleID }

    /// `:authority` (host, with the port unless 443).
    public let authority: String
    public init(authority: String) { self.authority = authority }

    /// A request: its headers and body.
    public struct Request: Sendable {
        public var headers: [Header]
        public var body: [UInt8]
    }

    public func create(
        bundleID: String,
        policy: MessageStoragePolicy,
        requestID: UUID?,
        bearer: String?
    ) throws -> Request {
        try Self.checkBundleID(bundleID)
        let object: [String: Any] = ["message-storage-policy": policy.rawValue, "push-type": Self.channelPushType]
        let body = [UInt8](try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
        var headers = start("POST", Self.channelsPath(bundleID: bundleID))
        headers.append(Header(APNsHeader.contentLength, String(body.count)))
        finish(&headers, requestID: requestID, bearer: bearer)
        return Request(headers: headers, body: body)
    }

    public func read(bundleID: String, channel: ChannelID, requestID: UUID?, bearer: String?) throws -> Request {
        try channelRequest("GET", bundleID: bundleID, channel: channel, requestID: requestID, bearer: bearer)
    }

    public func delete(bundleID: String, channel: ChannelID, requestID: UUID?, bearer: String?) throws -> Request {
        try channelRequest("DELETE", bundleID: bundleID, channel: channel, requestID: requestID, bearer: bearer)
    }

    public func list(bundleID: String, requestID: UUID?, bearer: String?) throws -> Request {
        try Self.checkBundleID(bundleID)
        var headers = start("GET", Self.allChannelsPath(bundleID: bundleID))
        finish(&headers, requestID: requestID, bearer: bearer)
        return Request(headers: headers, body: [])
    }

    public func broadcast(_ broadcast: BroadcastNotification, bearer: String?) throws -> Request {
        try broadcast.validate()
        var headers = start("POST", Self.broadcastPath(bundleID: broadcast.bundleID))
        headers.append(Header(APNsHeader.channelID, broadcast.channelID.rawValue))
        headers.append(Header(APNsHeader.pushType, PushType.liveactivity.rawValue))
        if let priority = broadcast.priority { headers.append(Header(APNsHeader.priority, String(priority.rawValue))) }
        if let expiration = broadcast.expiration {
            headers.append(Header(APNsHeader.expiration, String(PushTime.unixSeconds(expiration))))
        }
        headers.append(Header(APNsHeader.contentLength, String(broadcast.payload.count)))
        finish(&headers, requestID: broadcast.requestID, bearer: bearer)
        return Request(headers: headers, body: broadcast.payload)
    }

    private func channelRequest(
        _ method: String,
        bundleID: String,
        channel: ChannelID,
        requestID: UUID?,
        bearer: String?
    ) throws -> Request {
        try Self.checkBundleID(bundleID)
        var headers = start(method, Self.channelsPath(bundleID: bundleID))
        headers.append(Header(APNsHeader.channelID, channel.rawValue))
        finish(&headers, requestID: requestID, bearer: bearer)
        return Request(headers: headers, body: [])
    }

    private func start(_ method: String, _ path: String) -> [Header] {
        [
            Header(":method", method), Header(":scheme", "https"), Header(":path", path, indexable: false),
            Header(":authority", authority),
        ]
    }

    private func finish(_ headers: inout [Header], requestID: UUID?, bearer: String?) {
        if let requestID {
            headers.append(Header(APNsHeader.requestID, TextEncoding.lowercaseUUID(requestID), indexable: false))
        }
        if let bearer { headers.append(Header(APNsHeader.authorization, "bearer " + bearer)) }
    }

    /// A bundle ID goes into the path: letters, digits, `.` and `-` only (as Apple allows in App
    /// IDs), so nothing can change the path's meaning.
    public static func checkBundleID(_ bundleID: String) throws {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
        guard !bundleID.isEmpty, bundleID.count <= 155, bundleID.allSatisfy(allowed.contains),
            !bundleID.hasPrefix("."), !bundleID.hasSuffix(".")
        else {
            throw PushCoreError(
                .invalidChannel,
                "\"\(bundleID)\" is not a bundle ID (letters, digits, dots and hyphens, such as com.example.app).",
                hint: "Give the app's bundle ID, without a push-type suffix."
            )
        }
    }
}
