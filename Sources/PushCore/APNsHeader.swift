/// Header names of the provider API, in one place for the client, the local gateway and the
/// request encoder.
public enum APNsHeader {
    public static let topic = "apns-topic"
    public static let pushType = "apns-push-type"
    public static let priority = "apns-priority"
    public static let expiration = "apns-expiration"
    public static let collapseID = "apns-collapse-id"
    public static let id = "apns-id"
    public static let uniqueID = "apns-unique-id"
    public static let authorization = "authorization"
    public static let contentLength = "content-length"
    public static let retryAfter = "retry-after"
    /// Broadcasts and channel management: the channel (base64), and the request's UUID that the
    /// server echoes back (broadcasts' counterpart of `apns-id`).
    public static let channelID = "apns-channel-id"
    public static let requestID = "apns-request-id"
}

extension APNsHeader {
    /// The value of the first header named `name` (given in lower case), whatever the case of
    /// the name on the wire: compared byte by byte, without a lowercased copy of every name
    /// (an answer's headers are searched three times, on every answer of a bulk run).
    public static func value(_ name: String, in headers: [(String, String)]) -> String? {
        headers.first { isNamed($0.0, name) }?.1
    }

    /// Whether `candidate` is `lowercaseName` in any ASCII case.
    static func isNamed(_ candidate: String, _ lowercaseName: String) -> Bool {
        let given = candidate.utf8
        let wanted = lowercaseName.utf8
        guard given.count == wanted.count else { return false }
        return zip(given, wanted).allSatisfy { byte, lower in
            byte == lower || (byte >= 0x41 && byte <= 0x5A && byte | 0x20 == lower)
        }
    }
}
