import Foundation
import PushCredentials

/// The value of `apns-push-type`. A struct with static members rather than an enum so that a
/// push type Apple adds later can still be sent (`PushType("newkind")`).
public struct PushType: Hashable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }

    public static let alert = PushType("alert")
    public static let background = PushType("background")
    public static let voip = PushType("voip")
    public static let complication = PushType("complication")
    public static let fileprovider = PushType("fileprovider")
    public static let mdm = PushType("mdm")
    public static let location = PushType("location")
    public static let liveactivity = PushType("liveactivity")
    public static let pushtotalk = PushType("pushtotalk")
    public static let widgets = PushType("widgets")

    /// Every push type APNs documents.
    public static let known: [PushType] = [.alert, .background, .voip, .complication, .fileprovider, .mdm, .location,
                                           .liveactivity, .pushtotalk, .widgets]

    /// The largest payload APNs takes for this push type: 5120 bytes for VoIP, 4096 otherwise.
    public var maximumPayloadSize: Int { self == .voip ? 5120 : 4096 }

    /// The topic suffix Apple requires for this push type, if any (`.voip`, `.complication`...).
    public var topicSuffix: String? {
        switch self {
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .liveactivity: ".push-type.liveactivity"
        case .pushtotalk: ".voip-ptt"
        default: nil
        }
    }

    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// The value of `apns-priority`: 10 send now, 5 power-considerate (required for background
/// pushes), 1 lowest.
public struct PushPriority: Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: Int
    public init(_ rawValue: Int) { self.rawValue = rawValue }
    public var description: String { String(rawValue) }

    public static let immediate = PushPriority(10)
    public static let powerConsiderate = PushPriority(5)
    public static let low = PushPriority(1)

    /// APNs' default for a push type: 5 for background pushes, 10 otherwise.
    public static func `default`(for pushType: PushType) -> PushPriority {
        pushType == .background ? .powerConsiderate : .immediate
    }

    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(Int.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// One notification to one device: everything that goes into the HTTP/2 request.
public struct PushNotification: Sendable {
    public var deviceToken: DeviceToken
    /// `apns-topic`: the bundle ID, with the push type's suffix where Apple requires one. Optional
    /// with certificate authentication (APNs uses the certificate's topic), required with tokens.
    public var topic: String?
    public var pushType: PushType
    /// Nil: send no `apns-priority` header (APNs then uses 10, or 5 for background).
    public var priority: PushPriority?
    /// `apns-expiration`: when APNs may stop trying. Nil: no header. `Date(timeIntervalSince1970: 0)`:
    /// try once, do not store.
    public var expiration: Date?
    /// `apns-collapse-id`: at most 64 bytes.
    public var collapseID: String?
    /// `apns-id`: nil lets APNs make one.
    public var apnsID: UUID?
    /// The JSON payload.
    public var payload: [UInt8]

    public init(deviceToken: DeviceToken, topic: String?, pushType: PushType = .alert, priority: PushPriority? = nil,
                expiration: Date? = nil, collapseID: String? = nil, apnsID: UUID? = nil, payload: [UInt8]) {
        self.deviceToken = deviceToken
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.payload = payload
    }

    /// Checks what APNs would reject before it is sent, with the actual sizes in the message.
    public func validate() throws {
        let limit = pushType.maximumPayloadSize
        guard payload.count <= limit else {
            throw GatewayError(.invalidNotification,
                               "The payload is \(payload.count) bytes; APNs takes at most \(limit) bytes for \(pushType) pushes.",
                               hint: "Shorten the text or custom data; APNs would answer 413 PayloadTooLarge.")
        }
        guard !payload.isEmpty else {
            throw GatewayError(.invalidNotification, "The payload is empty.",
                               hint: "Even a background push needs {\"aps\":{\"content-available\":1}}; APNs would answer 400 PayloadEmpty.")
        }
        if let collapseID, collapseID.utf8.count > 64 {
            throw GatewayError(.invalidNotification,
                               "The collapse ID is \(collapseID.utf8.count) bytes; APNs takes at most 64.",
                               hint: "Use a shorter identifier; APNs would answer 400 BadCollapseId.")
        }
    }

    /// The request headers, in the order APNs documents them; `authorization` is added by the
    /// connection. `:authority` comes from the endpoint.
    func headers(authority: String) -> [(String, String)] {
        var headers: [(String, String)] = [
            (":method", "POST"),
            (":scheme", "https"),
            (":path", "/3/device/\(deviceToken.hex)"),
            (":authority", authority),
        ]
        if let topic { headers.append((APNsHeader.topic, topic)) }
        headers.append((APNsHeader.pushType, pushType.rawValue))
        if let priority { headers.append((APNsHeader.priority, String(priority.rawValue))) }
        if let expiration { headers.append((APNsHeader.expiration, String(Int(expiration.timeIntervalSince1970)))) }
        if let collapseID { headers.append((APNsHeader.collapseID, collapseID)) }
        if let apnsID { headers.append((APNsHeader.id, apnsID.uuidString.lowercased())) }
        headers.append(("content-length", String(payload.count)))
        return headers
    }
}

/// Header names of the provider API, shared with LocalGateway.
public enum APNsHeader {
    public static let topic = "apns-topic"
    public static let pushType = "apns-push-type"
    public static let priority = "apns-priority"
    public static let expiration = "apns-expiration"
    public static let collapseID = "apns-collapse-id"
    public static let id = "apns-id"
    public static let uniqueID = "apns-unique-id"
    public static let authorization = "authorization"
}

/// Builds payloads with JSONSerialization, never by string concatenation, so that any text a
/// user gives is escaped correctly.
public enum Payload {
    /// `{"aps":{"alert":{"title":..,"body":..},"sound":..,"badge":..}}` plus `custom` keys at the top level.
    public static func alert(title: String? = nil, subtitle: String? = nil, body: String, sound: String? = nil,
                             badge: Int? = nil, custom: [String: any Sendable] = [:]) throws -> [UInt8] {
        var alert: [String: Any] = ["body": body]
        if let title { alert["title"] = title }
        if let subtitle { alert["subtitle"] = subtitle }
        var aps: [String: Any] = ["alert": alert]
        if let sound { aps["sound"] = sound }
        if let badge { aps["badge"] = badge }
        return try encode(aps: aps, custom: custom)
    }

    /// `{"aps":{"content-available":1}}` plus `custom` keys: no alert, sound or badge, as APNs
    /// requires for background pushes.
    public static func background(custom: [String: any Sendable] = [:]) throws -> [UInt8] {
        try encode(aps: ["content-available": 1], custom: custom)
    }

    static func encode(aps: [String: Any], custom: [String: any Sendable]) throws -> [UInt8] {
        guard custom["aps"] == nil else {
            throw GatewayError(.invalidNotification, "Custom payload data cannot use the key \"aps\": it is Apple's.",
                               hint: "Put custom data under another key.")
        }
        var object: [String: Any] = custom
        object["aps"] = aps
        guard JSONSerialization.isValidJSONObject(object) else {
            throw GatewayError(.invalidNotification, "The custom payload data cannot be written as JSON.",
                               hint: "Use strings, numbers, booleans, arrays and dictionaries only.")
        }
        return [UInt8](try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
    }

    /// Checks a payload against the push type's size limit and that it is a JSON object.
    public static func validate(_ payload: [UInt8], pushType: PushType) throws {
        let limit = pushType.maximumPayloadSize
        guard payload.count <= limit else {
            throw GatewayError(.invalidNotification,
                               "The payload is \(payload.count) bytes; APNs takes at most \(limit) bytes for \(pushType) pushes.",
                               hint: "Shorten it by \(payload.count - limit) bytes or more.")
        }
        guard (try? JSONSerialization.jsonObject(with: Data(payload))) is [String: Any] else {
            throw GatewayError(.invalidNotification, "The payload is not a JSON object.",
                               hint: "A payload looks like {\"aps\":{\"alert\":\"Hello\"}}.")
        }
    }
}
