import Foundation

/// APNs' answer to one notification.
///
/// The HTTP status is always kept, even when the body is missing or is not JSON (a proxy's
/// HTML error page, a truncated body): ``reason`` is then nil and ``rawBody`` holds what came.
public struct PushResponse: Sendable, Codable, Equatable {
    public var status: Int
    /// `apns-id`: APNs' identifier of the notification (ours when we sent one).
    public var apnsID: UUID?
    /// `apns-unique-id`: sandbox only, the identifier in Apple's delivery log.
    public var apnsUniqueID: String?
    /// The `reason` of an error body.
    public var reason: APNsReason?
    /// For 410: when APNs learned the token stopped being valid (the body's `timestamp`, milliseconds).
    public var timestamp: Date?
    /// The `Retry-After` header, in seconds, when the server sent one.
    public var retryAfter: Int?
    /// Time from writing the request to the end of the response.
    public var latency: Double
    /// The body when it was not the JSON APNs sends (at most 512 bytes, for diagnosis).
    public var rawBody: String?

    public init(
        status: Int,
        apnsID: UUID? = nil,
        apnsUniqueID: String? = nil,
        reason: APNsReason? = nil,
        timestamp: Date? = nil,
        retryAfter: Int? = nil,
        latency: Double = 0,
        rawBody: String? = nil
    ) {
        self.status = status
        self.apnsID = apnsID
        self.apnsUniqueID = apnsUniqueID
        self.reason = reason
        self.timestamp = timestamp
        self.retryAfter = retryAfter
        self.latency = latency
        self.rawBody = rawBody
    }

    public var isAccepted: Bool { status == 200 }

    enum CodingKeys: String, CodingKey {
        case status
        case apnsID = "apns_id"
        case apnsUniqueID = "apns_unique_id"
        case reason, timestamp, retryAfter, latency
        case rawBody
    }

    enum ExplanationKeys: String, CodingKey {
        case explanation, fix
    }

    /// As every report gives an answer: the `apns-id` as the lower-case UUID it travels as, and a
    /// rejection with its `explanation` and `fix`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encodeIfPresent(apnsID.map(TextEncoding.lowercaseUUID), forKey: .apnsID)
        try container.encodeIfPresent(apnsUniqueID, forKey: .apnsUniqueID)
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encodeIfPresent(timestamp, forKey: .timestamp)
        try container.encodeIfPresent(retryAfter, forKey: .retryAfter)
        try container.encode(latency, forKey: .latency)
        try container.encodeIfPresent(rawBody, forKey: .rawBody)
        guard !isAccepted, let reason else { return }
        var explained = encoder.container(keyedBy: ExplanationKeys.self)
        try explained.encode(reason.explanation, forKey: .explanation)
        try explained.encode(reason.fix, forKey: .fix)
    }

    /// Whether sending the same notification again later may succeed: 429, 500 and 503 only.
    public var isRetryable: Bool { reason.map(\.isRetryable) ?? [429, 500, 503].contains(status) }

    /// Builds a response from the status, the headers and the body as they came off the wire.
    /// Never fails: whatever cannot be decoded is kept raw.
    public init(status: Int, headers: [(String, String)], body: [UInt8], latency: Double) {
        func header(_ name: String) -> String? { APNsHeader.value(name, in: headers) }
        self.init(status: status, latency: latency)
        apnsID = header(APNsHeader.id).flatMap(UUID.init(uuidString:))
        apnsUniqueID = header(APNsHeader.uniqueID)
        retryAfter = header("retry-after").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !body.isEmpty else { return }
        struct ErrorBody: Decodable {
            var reason: String?
            var timestamp: Double?
        }
        if let decoded = try? JSONDecoder().decode(ErrorBody.self, from: Data(body)),
            decoded.reason != nil || decoded.timestamp != nil
        {
            reason = decoded.reason.map(APNsReason.init(rawValue:))
            timestamp = decoded.timestamp.map { Date(timeIntervalSince1970: $0 / 1000) }
        } else {
            rawBody = String(decoding: body.prefix(512), as: UTF8.self)
        }
    }
}
