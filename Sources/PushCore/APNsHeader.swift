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
