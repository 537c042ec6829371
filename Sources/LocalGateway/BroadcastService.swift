import CredentialFormats
import Foundation
import NIOConcurrencyHelpers

/// Broadcast channels and broadcasts, served on the gateway's one listener beside device
/// notifications (Apple serves channel management on a host and port of its own; a local
/// gateway answers both, so one `--gateway` reaches everything).
///
/// Channel management: `POST /1/apps/<bundle>/channels` creates (201, `apns-channel-id`),
/// `GET` with `apns-channel-id` reads, `DELETE` deletes (204), `GET /1/apps/<bundle>/all-channels`
/// lists. Broadcasts: `POST /4/broadcasts/apps/<bundle>` with `apns-channel-id` and
/// `apns-push-type: liveactivity`. Every answer echoes `apns-request-id` (or makes one).
/// Channels live in memory, per app, in the gateway's one environment, at most
/// ``channelLimit`` per app as APNs allows.
final class BroadcastService: Sendable {
    static let channelLimit = 10_000

    struct Channel {
        var id: String
        var policy: MessageStoragePolicy
    }

    let validator: RequestValidator
    /// Channels by bundle ID, in creation order.
    private let channels = NIOLockedValueBox<[String: [Channel]]>([:])

    init(validator: RequestValidator) { self.validator = validator }

    /// Whether `path` is one of the broadcast or channel-management paths.
    static func handles(path: String) -> Bool {
        path.hasPrefix(ChannelRequestEncoder.managementPrefix) || path.hasPrefix(ChannelRequestEncoder.broadcastPrefix)
    }

    enum Route {
        case channels(bundleID: String)
        case allChannels(bundleID: String)
        case broadcast(bundleID: String)
    }

    static func route(_ path: String) -> Route? {
        func bundle(_ text: Substring) -> String? {
            let bundleID = String(text)
            return (try? ChannelRequestEncoder.checkBundleID(bundleID)) == nil ? nil : bundleID
        }
        if path.hasPrefix(ChannelRequestEncoder.broadcastPrefix) {
            return bundle(path.dropFirst(ChannelRequestEncoder.broadcastPrefix.count)).map { .broadcast(bundleID: $0) }
        }
        let rest = path.dropFirst(ChannelRequestEncoder.managementPrefix.count)
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let bundleID = bundle(parts[0]) else { return nil }
        switch parts[1] {
        case "channels": return .channels(bundleID: bundleID)
        case "all-channels": return .allChannels(bundleID: bundleID)
        default: return nil
        }
    }

    func evaluate(_ request: IncomingRequest, certificate: PushCertificate?) -> Decision {
        let givenID = request.first(APNsHeader.requestID)
        let requestID =
            givenID.flatMap { RequestValidator.isCanonicalUUID($0) ? $0.lowercased() : nil }
            ?? validator.randomUUIDString()
        func answer(_ status: Int, headers: [(String, String)] = [], body: [String: Any]? = nil) -> Decision {
            var decision = Decision(status: status, reason: nil, apnsID: requestID, timestamp: nil, record: nil)
            decision.idHeader = APNsHeader.requestID
            decision.isNotification = false
            decision.extraHeaders = headers
            decision.body = body.flatMap {
                try? [UInt8](JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]))
            }
            return decision
        }
        func reject(_ reason: APNsReason) -> Decision {
            var decision = answer(reason.status ?? 400)
            decision.reason = reason
            return decision
        }

        let method = request.first(":method") ?? ""
        guard let route = Self.route(request.first(":path") ?? "") else { return reject(.badPath) }
        let bundleID: String
        switch route {
        case .channels(let bundle):
            guard ["POST", "GET", "DELETE"].contains(method) else { return reject(.methodNotAllowed) }
            bundleID = bundle
        case .allChannels(let bundle):
            guard method == "GET" else { return reject(.methodNotAllowed) }
            bundleID = bundle
        case .broadcast(let bundle):
            guard method == "POST" else { return reject(.methodNotAllowed) }
            bundleID = bundle
        }

        // Authentication: the certificate's environment and app, or a valid provider token.
        let authentication: RequestValidator.Authentication
        if let certificate {
            guard certificate.environments.contains(validator.environment) else {
                return reject(.badCertificateEnvironment)
            }
            guard certificate.covers(topic: bundleID) else { return reject(.topicDisallowed) }
            authentication = .certificate(subject: certificate.subject)
        } else {
            guard let authorization = request.first(APNsHeader.authorization) else {
                return reject(.missingProviderToken)
            }
            switch validator.verifyToken(authorization) {
            case .rejected(let reason): return reject(reason)
            case .valid(let keyID, let teamID, let issuedAt):
                // A restricted key serves broadcasts and channels of its own app and environment only.
                if let violation = validator.scopeViolation(keyID: keyID, topic: bundleID) { return reject(violation) }
                authentication = .token(keyID: keyID, teamID: teamID, issuedAt: issuedAt)
            }
        }
        if let givenID, !RequestValidator.isCanonicalUUID(givenID) { return reject(.badMessageId) }

        switch route {
        case .allChannels:
            let ids = channels.withLockedValue { $0[bundleID, default: []].map(\.id) }
            return answer(200, body: ["channels": ids])
        case .channels where method == "POST":
            return create(request, bundleID: bundleID, answer: answer, reject: reject)
        case .channels:
            let found: Channel
            switch lookUp(request, bundleID: bundleID) {
            case .failure(let reason): return reject(reason)
            case .success(let channel): found = channel
            }
            if method == "DELETE" {
                channels.withLockedValue { $0[bundleID]?.removeAll { $0.id == found.id } }
                return answer(204, headers: [(APNsHeader.channelID, found.id)])
            }
            return answer(
                200,
                headers: [(APNsHeader.channelID, found.id)],
                body: [
                    "message-storage-policy": found.policy.rawValue, "push-type": ChannelRequestEncoder.channelPushType,
                ]
            )
        case .broadcast:
            let found: Channel
            switch lookUp(request, bundleID: bundleID) {
            case .failure(let reason): return reject(reason)
            case .success(let channel): found = channel
            }
            if let reason = checkBroadcast(request) { return reject(reason) }
            var decision = answer(200)
            decision.isNotification = true
            decision.record =
                validator.recordsNotifications
                ? record(request, bundleID: bundleID, channel: found, requestID: requestID, auth: authentication) : [:]
            return decision
        }
    }

    private func create(
        _ request: IncomingRequest,
        bundleID: String,
        answer: (Int, [(String, String)], [String: Any]?) -> Decision,
        reject: (APNsReason) -> Decision
    ) -> Decision {
        guard !request.body.isEmpty else { return reject(.payloadEmpty) }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any] else {
            return reject(.cannotCreateChannelConfig)
        }
        guard let pushType = object["push-type"] else { return reject(.missingPushType) }
        guard (pushType as? String)?.lowercased() == ChannelRequestEncoder.channelPushType.lowercased() else {
            return reject(.invalidPushType)
        }
        guard let number = object["message-storage-policy"] as? Int, let policy = MessageStoragePolicy(rawValue: number)
        else { return reject(.cannotCreateChannelConfig) }
        let id = ChannelID(bytes: Self.randomBytes()).rawValue
        let created = channels.withLockedValue { all -> Bool in
            guard all[bundleID, default: []].count < Self.channelLimit else { return false }
            all[bundleID, default: []].append(Channel(id: id, policy: policy))
            return true
        }
        guard created else { return reject(.cannotCreateChannelConfig) }
        return answer(201, [(APNsHeader.channelID, id)], nil)
    }

    /// The channel named by `apns-channel-id`, among the app's.
    private enum LookUp {
        case success(Channel)
        case failure(APNsReason)
    }

    private func lookUp(_ request: IncomingRequest, bundleID: String) -> LookUp {
        guard let text = request.first(APNsHeader.channelID), !text.isEmpty else { return .failure(.missingChannelId) }
        guard let id = try? ChannelID(text) else { return .failure(.badChannelId) }
        let found = channels.withLockedValue { $0[bundleID, default: []].first { $0.id == id.rawValue } }
        return found.map { .success($0) } ?? .failure(.channelNotRegistered)
    }

    /// A broadcast's headers and payload, as APNs checks a notification's.
    private func checkBroadcast(_ request: IncomingRequest) -> APNsReason? {
        guard let pushType = request.first(APNsHeader.pushType) else { return .missingPushType }
        guard PushType(pushType) == .liveactivity else { return .invalidPushType }
        if let priority = request.first(APNsHeader.priority) {
            guard let value = Int(priority), [1, 5, 10].contains(value) else { return .badPriority }
        }
        if let expiration = request.first(APNsHeader.expiration), Int64(expiration) == nil { return .badExpirationDate }
        guard !request.body.isEmpty else { return .payloadEmpty }
        guard request.body.count <= PushType.liveactivity.maximumPayloadSize else { return .payloadTooLarge }
        guard (try? JSONSerialization.jsonObject(with: Data(request.body))) is [String: Any] else {
            return .payloadEmpty
        }
        return nil
    }

    private func record(
        _ request: IncomingRequest,
        bundleID: String,
        channel: Channel,
        requestID: String,
        auth: RequestValidator.Authentication
    ) -> [String: Any] {
        var headers: [String: String] = [:]
        for header in request.headers where !header.name.hasPrefix(":") && header.name != APNsHeader.authorization {
            headers[header.name] = header.value
        }
        var record: [String: Any] = [
            "received_at": RecordEncoder.timestamp(Date()),
            "environment": validator.environment.rawValue,
            "kind": "broadcast",
            "bundle_id": bundleID,
            "channel_id": channel.id,
            "message_storage_policy": channel.policy.rawValue,
            "apns_request_id": requestID,
            "headers": headers,
        ]
        switch auth {
        case .certificate(let subject):
            record["auth"] = "certificate"
            record["certificate_subject"] = subject
        case .token(let keyID, let teamID, let issuedAt):
            record["auth"] = "token"
            record["key_id"] = keyID
            record["team_id"] = teamID
            record["token_iat"] = issuedAt
        }
        if let payload = try? JSONSerialization.jsonObject(with: Data(request.body)) { record["payload"] = payload }
        return record
    }

    /// Sixteen random bytes for a channel ID.
    static func randomBytes() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}

extension LocalGateway {
    /// Decides one request: broadcasts and channel management here, device notifications by the
    /// validator.
    func evaluate(_ request: IncomingRequest, certificate: PushCertificate?) -> Decision {
        if let path = request.first(":path"), BroadcastService.handles(path: path) {
            return broadcasts.evaluate(request, certificate: certificate)
        }
        return validator.evaluate(request, certificate: certificate)
    }
}
