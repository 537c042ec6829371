import Foundation

/// A `reason` string from APNs.
///
/// A struct over an internal enum, as APNSwift does: every documented reason has a static
/// member with an explanation and a fix, and a reason Apple adds later is kept as data
/// (``isKnown`` false, ``rawValue`` as sent) rather than failing to decode.
public struct APNsReason: Hashable, Sendable, Codable, CustomStringConvertible {
    enum Known: String, CaseIterable {
        case badCollapseId = "BadCollapseId"
        case badDeviceToken = "BadDeviceToken"
        case badExpirationDate = "BadExpirationDate"
        case badMessageId = "BadMessageId"
        case badPriority = "BadPriority"
        case badTopic = "BadTopic"
        case deviceTokenNotForTopic = "DeviceTokenNotForTopic"
        case duplicateHeaders = "DuplicateHeaders"
        case idleTimeout = "IdleTimeout"
        case invalidPushType = "InvalidPushType"
        case missingDeviceToken = "MissingDeviceToken"
        case missingTopic = "MissingTopic"
        case payloadEmpty = "PayloadEmpty"
        case topicDisallowed = "TopicDisallowed"
        // Broadcasts and channel management (400).
        case missingChannelId = "MissingChannelId"
        case badChannelId = "BadChannelId"
        case channelNotRegistered = "ChannelNotRegistered"
        case cannotCreateChannelConfig = "CannotCreateChannelConfig"
        case missingPushType = "MissingPushType"
        case featureNotEnabled = "FeatureNotEnabled"
        case badCertificate = "BadCertificate"
        case badCertificateEnvironment = "BadCertificateEnvironment"
        case expiredProviderToken = "ExpiredProviderToken"
        case forbidden = "Forbidden"
        case invalidProviderToken = "InvalidProviderToken"
        case missingProviderToken = "MissingProviderToken"
        case unrelatedKeyIdInToken = "UnrelatedKeyIdInToken"
        case badEnvironmentKeyIdInToken = "BadEnvironmentKeyIdInToken"
        case badEnvironmentKeyInToken = "BadEnvironmentKeyInToken"
        case badPath = "BadPath"
        case methodNotAllowed = "MethodNotAllowed"
        case expiredToken = "ExpiredToken"
        case unregistered = "Unregistered"
        case payloadTooLarge = "PayloadTooLarge"
        case tooManyProviderTokenUpdates = "TooManyProviderTokenUpdates"
        case tooManyRequests = "TooManyRequests"
        case internalServerError = "InternalServerError"
        case serviceUnavailable = "ServiceUnavailable"
        case shutdown = "Shutdown"
    }

    enum Value: Hashable {
        case known(Known)
        case unknown(String)
    }

    let value: Value

    public init(rawValue: String) {
        value = Known(rawValue: rawValue).map(Value.known) ?? .unknown(rawValue)
    }

    private init(_ known: Known) { value = .known(known) }

    /// The string as APNs sent it.
    public var rawValue: String {
        switch value {
        case .known(let known): known.rawValue
        case .unknown(let raw): raw
        }
    }

    /// False for a reason this version does not know (kept as sent).
    public var isKnown: Bool {
        if case .known = value { return true }
        return false
    }

    /// A reason this version does not know.
    public static func unknown(_ raw: String) -> APNsReason { APNsReason(rawValue: raw) }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// Every reason APNs documents.
    public static var allKnown: [APNsReason] { Known.allCases.map(APNsReason.init) }

    public static let badCollapseId = APNsReason(.badCollapseId)
    public static let badDeviceToken = APNsReason(.badDeviceToken)
    public static let badExpirationDate = APNsReason(.badExpirationDate)
    public static let badMessageId = APNsReason(.badMessageId)
    public static let badPriority = APNsReason(.badPriority)
    public static let badTopic = APNsReason(.badTopic)
    public static let deviceTokenNotForTopic = APNsReason(.deviceTokenNotForTopic)
    public static let duplicateHeaders = APNsReason(.duplicateHeaders)
    public static let idleTimeout = APNsReason(.idleTimeout)
    public static let invalidPushType = APNsReason(.invalidPushType)
    public static let missingDeviceToken = APNsReason(.missingDeviceToken)
    public static let missingTopic = APNsReason(.missingTopic)
    public static let payloadEmpty = APNsReason(.payloadEmpty)
    public static let topicDisallowed = APNsReason(.topicDisallowed)
    public static let missingChannelId = APNsReason(.missingChannelId)
    public static let badChannelId = APNsReason(.badChannelId)
    public static let channelNotRegistered = APNsReason(.channelNotRegistered)
    public static let cannotCreateChannelConfig = APNsReason(.cannotCreateChannelConfig)
    public static let missingPushType = APNsReason(.missingPushType)
    public static let featureNotEnabled = APNsReason(.featureNotEnabled)
    public static let badCertificate = APNsReason(.badCertificate)
    public static let badCertificateEnvironment = APNsReason(.badCertificateEnvironment)
    public static let expiredProviderToken = APNsReason(.expiredProviderToken)
    public static let forbidden = APNsReason(.forbidden)
    public static let invalidProviderToken = APNsReason(.invalidProviderToken)
    public static let missingProviderToken = APNsReason(.missingProviderToken)
    public static let unrelatedKeyIdInToken = APNsReason(.unrelatedKeyIdInToken)
    public static let badEnvironmentKeyIdInToken = APNsReason(.badEnvironmentKeyIdInToken)
    public static let badEnvironmentKeyInToken = APNsReason(.badEnvironmentKeyInToken)
    public static let badPath = APNsReason(.badPath)
    public static let methodNotAllowed = APNsReason(.methodNotAllowed)
    public static let expiredToken = APNsReason(.expiredToken)
    public static let unregistered = APNsReason(.unregistered)
    public static let payloadTooLarge = APNsReason(.payloadTooLarge)
    public static let tooManyProviderTokenUpdates = APNsReason(.tooManyProviderTokenUpdates)
    public static let tooManyRequests = APNsReason(.tooManyRequests)
    public static let internalServerError = APNsReason(.internalServerError)
    public static let serviceUnavailable = APNsReason(.serviceUnavailable)
    public static let shutdown = APNsReason(.shutdown)

    /// The HTTP status APNs answers this reason with (nil for unknown reasons).
    public var status: Int? {
        guard case .known(let known) = value else { return nil }
        switch known {
        case .badCollapseId, .badDeviceToken, .badExpirationDate, .badMessageId, .badPriority, .badTopic,
            .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType, .missingDeviceToken,
            .missingTopic, .payloadEmpty, .topicDisallowed, .missingChannelId, .badChannelId, .channelNotRegistered,
            .cannotCreateChannelConfig, .missingPushType, .featureNotEnabled:
            return 400
        case .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden, .invalidProviderToken,
            .missingProviderToken, .unrelatedKeyIdInToken, .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken:
            return 403
        case .badPath: return 404
        case .methodNotAllowed: return 405
        case .expiredToken, .unregistered: return 410
        case .payloadTooLarge: return 413
        case .tooManyProviderTokenUpdates, .tooManyRequests: return 429
        case .internalServerError: return 500
        case .serviceUnavailable, .shutdown: return 503
        }
    }

    /// Whether the same notification may succeed if sent again later (with back-off).
    public var isRetryable: Bool { [429, 500, 503].contains(status ?? 0) && self != .tooManyProviderTokenUpdates }

    /// What the reason means, in a sentence.
    public var explanation: String {
        guard case .known(let known) = value else {
            return "APNs answered with the reason \"\(rawValue)\", which this version of apnsctl does not know."
        }
        switch known {
        case .badCollapseId: return "The apns-collapse-id header is longer than 64 bytes."
        case .badDeviceToken:
            return
                "APNs does not know the device token in this environment. Most often it belongs to the other environment: a development build's token sent to production, or the reverse; otherwise it is not a device token at all."
        case .badExpirationDate: return "The apns-expiration header is not a UNIX time in seconds."
        case .badMessageId: return "The apns-id header is not a canonical UUID."
        case .badPriority: return "The apns-priority header is not 1, 5 or 10, or a background push did not use 5."
        case .badTopic: return "The apns-topic header is not valid."
        case .deviceTokenNotForTopic: return "The device token belongs to another app than the topic (bundle ID) given."
        case .duplicateHeaders: return "A header was sent twice."
        case .idleTimeout: return "The connection was idle too long and APNs closed it."
        case .invalidPushType:
            return
                "The apns-push-type header is not one APNs knows, or does not fit the topic (or, for a broadcast or channel, is not liveactivity)."
        case .missingDeviceToken: return "The request path has no device token."
        case .missingTopic:
            return
                "No apns-topic was sent, and the certificate covers several topics (or token authentication is used), so APNs cannot pick one."
        case .payloadEmpty: return "The payload is empty."
        case .topicDisallowed: return "The certificate or key may not push to this topic."
        case .missingChannelId: return "The request has no apns-channel-id header, which it needs."
        case .badChannelId: return "The apns-channel-id header is not a channel ID (base64 text)."
        case .channelNotRegistered:
            return
                "No channel with this ID exists for the app in this environment (it was deleted, or made in the other one)."
        case .cannotCreateChannelConfig:
            return
                "The channel could not be created: the app already has the most channels allowed (10,000 per environment), or the configuration asked for is not one APNs offers."
        case .missingPushType:
            return "The request has no apns-push-type header, or its configuration names no push type."
        case .featureNotEnabled: return "Broadcast push is not enabled for this app."
        case .badCertificate: return "The client certificate is not valid for APNs."
        case .badCertificateEnvironment:
            return
                "The client certificate is for the other environment: a development (sandbox) certificate against production or the reverse."
        case .expiredProviderToken: return "The provider token (JWT) is older than one hour."
        case .forbidden: return "The request is not allowed with these credentials."
        case .invalidProviderToken:
            return
                "The provider token is not valid: wrong key ID, wrong team ID, or a signature that does not verify with the registered key."
        case .missingProviderToken:
            return "No certificate was presented and no provider token (authorization header) was sent."
        case .unrelatedKeyIdInToken:
            return
                "The token's key may not push to this topic: Apple restricted it to other apps (a topic-specific key), or it belongs to another team."
        case .badEnvironmentKeyIdInToken:
            return "The key ID in the token names a key restricted to the other environment (sandbox or production)."
        case .badEnvironmentKeyInToken:
            return
                "The token was signed with a key restricted to the other environment: Apple's environment-scoped keys serve sandbox or production, not both."
        case .badPath:
            return
                "The request path is not one APNs serves (/3/device/<token>, /4/broadcasts/apps/<bundle>, /1/apps/<bundle>/…)."
        case .methodNotAllowed: return "Only POST is allowed."
        case .expiredToken: return "The device token has expired."
        case .unregistered:
            return
                "The device token is no longer active for the topic: the app was uninstalled or notifications were turned off."
        case .payloadTooLarge: return "The payload is larger than 4096 bytes (5120 for VoIP)."
        case .tooManyProviderTokenUpdates:
            return "The provider token was changed too often (more than once every 20 minutes)."
        case .tooManyRequests: return "Too many notifications were sent to this device in a short time."
        case .internalServerError: return "APNs had an internal error."
        case .serviceUnavailable: return "APNs is temporarily unavailable."
        case .shutdown: return "The APNs server is shutting down this connection."
        }
    }

    /// What to do about it.
    public var fix: String {
        guard case .known(let known) = value else {
            return "Look the reason up in Apple's documentation (Handling notification responses from APNs)."
        }
        switch known {
        case .badCollapseId: return "Use a collapse ID of at most 64 bytes."
        case .badDeviceToken:
            return
                "Send development builds' tokens to the sandbox (api.sandbox.push.apple.com) and TestFlight/App Store builds' tokens to production (api.push.apple.com); check the token was copied whole."
        case .badExpirationDate: return "Give the expiration as whole seconds since 1970 (0 = try once)."
        case .badMessageId:
            return "Give apns-id as a UUID such as 123e4567-e89b-12d3-a456-426614174000, or leave it out."
        case .badPriority: return "Use priority 10 (or 5) for alerts and 5 for background pushes."
        case .badTopic: return "Give the app's bundle ID, with .voip/.complication/... for those push types."
        case .deviceTokenNotForTopic: return "Check the topic is the bundle ID of the app that registered this token."
        case .duplicateHeaders: return "Send each apns-* header once."
        case .idleTimeout: return "Connect again; keep the connection busy or reconnect when idle."
        case .invalidPushType:
            return
                "Use alert, background, voip, complication, fileprovider, mdm, location, liveactivity, pushtotalk, widgets or controls, with the topic suffix that type needs; broadcasts and channels take liveactivity only."
        case .missingDeviceToken: return "Put the device token in the path: /3/device/<token>."
        case .missingTopic:
            return "Give the topic (the app's bundle ID): token authentication has no certificate to take it from."
        case .payloadEmpty: return "Send a JSON payload such as {\"aps\":{\"alert\":\"Hello\"}}."
        case .topicDisallowed:
            return
                "Use a certificate issued for this bundle ID (inspecting the certificate lists its topics), or a token key of the app's team."
        case .missingChannelId, .badChannelId:
            return
                "Give the channel ID exactly as creating the channel returned it (listing the app's channels shows them)."
        case .channelNotRegistered:
            return "List the app's channels in this environment and use one of them, or create a channel first."
        case .cannotCreateChannelConfig:
            return
                "Delete channels that are no longer used, and create channels with message storage policy 0 or 1 and push type LiveActivity."
        case .missingPushType: return "Send apns-push-type: liveactivity (channels carry Live Activities only)."
        case .featureNotEnabled:
            return
                "Enable the Broadcast capability for the App ID (Certificates, Identifiers & Profiles > Identifiers)."
        case .badCertificate: return "Use the push certificate issued by Apple for this app, with its private key."
        case .badCertificateEnvironment:
            return
                "Use the gateway of the certificate's environment (inspecting the certificate shows it), or make a Sandbox & Production certificate."
        case .expiredProviderToken:
            return "Make a new token: tokens must be renewed at least every 60 minutes (and check the clock is right)."
        case .forbidden: return "Check the certificate or key belongs to the app's team and is not revoked."
        case .invalidProviderToken:
            return "Check the key ID and team ID match the .p8 key on the developer portal, and the key is not revoked."
        case .missingProviderToken:
            return "Use a certificate bundle with its key, or a token key (.p8) with its team ID."
        case .unrelatedKeyIdInToken:
            return
                "Use a key that serves this app: a key of the app's team without topic restrictions, or the one Apple issued for this app."
        case .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken:
            return
                "Send to the gateway of the key's environment (api.sandbox.push.apple.com or api.push.apple.com), or use a key that serves this one (a team key serves both)."
        case .badPath: return "Send to /3/device/<token>, or a broadcast to /4/broadcasts/apps/<bundle>."
        case .methodNotAllowed: return "Send with POST."
        case .expiredToken, .unregistered:
            return
                "Stop sending to this token and remove it from your database; the app registers a new one when it runs."
        case .payloadTooLarge: return "Shorten the payload."
        case .tooManyProviderTokenUpdates:
            return "Reuse a token for at least 20 minutes; do not make a new one per notification or per connection."
        case .tooManyRequests: return "Slow down for this device and retry later, honouring Retry-After."
        case .internalServerError, .serviceUnavailable: return "Retry later with back-off."
        case .shutdown: return "Connect again and resend what was not answered."
        }
    }
}
