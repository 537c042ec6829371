import PushCore

/// What each device would hold in Notification Center after the notifications the gateway
/// delivered to it, so that a test counts what a person would see, not only what was delivered.
///
/// A delivered notification of a push type a person sees (``shows(_:)``) is added to its
/// device's list, unless its `apns-collapse-id` matches one the device still holds: then it
/// replaces that one, as iOS displays notifications with the same collapse identifier as one.
/// Push types that act without showing anything (background, voip, location...) are counted as
/// delivered and never shown.
///
/// Bounded (``Limits``): at most ``Limits/devices`` devices are followed (notifications to others
/// are only counted, in ``untrackedDeliveries``); each device holds its latest
/// ``Limits/heldPerDevice`` notifications and remembers the apns-ids of its latest
/// ``Limits/rememberedPerDevice`` ones. What is let go of is counted; the counters stay.
public struct DeviceDisplay: Sendable {
    public struct Limits: Sendable, Equatable, Codable {
        /// Devices followed, each with its counters and its notifications.
        public var devices = 100_000
        /// Notifications held per device; the oldest makes room for a new one (counted in
        /// ``Counters/evicted``). iOS keeps a device's notifications in a bounded list too.
        public var heldPerDevice = 64
        /// apns-ids remembered per device to tell a notification delivered again from a new one.
        public var rememberedPerDevice = 256
        public init() {}
    }

    /// One notification a person would see.
    public struct Shown: Sendable, Equatable, Codable {
        public var apnsID: String
        public var collapseID: String?
        public var pushType: String
        /// How many later deliveries with its collapse id replaced it (this is the latest).
        public var replacements: Int

        enum CodingKeys: String, CodingKey {
            case apnsID = "apns_id"
            case collapseID = "collapse_id"
            case pushType = "push_type"
            case replacements
        }
    }

    /// What one device was delivered and would have shown.
    public struct Counters: Sendable, Equatable, Codable {
        /// Notifications delivered (accepted), copies included.
        public var delivered = 0
        /// Notifications that appeared: each added to the list once; a replacement through the
        /// collapse id is not a new one.
        public var shown = 0
        /// apns-ids delivered more than once to this device.
        public var deliveredTwice = 0
        /// apns-ids that appeared more than once: a person saw the same notification twice.
        public var shownTwice = 0
        /// Shown notifications let go of at ``Limits/heldPerDevice``.
        public var evicted = 0

        enum CodingKeys: String, CodingKey {
            case delivered, shown, evicted
            case deliveredTwice = "delivered_twice"
            case shownTwice = "shown_twice"
        }
    }

    /// One delivered notification, as the display needs it.
    struct Delivery {
        var device: String
        var apnsID: String
        var collapseID: String?
        var pushType: PushType
    }

    struct Device {
        var counters = Counters()
        var held: [Shown] = []
        /// The latest apns-ids delivered, oldest first, with the times each was delivered and
        /// shown. A list rather than a table: most devices get one or two notifications, and a
        /// table for each of a hundred thousand devices costs more memory than the scan.
        var remembered: [Remembered] = []
    }

    struct Remembered {
        var apnsID: String
        var delivered: Int
        var shown: Int
    }

    public let limits: Limits
    private(set) var devices: [String: Device] = [:]
    /// Notifications to devices beyond ``Limits/devices``: delivered, not followed.
    public private(set) var untrackedDeliveries = 0

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Whether a notification of `pushType` is something a person sees on the device: alerts,
    /// and Live Activity pushes (the activity's content and its alert). Background, voip,
    /// location, pushtotalk, complication, fileprovider, mdm, widgets and controls pushes are
    /// handed to the app or the system without a notification of their own.
    public static func shows(_ pushType: PushType) -> Bool {
        pushType == .alert || pushType == .liveactivity
    }

    mutating func deliver(_ delivery: Delivery) {
        if devices[delivery.device] == nil, devices.count >= limits.devices {
            untrackedDeliveries += 1
            return
        }
        let limits = self.limits
        devices[delivery.device, default: Device()].deliver(delivery, limits: limits)
    }

    /// Each followed device's counters, by lower-case hex token.
    public var counters: [String: Counters] { devices.mapValues(\.counters) }

    /// What each followed device holds now, oldest first.
    public var held: [String: [Shown]] { devices.mapValues(\.held) }

    /// The counters of every followed device added up.
    public var totals: Totals {
        var totals = Totals(limits: limits, untrackedDeliveries: untrackedDeliveries)
        totals.devices = devices.count
        for device in devices.values {
            let counters = device.counters
            totals.delivered += counters.delivered
            totals.shown += counters.shown
            totals.deliveredTwice += counters.deliveredTwice
            totals.shownTwice += counters.shownTwice
            totals.evicted += counters.evicted
            if counters.deliveredTwice > 0 { totals.devicesDeliveredTwice += 1 }
            if counters.shownTwice > 0 { totals.devicesShownTwice += 1 }
        }
        return totals
    }

    /// The whole run's counts.
    public struct Totals: Sendable, Equatable, Codable {
        public var limits: Limits
        public var untrackedDeliveries: Int
        public var devices = 0
        public var delivered = 0
        public var shown = 0
        public var deliveredTwice = 0
        public var shownTwice = 0
        public var evicted = 0
        /// Devices with at least one notification delivered, or shown, more than once.
        public var devicesDeliveredTwice = 0
        public var devicesShownTwice = 0
    }
}

extension DeviceDisplay.Device {
    mutating func deliver(_ delivery: DeviceDisplay.Delivery, limits: DeviceDisplay.Limits) {
        counters.delivered += 1
        let id = delivery.apnsID
        let index: Int
        if let known = remembered.lastIndex(where: { $0.apnsID == id }) {
            index = known
            if remembered[index].delivered == 1 { counters.deliveredTwice += 1 }
            remembered[index].delivered += 1
        } else {
            if remembered.count >= max(1, limits.rememberedPerDevice) { remembered.removeFirst() }
            remembered.append(DeviceDisplay.Remembered(apnsID: id, delivered: 1, shown: 0))
            index = remembered.count - 1
        }
        guard DeviceDisplay.shows(delivery.pushType) else { return }
        let collapseID = delivery.collapseID
        if let collapseID, let place = held.firstIndex(where: { $0.collapseID == collapseID }) {
            // Displayed as one: the new content takes the place of the one held, on top.
            var replaced = held.remove(at: place)
            replaced.replacements += 1
            replaced.apnsID = id
            replaced.pushType = delivery.pushType.rawValue
            held.append(replaced)
            remembered[index].shown = max(remembered[index].shown, 1)
            return
        }
        counters.shown += 1
        if remembered[index].shown == 1 { counters.shownTwice += 1 }
        remembered[index].shown += 1
        held.append(
            DeviceDisplay.Shown(
                apnsID: id,
                collapseID: collapseID,
                pushType: delivery.pushType.rawValue,
                replacements: 0
            )
        )
        if held.count > limits.heldPerDevice {
            held.removeFirst()
            counters.evicted += 1
        }
    }
}
