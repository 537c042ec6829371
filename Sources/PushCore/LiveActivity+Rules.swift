import Foundation

extension LiveActivity {
    /// A key of a Live Activity's `aps` whose presence ActivityKit's rules govern.
    public enum Key: String, Sendable, CaseIterable {
        case contentState = "content-state"
        case attributesType = "attributes-type"
        case attributes
        case alert
        case dismissalDate = "dismissal-date"
        case inputPushToken = "input-push-token"
        case inputPushChannel = "input-push-channel"
    }

    /// A presence rule of ActivityKit that a Live Activity breaks.
    public enum Rule: Sendable, Equatable {
        /// The event needs these keys and they are absent (in ``Key``'s order).
        case missing([Key], event: Event)
        /// The key belongs to another event (the push-to-start keys to a start, the dismissal
        /// date to an end).
        case misplaced(Key, event: Event)
    }

    /// The keys only a start (push-to-start) carries.
    public static let startOnlyKeys: [Key] = [.attributesType, .attributes, .inputPushToken, .inputPushChannel]

    /// ActivityKit's presence rules, the one table both a built payload and a written one are
    /// checked against: an update and a start need `content-state`; a start also needs the
    /// attributes' type and values and an alert; the push-to-start keys belong to a start only,
    /// the dismissal date to an end only.
    public static func presenceRules(event: Event, present: Set<Key>) -> [Rule] {
        var broken: [Rule] = []
        var needed: [Key] = []
        switch event {
        case .start: needed = [.attributesType, .attributes, .contentState, .alert]
        case .update: needed = [.contentState]
        case .end: needed = []
        }
        let missing = needed.filter { !present.contains($0) }
        if !missing.isEmpty { broken.append(.missing(missing, event: event)) }
        if event != .start {
            broken += startOnlyKeys.filter(present.contains).map { .misplaced($0, event: event) }
        }
        if event != .end, present.contains(.dismissalDate) { broken.append(.misplaced(.dismissalDate, event: event)) }
        return broken
    }

    /// A broken presence rule in ActivityKit's terms.
    public static func failure(_ rule: Rule) -> PushCoreError {
        switch rule {
        case .missing(let keys, let event):
            let names = keys.map { "aps.\($0.rawValue)" }
            let list =
                names.count == 1
                ? names[0] : names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1]
            let what = event == .start ? "A Live Activity start (push-to-start)" : "A Live Activity \(event.rawValue)"
            let hint: String
            switch keys.first {
            case .contentState?:
                hint = "Give the activity's content state as a JSON object matching its ContentState type."
            case .attributesType?:
                hint = "Give the Swift type name of the activity's attributes, such as DeliveryAttributes."
            case .attributes?: hint = "Give the values of the attributes type's stored properties as a JSON object."
            default: hint = "Give an alert text (and a title if wanted): the system shows it as the activity appears."
            }
            return failure("\(what) needs \(list).", hint: hint)
        case .misplaced(let key, let event):
            if key == .dismissalDate {
                return failure(
                    "aps.dismissal-date belongs to an end event, not to a \(event.rawValue).",
                    hint: "Send the dismissal date with the end event."
                )
            }
            return failure(
                "aps.\(key.rawValue) belongs to a start (push-to-start), not to an \(event.rawValue).",
                hint: "Leave it out of updates and ends."
            )
        }
    }
}

extension LiveActivity.Content {
    /// The governed keys this content's payload will carry.
    public var presentKeys: Set<LiveActivity.Key> {
        var keys: Set<LiveActivity.Key> = []
        if contentState != nil { keys.insert(.contentState) }
        if attributesType != nil { keys.insert(.attributesType) }
        if attributes != nil { keys.insert(.attributes) }
        if alertBody != nil || alertTitle != nil { keys.insert(.alert) }
        if dismissalDate != nil { keys.insert(.dismissalDate) }
        if inputPushToken { keys.insert(.inputPushToken) }
        if inputPushChannel != nil { keys.insert(.inputPushChannel) }
        return keys
    }
}
