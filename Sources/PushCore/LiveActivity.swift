import Foundation

/// Live Activity payloads (ActivityKit push notifications): built from their parts, and checked
/// against ActivityKit's rules before anything is sent, whoever wrote them.
///
/// A Live Activity push goes with `apns-push-type: liveactivity` to the topic
/// `<bundle>.push-type.liveactivity`. Its `aps` carries `timestamp` (UNIX seconds), `event`
/// (`start`, `update` or `end`), `content-state` (the activity's dynamic content), and
/// optionally `stale-date`, `dismissal-date` (an end's), `relevance-score` and `alert`. A
/// push-to-start (`start`) also names the attributes type and its `attributes`, and carries an
/// alert.
public enum LiveActivity {
    public enum Event: String, Sendable, CaseIterable {
        case start, update, end
    }

    /// The parts of a Live Activity payload.
    public struct Content: Sendable {
        public var event: Event
        /// When the content was produced: ActivityKit ignores an update older than the one shown.
        public var timestamp: Date
        /// The `content-state` object, as JSON text.
        public var contentState: String?
        /// The Swift type name of the activity's attributes (push-to-start only).
        public var attributesType: String?
        /// The `attributes` object, as JSON text (push-to-start only).
        public var attributes: String?
        public var staleDate: Date?
        public var dismissalDate: Date?
        public var relevanceScore: Double?
        public var alertTitle: String?
        public var alertBody: String?
        public var sound: String?
        /// iOS 18: a push-to-start asks the new activity to send back an update token.
        public var inputPushToken = false
        /// iOS 18: a push-to-start subscribes the new activity to this broadcast channel.
        public var inputPushChannel: String?

        public init(event: Event, timestamp: Date) {
            self.event = event
            self.timestamp = timestamp
        }
    }

    /// Builds the payload (sorted keys, so the same parts give the same bytes) and checks it.
    public static func payload(_ content: Content) throws -> [UInt8] {
        var aps: [String: Any] = [
            "event": content.event.rawValue,
            "timestamp": PushTime.unixSeconds(content.timestamp),
        ]
        if let text = content.contentState { aps["content-state"] = try object(text, named: "content-state") }
        if let type = content.attributesType { aps["attributes-type"] = type }
        if let text = content.attributes { aps["attributes"] = try object(text, named: "attributes") }
        if let date = content.staleDate { aps["stale-date"] = PushTime.unixSeconds(date) }
        if let date = content.dismissalDate { aps["dismissal-date"] = PushTime.unixSeconds(date) }
        if let score = content.relevanceScore {
            guard score.isFinite else {
                throw failure("The relevance score \(score) is not a finite number.", hint: "Give a number such as 50.")
            }
            aps["relevance-score"] = score
        }
        if content.alertBody != nil || content.alertTitle != nil {
            var alert: [String: Any] = [:]
            if let title = content.alertTitle { alert["title"] = title }
            if let body = content.alertBody { alert["body"] = body }
            aps["alert"] = alert
        }
        if let sound = content.sound { aps["sound"] = sound }
        if content.inputPushToken { aps["input-push-token"] = 1 }
        if let channel = content.inputPushChannel { aps["input-push-channel"] = channel }
        let bytes = try Payload.encode(aps: aps, custom: [:])
        try check(payload: bytes)
        return bytes
    }

    /// Checks a Live Activity notification: its headers (push type, topic, priority) and its
    /// payload. `topic` nil: not checked (certificate authentication may leave it out).
    public static func check(payload: [UInt8], pushType: PushType, topic: String?, priority: PushPriority?) throws {
        guard pushType == .liveactivity else {
            throw failure(
                "A Live Activity payload goes with the push type liveactivity, not \(pushType).",
                hint: "Send it with the push type liveactivity (or leave the push type out)."
            )
        }
        if let topic, let suffix = PushType.liveactivity.topicSuffix, !topic.hasSuffix(suffix) {
            throw failure(
                "The topic \(topic) does not end in \(suffix); APNs takes Live Activity pushes only at <bundle ID>\(suffix).",
                hint: "Use \(topic)\(suffix), or leave the topic out to have it derived from the credential."
            )
        }
        if let priority, ![PushPriority.immediate, .powerConsiderate, .low].contains(priority) {
            throw failure("The priority \(priority) is not 10, 5 or 1.", hint: "Use 10 (now) or 5 (power-considerate).")
        }
        try check(payload: payload)
    }

    /// The payload's own rules: size, an `aps` with a UNIX-seconds `timestamp`, a known `event`,
    /// `content-state` where ActivityKit needs it, the push-to-start keys on a start only.
    public static func check(payload: [UInt8]) throws {
        try Payload.checkSize(payload, pushType: .liveactivity)
        guard let root = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any] else {
            throw failure("The Live Activity payload is not a JSON object.", hint: "A payload is {\"aps\":{...}}.")
        }
        guard let aps = root["aps"] as? [String: Any] else {
            throw failure(
                "The Live Activity payload has no \"aps\" object.",
                hint: "Put the Live Activity keys in aps."
            )
        }
        guard let eventText = aps["event"] as? String else {
            throw failure("aps.event is missing.", hint: "Give the event: start, update or end.")
        }
        guard let event = Event(rawValue: eventText) else {
            throw failure("aps.event \"\(eventText)\" is not start, update or end.", hint: "Use start, update or end.")
        }
        guard aps["timestamp"] != nil else {
            throw failure(
                "aps.timestamp is missing; ActivityKit needs it to order updates.",
                hint: "Give the time the content was produced, in UNIX seconds."
            )
        }
        for key in ["timestamp", "stale-date", "dismissal-date"] { try checkSeconds(aps[key], key: key) }
        if let score = aps["relevance-score"], !(isNumber(score)) {
            throw failure("aps.relevance-score is not a number.", hint: "Give a number such as 50.")
        }
        if let state = aps["content-state"], !(state is [String: Any]) {
            throw failure("aps.content-state is not a JSON object.", hint: "Give it as {\"key\": value, ...}.")
        }
        let present = Set(LiveActivity.Key.allCases.filter { aps[$0.rawValue] != nil })
        if let rule = presenceRules(event: event, present: present).first { throw failure(rule) }
        if event == .start {
            guard let type = aps["attributes-type"] as? String, !type.isEmpty else {
                throw failure(
                    "A Live Activity start (push-to-start) needs aps.attributes-type as a type name.",
                    hint: "Give the Swift type name of the activity's attributes, such as DeliveryAttributes."
                )
            }
            guard aps["attributes"] is [String: Any] else {
                throw failure(
                    "A Live Activity start (push-to-start) needs aps.attributes as a JSON object.",
                    hint: "Give the values of \(type)'s stored properties as a JSON object."
                )
            }
        }
    }

    /// A date key must be whole UNIX seconds; a value in milliseconds is the usual slip.
    static func checkSeconds(_ value: Any?, key: String) throws {
        guard let value else { return }
        guard isNumber(value), let number = (value as? NSNumber)?.doubleValue, number >= 0,
            number == number.rounded()
        else {
            throw failure("aps.\(key) is not a whole number of UNIX seconds.", hint: "Give seconds since 1970.")
        }
        if number > Double(UInt32.max) {
            throw failure(
                "aps.\(key) is \(Int64(number)), which looks like milliseconds; ActivityKit reads seconds.",
                hint: "Divide it by 1000."
            )
        }
    }

    static func isNumber(_ value: Any) -> Bool {
        // JSONSerialization gives booleans as NSNumber too (of Objective-C type "c"); they are
        // not numbers here.
        guard let number = value as? NSNumber else { return false }
        return String(cString: number.objCType) != "c"
    }

    /// Parses `text` as a JSON object for the key `name`.
    static func object(_ text: String, named name: String) throws -> [String: Any] {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
            throw failure(
                "The \(name) is not a JSON object.",
                hint: "Give it as {\"key\": value, ...}, in a file or inline."
            )
        }
        return object
    }

    static func failure(_ message: String, hint: String) -> PushCoreError {
        PushCoreError(.invalidLiveActivity, message, hint: hint)
    }
}
