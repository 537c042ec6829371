import Foundation

/// What a provider asks to send before a credential and a gateway are chosen: the content and
/// the headers it picks. APNs' defaults and rules are applied here, once, for every way of
/// sending (one device, a bulk run's template, a broadcast):
///
/// - the push type is the one given, or what the content implies (a Live Activity or a
///   broadcast: `liveactivity`; a background push: `background`; otherwise `alert`);
/// - a background push goes at priority 5 (APNs answers `BadPriority` to 10), the default when
///   none is given;
/// - a Live Activity goes with the push type `liveactivity` and obeys ActivityKit's presence
///   rules (``LiveActivity/presenceRules(event:present:)``);
/// - a broadcast carries a Live Activity, with no collapse ID and no `apns-id`.
///
/// ``rules(_:)`` reads only a request's ``Shape`` (which parts are present), so a program can
/// check what it was asked for before it reads a payload file; ``template(topic:)`` and the
/// other builders enforce the same rules on the full request.
public struct NotificationRequest: Sendable {
    /// The payload, from its parts or as given.
    public enum Content: Sendable {
        case alert(title: String?, body: String, sound: String?, badge: Int?)
        /// `{"aps":{"content-available":1}}`.
        case background
        /// A JSON payload written by the caller, sent as given after the size and JSON checks.
        case payload([UInt8])
        case liveActivity(LiveActivity.Content)
    }

    public enum ContentKind: String, Sendable, Equatable {
        case alert, background, payload
        case liveActivity = "live activity"
    }

    /// Where the notification goes: one device (or each of many), or a broadcast channel.
    public enum Destination: Sendable, Equatable {
        case device, broadcast
    }

    public var content: Content
    public var destination: Destination
    /// `apns-push-type`; nil: what the content implies.
    public var pushType: PushType?
    /// `apns-priority`; nil: APNs' default, stated as 5 for a background push.
    public var priority: PushPriority?
    public var expiration: Date?
    public var collapseID: String?
    public var apnsID: UUID?

    public init(
        content: Content,
        destination: Destination = .device,
        pushType: PushType? = nil,
        priority: PushPriority? = nil,
        expiration: Date? = nil,
        collapseID: String? = nil,
        apnsID: UUID? = nil
    ) {
        self.content = content
        self.destination = destination
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
    }

    /// What the rules look at: which parts a request has, not their bytes.
    public struct Shape: Sendable, Equatable {
        public var kind: ContentKind
        /// A Live Activity's event and the keys its `aps` will carry.
        public var event: LiveActivity.Event?
        public var present: Set<LiveActivity.Key>
        public var destination: Destination
        public var pushType: PushType?
        public var priority: PushPriority?
        public var hasCollapseID: Bool
        public var hasAPNsID: Bool

        public init(
            kind: ContentKind,
            event: LiveActivity.Event? = nil,
            present: Set<LiveActivity.Key> = [],
            destination: Destination = .device,
            pushType: PushType? = nil,
            priority: PushPriority? = nil,
            hasCollapseID: Bool = false,
            hasAPNsID: Bool = false
        ) {
            self.kind = kind
            self.event = event
            self.present = present
            self.destination = destination
            self.pushType = pushType
            self.priority = priority
            self.hasCollapseID = hasCollapseID
            self.hasAPNsID = hasAPNsID
        }
    }

    /// A rule of APNs or ActivityKit that a request breaks.
    public enum Rule: Sendable, Equatable {
        /// A background push at a priority other than 5.
        case backgroundPriority(PushPriority)
        /// A Live Activity with a push type other than `liveactivity`.
        case liveActivityPushType(PushType)
        /// A broadcast with a push type other than `liveactivity`.
        case broadcastPushType(PushType)
        /// A broadcast whose content is not a Live Activity (or a payload written as one).
        case broadcastContent(ContentKind)
        case broadcastCollapseID
        case broadcastAPNsID
        case liveActivity(LiveActivity.Rule)
    }

    public var shape: Shape {
        var shape = Shape(
            kind: .payload,
            destination: destination,
            pushType: pushType,
            priority: priority,
            hasCollapseID: collapseID != nil,
            hasAPNsID: apnsID != nil
        )
        switch content {
        case .alert: shape.kind = .alert
        case .background: shape.kind = .background
        case .payload: shape.kind = .payload
        case .liveActivity(let activity):
            shape.kind = .liveActivity
            shape.event = activity.event
            shape.present = activity.presentKeys
        }
        return shape
    }

    /// The push type a request's shape sends with.
    public static func pushType(of shape: Shape) -> PushType {
        if let given = shape.pushType { return given }
        if shape.kind == .liveActivity || shape.destination == .broadcast { return .liveactivity }
        return shape.kind == .background ? .background : .alert
    }

    /// The rules a request of this shape breaks, in the order a person would fix them.
    public static func rules(_ shape: Shape) -> [Rule] {
        var broken: [Rule] = []
        let type = pushType(of: shape)
        if type == .background || shape.kind == .background, let priority = shape.priority,
            priority != .powerConsiderate
        {
            broken.append(.backgroundPriority(priority))
        }
        if shape.kind == .liveActivity, type != .liveactivity { broken.append(.liveActivityPushType(type)) }
        if let event = shape.event {
            broken += LiveActivity.presenceRules(event: event, present: shape.present).map(Rule.liveActivity)
        }
        if shape.destination == .broadcast {
            if type != .liveactivity, shape.kind != .liveActivity { broken.append(.broadcastPushType(type)) }
            if shape.kind == .alert || shape.kind == .background { broken.append(.broadcastContent(shape.kind)) }
            if shape.hasCollapseID { broken.append(.broadcastCollapseID) }
            if shape.hasAPNsID { broken.append(.broadcastAPNsID) }
        }
        return broken
    }

    public var resolvedPushType: PushType { Self.pushType(of: shape) }

    /// The `apns-priority` to send: the one given; for a background push 5, stated; otherwise
    /// none (APNs then uses 10).
    public var resolvedPriority: PushPriority? {
        priority ?? (resolvedPushType == .background ? PushPriority.default(for: .background) : nil)
    }

    /// The payload's bytes, built from its parts and checked against the push type's limits.
    public func payload() throws -> [UInt8] {
        try enforceRules()
        let bytes: [UInt8]
        switch content {
        case .alert(let title, let body, let sound, let badge):
            bytes = try Payload.alert(title: title, body: body, sound: sound, badge: badge)
        case .background: bytes = try Payload.background()
        case .payload(let given): bytes = given
        case .liveActivity(let activity): bytes = try LiveActivity.payload(activity)
        }
        // A payload built here is a JSON object by construction; one given is read to check.
        if case .payload = content {
            try Payload.validate(bytes, pushType: resolvedPushType)
        } else {
            try Payload.checkSize(bytes, pushType: resolvedPushType)
        }
        return bytes
    }

    /// Everything but the device, for one notification or every line of a bulk run. `topic` is
    /// the gateway plan's (the credential's app with the push type's suffix, or the one given).
    /// `payload`: the bytes ``payload()`` already gave, so that they are not built twice.
    public func template(topic: String?, payload built: [UInt8]? = nil) throws -> NotificationTemplate {
        let body = try built ?? payload()
        let template = NotificationTemplate(
            topic: topic,
            pushType: resolvedPushType,
            priority: resolvedPriority,
            expiration: expiration,
            collapseID: collapseID,
            payload: body
        )
        try template.validate()
        if template.pushType == .liveactivity {
            try LiveActivity.check(
                payload: body,
                pushType: template.pushType,
                topic: topic,
                priority: template.priority
            )
        }
        return template
    }

    public func notification(
        to deviceToken: DeviceToken,
        topic: String?,
        payload built: [UInt8]? = nil
    ) throws
        -> PushNotification
    {
        PushNotification(
            deviceToken: deviceToken,
            template: try template(topic: topic, payload: built),
            apnsID: apnsID
        )
    }

    /// The broadcast of this request to every device subscribed to `channel`.
    public func broadcast(
        bundleID: String,
        channel: ChannelID,
        requestID: UUID = UUID()
    ) throws
        -> BroadcastNotification
    {
        var asBroadcast = self
        asBroadcast.destination = .broadcast
        let broadcast = BroadcastNotification(
            bundleID: bundleID,
            channelID: channel,
            priority: priority,
            expiration: expiration,
            requestID: requestID,
            payload: try asBroadcast.payload()
        )
        try broadcast.validate()
        return broadcast
    }

    /// Throws the first rule this request breaks, in the library's words.
    public func enforceRules() throws {
        if let rule = Self.rules(shape).first { throw Self.failure(rule) }
    }

    /// A broken rule as an error: the code, what APNs or ActivityKit would do, and the fix in
    /// words (a program names its own options).
    public static func failure(_ rule: Rule) -> PushCoreError {
        switch rule {
        case .backgroundPriority(let priority):
            return PushCoreError(
                .invalidNotification,
                "A background push at priority \(priority) is refused: it must use priority 5 (APNs answers BadPriority otherwise).",
                hint: "Send it at priority 5, or leave the priority out."
            )
        case .liveActivityPushType(let type):
            return LiveActivity.failure(
                "A Live Activity payload goes with the push type liveactivity, not \(type).",
                hint: "Send it with the push type liveactivity (or leave the push type out)."
            )
        case .broadcastPushType(let type):
            return PushCoreError(
                .invalidChannel,
                "A broadcast carries a Live Activity: its push type is liveactivity, not \(type).",
                hint: "Leave the push type out of a broadcast."
            )
        case .broadcastContent(let kind):
            return PushCoreError(
                .invalidChannel,
                "A broadcast carries a Live Activity payload, not \(kind == .background ? "a background push" : "an alert").",
                hint: "Broadcast a Live Activity update or end, or a payload written as one."
            )
        case .broadcastCollapseID:
            return PushCoreError(
                .invalidChannel,
                "A broadcast has no collapse ID; that header is for device notifications.",
                hint: "Leave the collapse ID out."
            )
        case .broadcastAPNsID:
            return PushCoreError(
                .invalidChannel,
                "A broadcast has no apns-id; APNs gives it an apns-request-id.",
                hint: "Leave the apns-id out."
            )
        case .liveActivity(let rule):
            return LiveActivity.failure(rule)
        }
    }
}
