import Foundation

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
    public static let controls = PushType("controls")

    /// Every push type APNs documents.
    public static let known: [PushType] = [
        .alert, .background, .voip, .complication, .fileprovider, .mdm, .location,
        .liveactivity, .pushtotalk, .widgets, .controls,
    ]

    /// The largest payload APNs takes for this push type: 5120 bytes for VoIP, 4096 otherwise.
    public var maximumPayloadSize: Int { self == .voip ? 5120 : 4096 }

    /// The topic suffixes Apple appends to a bundle ID for the push types that need a topic of
    /// their own, longest first so that the first match is the right one. `alert`, `background`
    /// and `mdm` have none: the first two go to the bundle ID, and an MDM push goes to the push
    /// magic topic of the MDM enrolment. The one table: certificates' topic kinds and the app a
    /// topic belongs to are read from it too.
    public static let topicSuffixes: [(pushType: PushType, suffix: String)] = [
        (.liveactivity, ".push-type.liveactivity"), (.widgets, ".push-type.widgets"),
        (.controls, ".push-type.controls"), (.fileprovider, ".pushkit.fileprovider"),
        (.location, ".location-query"), (.complication, ".complication"), (.pushtotalk, ".voip-ptt"),
        (.voip, ".voip"),
    ]

    /// The topic suffix Apple requires for this push type, if any (`.voip`, `.complication`...).
    public var topicSuffix: String? { Self.topicSuffixes.first { $0.pushType == self }?.suffix }

    /// `topic` with the suffix this push type requires (`.voip`, `.complication`...), unless it
    /// already ends with it, as a VoIP Services certificate's bundle ID does.
    public func topic(for topic: String) -> String {
        topicSuffix.map { topic.hasSuffix($0) ? topic : topic + $0 } ?? topic
    }

    /// The push type whose suffix ends `topic` (with something before it), and that suffix:
    /// `com.x.voip` is `voip`'s; nil for a bundle ID.
    public static func suffixed(_ topic: String) -> (pushType: PushType, suffix: String)? {
        topicSuffixes.first { topic.hasSuffix($0.suffix) && topic.count > $0.suffix.count }
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
