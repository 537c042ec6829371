/// Builds the HTTP/2 request of a notification: the one place where a notification's header
/// block is made and where `/3/device/` is spelled. Single sends, the auth check, preflight and
/// bulk runs all go through it.
///
/// A bulk run makes one encoder for its template and asks it for each token's headers, so the
/// parts common to every request are built once.
public struct RequestEncoder: Sendable {
    /// The provider API's path prefix for a notification to one device.
    public static let devicePathPrefix = "/3/device/"

    /// One header as it goes on the wire. `sensitive` headers (the provider token) and headers
    /// that differ in every request (`:path`, `apns-id`) are not worth a place in the HPACK
    /// dynamic table; the transport reads ``Header/indexable``.
    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String
        public var indexable: Bool
        public init(_ name: String, _ value: String, indexable: Bool = true) {
            self.name = name
            self.value = value
            self.indexable = indexable
        }
    }

    public let template: NotificationTemplate
    /// `:authority`: the gateway's host, with the port when it is not 443.
    public let authority: String
    /// Everything after `:authority` that is the same for every device, in APNs' documented order.
    private let common: [Header]
    /// Where in ``common`` a collapse ID of one request goes (APNs' order: after the
    /// expiration, before the content length).
    private let collapseIndex: Int

    public init(template: NotificationTemplate, authority: String) {
        self.template = template
        self.authority = authority
        var common: [Header] = []
        if let topic = template.topic { common.append(Header(APNsHeader.topic, topic)) }
        common.append(Header(APNsHeader.pushType, template.pushType.rawValue))
        if let priority = template.priority { common.append(Header(APNsHeader.priority, String(priority.rawValue))) }
        if let expiration = template.expiration {
            common.append(Header(APNsHeader.expiration, String(Int(expiration.timeIntervalSince1970))))
        }
        if let collapseID = template.collapseID { common.append(Header(APNsHeader.collapseID, collapseID)) }
        collapseIndex = common.count
        common.append(Header(APNsHeader.contentLength, String(template.payload.count)))
        self.common = common
    }

    /// `:authority` for a host and port: the host (IPv6 in brackets), with `:port` unless 443.
    public static func authority(host: String, port: Int) -> String {
        let name = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return port == 443 ? name : "\(name):\(port)"
    }

    /// The path of a notification to the device whose token is `hex` (lower-case hex).
    public static func path(deviceHex hex: String) -> String { devicePathPrefix + hex }

    /// The request headers for one device. `apnsID` is the canonical lower-case UUID text (nil:
    /// APNs makes one); `bearer` the provider token for token authentication.
    public func headers(deviceHex hex: String, apnsID: String?, bearer: String?) -> [Header] {
        var headers: [Header] = []
        headers.reserveCapacity(common.count + 7)
        forEachHeader(deviceHex: hex, apnsID: apnsID, authorization: bearer.map(Self.authorization(bearer:))) {
            headers.append(Header($0, $1, indexable: $2))
        }
        return headers
    }

    /// The same headers, in the same order, handed to `body` one by one (name, value, whether
    /// it is worth indexing) instead of gathered: a bulk run builds its transport's header block
    /// directly. `authorization` is ``authorization(bearer:)``'s value, which a caller sending
    /// many requests with one token makes once. `collapseID` is this request's own
    /// `apns-collapse-id` (a bulk run's, derived from its `apns-id`): used only when the template
    /// has none, in its place in APNs' order, and not indexed (it differs in every request).
    public func forEachHeader(
        deviceHex hex: String,
        apnsID: String?,
        collapseID: String? = nil,
        authorization: String?,
        _ body: (_ name: String, _ value: String, _ indexable: Bool) -> Void
    ) {
        body(":method", "POST", true)
        body(":scheme", "https", true)
        body(":path", Self.path(deviceHex: hex), false)
        body(":authority", authority, true)
        for (index, header) in common.enumerated() {
            if index == collapseIndex, let collapseID, template.collapseID == nil {
                body(APNsHeader.collapseID, collapseID, false)
            }
            body(header.name, header.value, header.indexable)
        }
        if let apnsID { body(APNsHeader.id, apnsID, false) }
        // The same provider token goes with every request for up to an hour: indexed, it costs a
        // byte or two per request instead of some two hundred.
        if let authorization { body(APNsHeader.authorization, authorization, true) }
    }

    /// The `authorization` header's value for a provider token.
    public static func authorization(bearer: String) -> String { "bearer " + bearer }

    /// The headers of one notification.
    public func headers(for notification: PushNotification, bearer: String?) -> [Header] {
        headers(
            deviceHex: notification.deviceToken.hex,
            apnsID: notification.apnsID.map(TextEncoding.lowercaseUUID),
            bearer: bearer
        )
    }

    public var body: [UInt8] { template.payload }
}
