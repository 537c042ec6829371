import Crypto
import Foundation
import NIOConcurrencyHelpers
import PushCredentials
import PushGateway

/// One request as it came off a stream.
struct IncomingRequest {
    /// Every header, pseudo-headers included, in arrival order.
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// False when the gateway answers before the body (``LocalGateway/Configuration/Faults/answerEarlyAndReset``).
    var bodyRead: Bool

    func values(_ name: String) -> [String] { headers.filter { $0.name == name }.map(\.value) }
    func first(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}

/// The gateway's answer to one request.
struct Decision {
    var status: Int
    var reason: APNsReason?
    var apnsID: String
    /// Milliseconds, for 410.
    var timestamp: Int64?
    /// What to log for an accepted notification.
    var record: [String: Any]?
}

/// APNs' rules, applied in the order APNs appears to apply them: method and path, headers
/// that cannot be parsed, authentication and topic, the other headers, the payload, then the
/// device registry. Every rejection uses a reason from Apple's documented list.
final class RequestValidator: Sendable {
    struct RegisteredKey {
        var teamID: String
        var publicKey: P256.Signing.PublicKey
    }

    let environment: PushEnvironment
    let keys: [String: RegisteredKey]
    let registry: [String: LocalGateway.DeviceRegistration]?
    let clock: GatewayClock
    let faults: LocalGateway.Configuration.Faults
    private let random: NIOLockedValueBox<SplitMix64>

    /// Headers a request may carry once only.
    static let singleHeaders: Set<String> = [":method", ":path", ":scheme", ":authority", APNsHeader.topic, APNsHeader.pushType,
                                             APNsHeader.priority, APNsHeader.expiration, APNsHeader.collapseID, APNsHeader.id,
                                             APNsHeader.authorization]

    init(configuration: LocalGateway.Configuration) throws {
        environment = configuration.environment
        clock = configuration.clock
        faults = configuration.faults
        random = NIOLockedValueBox(SplitMix64(seed: configuration.faults.seed))
        var keys: [String: RegisteredKey] = [:]
        for key in configuration.tokenKeys {
            do {
                keys[key.keyID] = RegisteredKey(teamID: key.teamID, publicKey: try P256.Signing.PublicKey(pemRepresentation: key.publicKeyPEM))
            } catch {
                throw CredentialError(.unsupportedKey, path: nil, "The public key registered for key ID \(key.keyID) is not a P-256 public key in PEM.",
                                      hint: "Give the SubjectPublicKeyInfo PEM of the AuthKey (openssl pkey -in AuthKey_X.p8 -pubout).")
            }
        }
        self.keys = keys
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
        let givenID = request.first(APNsHeader.id)
        let apnsID = givenID.flatMap { Self.isCanonicalUUID($0) ? $0.lowercased() : nil } ?? UUID().uuidString.lowercased()
        func reject(_ reason: APNsReason, timestamp: Int64? = nil) -> Decision {
            Decision(status: reason.status ?? 400, reason: reason, apnsID: apnsID, timestamp: timestamp, record: nil)
        }

        // Method and path.
        guard request.first(":method") == "POST" else { return reject(.methodNotAllowed) }
        let path = request.first(":path") ?? ""
        let prefix = "/3/device/"
        if path == prefix || path == "/3/device" { return reject(.missingDeviceToken) }
        guard path.hasPrefix(prefix) else { return reject(.badPath) }
        let tokenText = String(path.dropFirst(prefix.count))
        guard tokenText.allSatisfy(\.isHexDigit), let token = try? DeviceToken(tokenText) else { return reject(.badDeviceToken) }

        // A header given twice.
        var seen: Set<String> = []
        for header in request.headers where Self.singleHeaders.contains(header.name) {
            if !seen.insert(header.name).inserted { return reject(.duplicateHeaders) }
        }

        // Authentication and topic.
        let topicHeader = request.first(APNsHeader.topic)
        let topic: String
        var authRecord: [String: Any]
        if let certificate {
            guard certificate.environments.contains(environment) else { return reject(.badCertificateEnvironment) }
            if let topicHeader {
                guard certificate.covers(topic: topicHeader) else { return reject(.topicDisallowed) }
                topic = topicHeader
            } else {
                // As APNs: a certificate that covers exactly one topic makes it the default.
                guard certificate.coveredTopics.count == 1, let only = certificate.coveredTopics.first else { return reject(.missingTopic) }
                topic = only
            }
            authRecord = ["auth": "certificate", "certificate_subject": certificate.subject]
        } else {
            guard let authorization = request.first(APNsHeader.authorization) else { return reject(.missingProviderToken) }
            switch verifyToken(authorization) {
            case .rejected(let reason): return reject(reason)
            case .valid(let keyID, let teamID): authRecord = ["auth": "token", "key_id": keyID, "team_id": teamID]
            }
            guard let topicHeader, !topicHeader.isEmpty else { return reject(.missingTopic) }
            topic = topicHeader
        }

        // The other headers.
        if givenID != nil, !Self.isCanonicalUUID(givenID!) { return reject(.badMessageId) }
        let pushType = request.first(APNsHeader.pushType).map { PushType($0) } ?? .alert
        guard PushType.known.contains(pushType) else { return reject(.invalidPushType) }
        if let priority = request.first(APNsHeader.priority) {
            guard let value = Int(priority), [1, 5, 10].contains(value) else { return reject(.badPriority) }
            if pushType == .background, value != 5 { return reject(.badPriority) }
        }
        if let expiration = request.first(APNsHeader.expiration), Int64(expiration) == nil { return reject(.badExpirationDate) }
        if let collapseID = request.first(APNsHeader.collapseID), collapseID.utf8.count > 64 { return reject(.badCollapseId) }

        // The payload (not read when answering early).
        var payloadObject: Any?
        if request.bodyRead {
            guard !request.body.isEmpty else { return reject(.payloadEmpty) }
            guard request.body.count <= pushType.maximumPayloadSize else { return reject(.payloadTooLarge) }
            // APNs documents no reason for a payload that is not a JSON object. PayloadEmpty
            // ("the message payload is empty") is the closest documented meaning: there is no
            // usable payload. Keeping to Apple's list means clients never meet an invented reason.
            guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)), object is [String: Any] else {
                return reject(.payloadEmpty)
            }
            payloadObject = object
        }

        // The device registry.
        if let registry {
            guard let registration = registry[token.hex], registration.environment == environment else { return reject(.badDeviceToken) }
            guard registration.topic == topic else { return reject(.deviceTokenNotForTopic) }
            if let unregisteredAt = registration.unregisteredAt { return reject(.unregistered, timestamp: unregisteredAt) }
        }

        // Injected faults, for accepted notifications only.
        if let fault = pickFault() { return reject(fault) }

        var headers: [String: String] = [:]
        for header in request.headers where !header.name.hasPrefix(":") && header.name != APNsHeader.authorization {
            headers[header.name] = header.value
        }
        var record: [String: Any] = [
            "received_at": ISO8601DateFormatter().string(from: Date()),
            "environment": environment.rawValue,
            "device_token": token.hex,
            "topic": topic,
            "apns_id": apnsID,
            "headers": headers,
        ]
        record.merge(authRecord) { current, _ in current }
        if let payloadObject { record["payload"] = payloadObject }
        return Decision(status: 200, reason: nil, apnsID: apnsID, timestamp: nil, record: record)
    }

    enum TokenCheck {
        case valid(keyID: String, teamID: String)
        case rejected(APNsReason)
    }

    /// Checks `bearer <JWT>`: ES256 over a registered key, the key's team, and an age under an hour.
    private func verifyToken(_ authorization: String) -> TokenCheck {
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return .rejected(.invalidProviderToken) }
        let segments = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3,
              let headerData = Data(base64URLEncoded: String(segments[0])),
              let claimsData = Data(base64URLEncoded: String(segments[1])),
              let signatureData = Data(base64URLEncoded: String(segments[2])) else { return .rejected(.invalidProviderToken) }
        struct Header: Decodable { var alg: String; var kid: String }
        struct Claims: Decodable { var iss: String; var iat: Int64 }
        guard let header = try? JSONDecoder().decode(Header.self, from: headerData), header.alg == "ES256",
              let claims = try? JSONDecoder().decode(Claims.self, from: claimsData),
              let key = keys[header.kid],
              let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
              key.publicKey.isValidSignature(signature, for: Data("\(segments[0]).\(segments[1])".utf8)) else {
            return .rejected(.invalidProviderToken)
        }
        guard claims.iss == key.teamID else { return .rejected(.invalidProviderToken) }
        let age = clock.now().timeIntervalSince1970 - Double(claims.iat)
        if age > 3_600 { return .rejected(.expiredProviderToken) }
        return .valid(keyID: header.kid, teamID: claims.iss)
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

/// A small seeded generator so fault runs repeat.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
