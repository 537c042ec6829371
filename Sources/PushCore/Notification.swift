import Foundation

/// Everything a notification is except the device it goes to: the part a bulk run sends to
/// every token unchanged.
public struct NotificationTemplate: Sendable, Equatable {
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
    /// The JSON payload.
    public var payload: [UInt8]

    public init(
        topic: String?,
        pushType: PushType = .alert,
        priority: PushPriority? = nil,
        expiration: Date? = nil,
        collapseID: String? = nil,
        payload: [UInt8]
    ) {
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.payload = payload
    }

    /// Checks what APNs would reject before anything is sent, with the actual sizes in the message.
    public func validate() throws {
        try Payload.checkSize(payload, pushType: pushType)
        guard !payload.isEmpty else {
            throw PushCoreError(
                .invalidNotification,
                "The payload is empty.",
                hint:
                    "Even a background push needs {\"aps\":{\"content-available\":1}}; APNs would answer 400 PayloadEmpty."
            )
        }
        if let collapseID, collapseID.utf8.count > 64 {
            throw PushCoreError(
                .invalidNotification,
                "The collapse ID is \(collapseID.utf8.count) bytes; APNs takes at most 64.",
                hint: "Use a shorter identifier; APNs would answer 400 BadCollapseId."
            )
        }
    }
}

/// One notification to one device: a template, the device token and, optionally, its `apns-id`.
public struct PushNotification: Sendable {
    public var deviceToken: DeviceToken
    public var template: NotificationTemplate
    /// `apns-id`: nil lets APNs make one.
    public var apnsID: UUID?

    public init(deviceToken: DeviceToken, template: NotificationTemplate, apnsID: UUID? = nil) {
        self.deviceToken = deviceToken
        self.template = template
        self.apnsID = apnsID
    }

    public init(
        deviceToken: DeviceToken,
        topic: String?,
        pushType: PushType = .alert,
        priority: PushPriority? = nil,
        expiration: Date? = nil,
        collapseID: String? = nil,
        apnsID: UUID? = nil,
        payload: [UInt8]
    ) {
        self.init(
            deviceToken: deviceToken,
            template: NotificationTemplate(
                topic: topic,
                pushType: pushType,
                priority: priority,
                expiration: expiration,
                collapseID: collapseID,
                payload: payload
            ),
            apnsID: apnsID
        )
    }

    public var topic: String? {
        get { template.topic }
        set { template.topic = newValue }
    }
    public var pushType: PushType {
        get { template.pushType }
        set { template.pushType = newValue }
    }
    public var priority: PushPriority? {
        get { template.priority }
        set { template.priority = newValue }
    }
    public var expiration: Date? {
        get { template.expiration }
        set { template.expiration = newValue }
    }
    public var collapseID: String? {
        get { template.collapseID }
        set { template.collapseID = newValue }
    }
    public var payload: [UInt8] {
        get { template.payload }
        set { template.payload = newValue }
    }

    public func validate() throws { try template.validate() }
}
