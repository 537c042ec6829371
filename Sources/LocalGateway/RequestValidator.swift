import CredentialFormats
import Crypto
import Foundation
import NIOConcurrencyHelpers
import PushCore

/// The gateway's answer to one request.
struct Decision {
    var status: Int
    var reason: APNsReason?
    var apnsID: String
    /// Milliseconds, for 410.
    var timestamp: Int64?
    /// What to log for an accepted notification.
    var record: [String: Any]?
    /// The header that carries ``apnsID``: `apns-request-id` for broadcasts and channels.
    var idHeader = APNsHeader.id
    /// False for channel management: no `apns-unique-id`, nothing delivered.
    var isNotification = true
    /// More headers for a successful answer (`apns-channel-id`).
    var extraHeaders: [(String, String)] = []
    /// A successful answer's JSON body (a channel's configuration, a list of channels).
    var body: [UInt8]?
    /// The request carried a provider token that is valid for what it asked.
    var tokenAccepted = false
    /// An accepted notification, for the device display when it is followed.
    var delivery: DeviceDisplay.Delivery?
}

/// APNs' rules, applied in the order APNs appears to apply them: method and path, headers
/// that cannot be parsed, authentication and topic, the other headers, the payload, then the
/// device registry. Every rejection uses a reason from Apple's documented list.
final class RequestValidator: Sendable {
    struct RegisteredKey {
        var teamID: String
        var publicKey: P256.Signing.PublicKey
        var environment: PushEnvironment?
        var topics: [String]
    }

    let environment: PushEnvironment
    let keys: [String: RegisteredKey]
    let otherEnvironmentKeyIDs: Set<String>
    /// Whether key restrictions apply (``LocalGateway/Configuration/Dynamics/keyScopes``).
    let keyScopes: Bool
    let registry: [String: LocalGateway.DeviceRegistration]?
    let clock: GatewayClock
    let faults: LocalGateway.Configuration.Faults
    /// Whether accepted notifications are written to a log; only then is their record filled in.
    let recordsNotifications: Bool
    /// Whether accepted notifications are handed to the device display; only then is their
    /// delivery filled in.
    let followsDisplay: Bool
    private let random: NIOLockedValueBox<SplitMix64>
    /// Provider tokens whose signature and team have been checked, by their header text. A
    /// client sends one token on every request for up to an hour, and its ES256 check costs
    /// more than the rest of the request; the age is still judged on every request.
    let verifiedTokens = NIOLockedValueBox(RecentlySeen<String, VerifiedToken>())
    static let verifiedTokensLimit = 1_024
    private let parsedPayloads = NIOLockedValueBox(RecentlySeen<[UInt8], ParsedPayload>())
    static let parsedPayloadsLimit = 64
    private let uuids = NIOLockedValueBox(RandomUUIDs())

    struct VerifiedToken {
        var keyID: String
        var teamID: String
        var issuedAt: Int64
    }

    /// Headers a request may carry once only.
    static let singleHeaders: Set<String> = [
        ":method", ":path", ":scheme", ":authority", APNsHeader.topic, APNsHeader.pushType,
        APNsHeader.priority, APNsHeader.expiration, APNsHeader.collapseID, APNsHeader.id,
        APNsHeader.authorization,
    ]

    init(configuration: LocalGateway.Configuration) throws {
        environment = configuration.environment
        clock = configuration.clock
        faults = configuration.faults
        recordsNotifications = configuration.logFile != nil
        followsDisplay = configuration.display != nil
        random = NIOLockedValueBox(SplitMix64(seed: configuration.faults.seed))
        var keys: [String: RegisteredKey] = [:]
        for key in configuration.tokenKeys {
            do {
                keys[key.keyID] = RegisteredKey(
                    teamID: key.teamID,
                    publicKey: try P256.Signing.PublicKey(pemRepresentation: key.publicKeyPEM),
                    environment: key.environment,
                    topics: key.topics
                )
            } catch {
                throw LocalGatewayError(
                    .invalidTokenKey,
                    "The public key registered for key ID \(key.keyID) is not a P-256 public key in PEM.",
                    hint: "Give the SubjectPublicKeyInfo PEM of the AuthKey (openssl pkey -in AuthKey_X.p8 -pubout)."
                )
            }
        }
        self.keys = keys
        otherEnvironmentKeyIDs = configuration.otherEnvironmentKeyIDs
        keyScopes = configuration.dynamics.keyScopes
        if let path = configuration.deviceRegistryFile {
            registry = try LocalGateway.loadRegistry(path: path)
        } else if let given = configuration.deviceRegistry {
            var normalised: [String: LocalGateway.DeviceRegistration] = [:]
            for (token, registration) in given { normalised[try DeviceToken(token).hex] = registration }
            registry = normalised
        } else {
            registry = nil
        }
    }

    func evaluate(_ request: IncomingRequest, certificate: PushCertificate?) -> Decision {
        let fields = NotificationHeaders(request.headers)
        let givenID = fields.id
        let apnsID = givenID.flatMap { Self.isCanonicalUUID($0) ? $0.lowercased() : nil } ?? randomUUIDString()
        // Whether this request carried a provider token the gateway accepts, whatever the
        // answer: the connection's single-stream start then ends.
        var tokenAccepted = false
        func reject(_ reason: APNsReason) -> Decision {
            var decision = Decision(status: reason.status ?? 400, reason: reason, apnsID: apnsID, record: nil)
            decision.tokenAccepted = tokenAccepted
            return decision
        }
        func reject(_ reason: APNsReason, timestamp: Int64) -> Decision {
            var decision = reject(reason)
            decision.timestamp = timestamp
            return decision
        }

        // Method and path.
        guard fields.method == "POST" else { return reject(.methodNotAllowed) }
        let path = fields.path ?? ""
        let prefix = "/3/device/"
        if path == prefix || path == "/3/device" { return reject(.missingDeviceToken) }
        guard path.hasPrefix(prefix) else { return reject(.badPath) }
        // Plain hex, as clients send it, is only checked here: its bytes are decoded when the
        // registry or the log needs them. Anything else takes the general parser, which decides
        // as before.
        let parsedToken: DeviceToken?
        if Self.isPlainHexToken(path: path, after: prefix.utf8.count) {
            parsedToken = nil
        } else {
            guard let token = Self.parseToken(Substring(path.utf8.dropFirst(prefix.utf8.count))) else {
                return reject(.badDeviceToken)
            }
            parsedToken = token
        }
        var token: DeviceToken { parsedToken ?? Self.plainHexToken(path: path, after: prefix.utf8.count)! }

        // A header given twice.
        if fields.duplicated { return reject(.duplicateHeaders) }

        // Authentication and topic.
        let topicHeader = fields.topic
        let topic: String
        let authentication: Authentication
        if let certificate {
            guard certificate.environments.contains(environment) else { return reject(.badCertificateEnvironment) }
            if let topicHeader {
                guard certificate.covers(topic: topicHeader) else { return reject(.topicDisallowed) }
                topic = topicHeader
            } else {
                // As APNs: a certificate that covers exactly one topic makes it the default.
                guard certificate.coveredTopics.count == 1, let only = certificate.coveredTopics.first else {
                    return reject(.missingTopic)
                }
                topic = only
            }
            authentication = .certificate(subject: certificate.subject)
        } else {
            guard let authorization = fields.authorization else {
                return reject(.missingProviderToken)
            }
            switch verifyToken(authorization) {
            case .rejected(let reason): return reject(reason)
            case .valid(let keyID, let teamID, let issuedAt):
                authentication = .token(keyID: keyID, teamID: teamID, issuedAt: issuedAt)
            }
            guard let topicHeader, !topicHeader.isEmpty else { return reject(.missingTopic) }
            topic = topicHeader
            if case .token(let keyID, _, _) = authentication, let violation = scopeViolation(keyID: keyID, topic: topic)
            {
                return reject(violation)
            }
            tokenAccepted = true
        }

        // The other headers.
        if givenID != nil, !Self.isCanonicalUUID(givenID!) { return reject(.badMessageId) }
        let pushType = fields.pushType.map { PushType($0) } ?? .alert
        guard PushType.known.contains(pushType) else { return reject(.invalidPushType) }
        // As APNs: a push type with a topic of its own (`.voip`, `.push-type.liveactivity`...) is
        // not delivered to the bare bundle ID.
        if let suffix = pushType.topicSuffix, !topic.hasSuffix(suffix) { return reject(.topicDisallowed) }
        if let priority = fields.priority {
            guard let value = Int(priority), [1, 5, 10].contains(value) else { return reject(.badPriority) }
            if pushType == .background, value != 5 { return reject(.badPriority) }
        }
        if let expiration = fields.expiration, Int64(expiration) == nil {
            return reject(.badExpirationDate)
        }
        if let collapseID = fields.collapseID, collapseID.utf8.count > 64 {
            return reject(.badCollapseId)
        }

        // The payload (not read when answering early).
        var payloadObject: Any?
        if request.bodyRead {
            guard !request.body.isEmpty else { return reject(.payloadEmpty) }
            guard request.body.count <= pushType.maximumPayloadSize else { return reject(.payloadTooLarge) }
            // APNs documents no reason for a payload that is not a JSON object. PayloadEmpty
            // ("the message payload is empty") is the closest documented meaning: there is no
            // usable payload. Keeping to Apple's list means clients never meet an invented reason.
            guard let object = parsePayload(request.body) else { return reject(.payloadEmpty) }
            payloadObject = object
        }

        // The device registry.
        if let registry {
            guard let registration = registry[token.hex], registration.environment == environment else {
                return reject(.badDeviceToken)
            }
            guard registration.topic == topic else { return reject(.deviceTokenNotForTopic) }
            if let unregisteredAt = registration.unregisteredAt {
                return reject(.unregistered, timestamp: unregisteredAt)
            }
        }

        // Injected faults, for accepted notifications only.
        if let fault = pickFault() { return reject(fault) }

        let delivery =
            followsDisplay
            ? DeviceDisplay.Delivery(
                device: token.hex,
                apnsID: apnsID,
                collapseID: fields.collapseID,
                pushType: pushType
            )
            : nil
        // Without a log nothing reads the record: an empty one still says "accepted".
        guard recordsNotifications else {
            return Decision(
                status: 200,
                reason: nil,
                apnsID: apnsID,
                timestamp: nil,
                record: [:],
                tokenAccepted: tokenAccepted,
                delivery: delivery
            )
        }
        var headers: [String: String] = [:]
        for header in request.headers where !header.name.hasPrefix(":") && header.name != APNsHeader.authorization {
            headers[header.name] = header.value
        }
        var record: [String: Any] = [
            "received_at": RecordEncoder.timestamp(Date()),
            "environment": environment.rawValue,
            "device_token": token.hex,
            "topic": topic,
            "apns_id": apnsID,
            "headers": headers,
        ]
        let authRecord: [String: Any] =
            switch authentication {
            case .certificate(let subject): ["auth": "certificate", "certificate_subject": subject]
            case .token(let keyID, let teamID, let issuedAt):
                ["auth": "token", "key_id": keyID, "team_id": teamID, "token_iat": issuedAt]
            }
        record.merge(authRecord) { current, _ in current }
        if let payloadObject { record["payload"] = payloadObject }
        return Decision(
            status: 200,
            reason: nil,
            apnsID: apnsID,
            timestamp: nil,
            record: record,
            tokenAccepted: tokenAccepted,
            delivery: delivery
        )
    }

    enum Authentication {
        case certificate(subject: String)
        /// `issuedAt`: the token's `iat`, logged so that tokens can be told apart without the token.
        case token(keyID: String, teamID: String, issuedAt: Int64)
    }

    /// A payload parsed as a JSON object, or nil when it is not one. Clients send the same
    /// payload to many devices, so the answer for recent payloads is kept by their bytes;
    /// the same bytes always parse the same way.
    private func parsePayload(_ body: [UInt8]) -> [String: Any]? {
        if let known = parsedPayloads.withLockedValue({ $0.value(for: body) }) { return known.object }
        let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        parsedPayloads.withLockedValue {
            $0.insert(ParsedPayload(object: object), for: body, limit: Self.parsedPayloadsLimit)
        }
        return object
    }

    /// A parsed payload: read-only once made, so it may be shared between event loops.
    struct ParsedPayload: @unchecked Sendable {
        var object: [String: Any]?
    }

    /// Whether ``plainHexToken(path:after:)`` gives a token, without making it.
    private static func isPlainHexToken(path: String, after offset: Int) -> Bool {
        var path = path
        return path.withUTF8 { utf8 in
            let count = utf8.count - offset
            guard count > 0, count % 2 == 0, count <= DeviceToken.maximumByteCount * 2 else { return false }
            for character in utf8[offset...] {
                switch character {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
                    UInt8(ascii: "A")...UInt8(ascii: "F"):
                    continue
                default: return false
                }
            }
            return true
        }
    }

    /// The token in `path` from byte `offset` on, when it is plain hex of an even length a
    /// token can have (the form every client sends); nil for anything else.
    private static func plainHexToken(path: String, after offset: Int) -> DeviceToken? {
        var path = path
        return path.withUTF8 { utf8 in
            offset < utf8.count ? DeviceToken(plainHex: UnsafeBufferPointer(rebasing: utf8[offset...])) : nil
        }
    }

    /// A random (version 4) UUID in lower case, as `UUID().uuidString.lowercased()` gives, from
    /// the same generator the client uses for `apns-id` (Foundation opens the random device for
    /// every UUID).
    func randomUUIDString() -> String { uuids.withLockedValue { $0.next() } }

    /// Any other spelling of a token in a path: hex digits only (full-width ones included, as
    /// `isHexDigit` has them), then ``DeviceToken/init(_:)`` decides.
    private static func parseToken(_ text: Substring) -> DeviceToken? {
        guard text.allSatisfy(\.isHexDigit) else { return nil }
        return try? DeviceToken(String(text))
    }

    private func pickFault() -> APNsReason? {
        let total = faults.tooManyRequestsRate + faults.internalServerErrorRate + faults.serviceUnavailableRate
        guard total > 0 else { return nil }
        let roll = random.withLockedValue { $0.nextUnit() }
        if roll < faults.tooManyRequestsRate { return .tooManyRequests }
        if roll < faults.tooManyRequestsRate + faults.internalServerErrorRate { return .internalServerError }
        if roll < total { return .serviceUnavailable }
        return nil
    }

    /// 8-4-4-4-12 hex digits.
    static func isCanonicalUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}
