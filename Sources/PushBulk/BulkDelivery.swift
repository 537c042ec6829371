import PushCore

/// What a second delivery of the same notification does on a device, by push type: the rules
/// that decide whether a bulk run sends a notification again after its answer was lost, and
/// whether each notification carries a collapse ID of its own.
///
/// APNs has no idempotency key. What it has is `apns-collapse-id`: notifications with the same
/// collapse identifier are displayed as one, so a resend that carries the same `apns-id` and the
/// same collapse ID replaces the first on the device instead of adding a second. That protects
/// what a person sees; it cannot undo what an app does when it is woken (a VoIP call rung twice,
/// a location query answered twice, a background fetch run twice).
public enum BulkDelivery {
    /// How a second delivery of a notification of this push type shows on the device.
    public enum SecondDelivery: String, Sendable, Equatable {
        /// Shown in Notification Center, and replaced there by a copy with the same collapse ID.
        case replacesTheFirst = "replaces_the_first"
        /// Content the system refreshes from the payload (a complication, a widget, a control, a
        /// file provider, an MDM check-in, a Live Activity update applied by its timestamp): the
        /// same payload twice changes nothing a person sees.
        case changesNothing = "changes_nothing"
        /// Wakes the app or rings again: the app acts twice.
        case actsTwice = "acts_twice"
    }

    /// What a second copy of `pushType` does. A push type this version does not know is taken to
    /// act twice: nothing is sent again for it unless asked.
    public static func secondDelivery(_ pushType: PushType) -> SecondDelivery {
        switch pushType {
        case .alert: return .replacesTheFirst
        case .complication, .fileprovider, .mdm, .liveactivity, .widgets, .controls: return .changesNothing
        default: return .actsTwice
        }
    }

    /// Whether a run sends again, by default, a notification whose answer was lost (a timeout, a
    /// reset, a connection lost in flight, or a run killed with it in flight): yes unless a second
    /// delivery acts twice.
    public static func resendsUncertainByDefault(_ pushType: PushType) -> Bool {
        secondDelivery(pushType) != .actsTwice
    }

    /// Whether each notification of a run carries a collapse ID derived from its `apns-id`: for
    /// a push type shown in Notification Center, when the notification has no collapse ID of its
    /// own (a user's collapse ID is sent as given, and also makes a resend replace the first).
    ///
    /// Live Activity updates are not given one: Apple documents `apns-collapse-id` for what
    /// Notification Center shows, and an update is applied by its `timestamp`, so a second copy
    /// of the same update shows the same state.
    public static func derivesCollapseID(for template: NotificationTemplate) -> Bool {
        template.collapseID == nil && secondDelivery(template.pushType) == .replacesTheFirst
    }

    /// The collapse ID of the notification sent with `apnsID` (its canonical lower-case text):
    /// the `apns-id` itself, 36 bytes (APNs allows 64). The same on every send of the
    /// notification, a resumed run's included, since it is computed from the `apns-id` the
    /// journal keeps; unique to it, since every notification of a run has its own `apns-id`.
    public static func collapseID(apnsID: String) -> String { apnsID }
}
