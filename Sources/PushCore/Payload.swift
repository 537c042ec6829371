import Foundation

/// Builds payloads with a JSON writer, never by string concatenation, so that any text a user
/// gives is escaped correctly: ``PlainJSON`` for those built from options alone,
/// JSONSerialization for those with custom data.
public enum Payload {
    /// `{"aps":{"alert":{"title":..,"body":..},"sound":..,"badge":..}}` plus `custom` keys at the top level.
    public static func alert(
        title: String? = nil,
        subtitle: String? = nil,
        body: String,
        sound: String? = nil,
        badge: Int? = nil,
        custom: [String: any Sendable] = [:]
    ) throws -> [UInt8] {
        guard custom.isEmpty else {
            var alert: [String: Any] = ["body": body]
            if let title { alert["title"] = title }
            if let subtitle { alert["subtitle"] = subtitle }
            var aps: [String: Any] = ["alert": alert]
            if let sound { aps["sound"] = sound }
            if let badge { aps["badge"] = badge }
            return try encode(aps: aps, custom: custom, apsIsPlain: true)
        }
        var alert: [String: PlainJSON] = ["body": .string(body)]
        if let title { alert["title"] = .string(title) }
        if let subtitle { alert["subtitle"] = .string(subtitle) }
        var aps: [String: PlainJSON] = ["alert": .object(alert)]
        if let sound { aps["sound"] = .string(sound) }
        if let badge { aps["badge"] = .integer(badge) }
        return PlainJSON.object(["aps": .object(aps)]).bytes
    }

    /// `{"aps":{"content-available":1}}` plus `custom` keys: no alert, sound or badge, as APNs
    /// requires for background pushes.
    public static func background(custom: [String: any Sendable] = [:]) throws -> [UInt8] {
        guard custom.isEmpty else { return try encode(aps: ["content-available": 1], custom: custom, apsIsPlain: true) }
        return PlainJSON.object(["aps": .object(["content-available": .integer(1)])]).bytes
    }

    /// `apsIsPlain`: `aps` holds only strings, integers and dictionaries of them, built here, so
    /// only `custom` can hold something JSON cannot write; checking a plain object would cost a
    /// cold `send` the checker's first use (a dynamic cast per type it knows) for nothing.
    static func encode(aps: [String: Any], custom: [String: any Sendable], apsIsPlain: Bool = false) throws -> [UInt8] {
        guard custom["aps"] == nil else {
            throw PushCoreError(
                .invalidNotification,
                "Custom payload data cannot use the key \"aps\": it is Apple's.",
                hint: "Put custom data under another key."
            )
        }
        var object: [String: Any] = custom
        object["aps"] = aps
        guard apsIsPlain && custom.isEmpty || JSONSerialization.isValidJSONObject(object) else {
            throw PushCoreError(
                .invalidNotification,
                "The custom payload data cannot be written as JSON.",
                hint: "Use strings, numbers, booleans, arrays and dictionaries only."
            )
        }
        return [UInt8](
            try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        )
    }

    /// Checks a payload against the push type's size limit and that it is a JSON object.
    public static func validate(_ payload: [UInt8], pushType: PushType) throws {
        try checkSize(payload, pushType: pushType)
        guard (try? JSONSerialization.jsonObject(with: Data(payload))) is [String: Any] else {
            throw PushCoreError(
                .invalidNotification,
                "The payload is not a JSON object.",
                hint: "A payload looks like {\"aps\":{\"alert\":\"Hello\"}}."
            )
        }
    }

    /// The push type's size limit, with the actual size and the excess in the message.
    public static func checkSize(_ payload: [UInt8], pushType: PushType) throws {
        let limit = pushType.maximumPayloadSize
        guard payload.count <= limit else {
            throw PushCoreError(
                .invalidNotification,
                "The payload is \(payload.count) bytes; APNs takes at most \(limit) bytes for \(pushType) pushes.",
                hint: "Shorten it by \(payload.count - limit) bytes or more; APNs would answer 413 PayloadTooLarge."
            )
        }
    }
}

/// A payload built from options (strings, integers and objects of them), written byte for byte
/// as `JSONSerialization` writes it with sorted keys and slashes unescaped (a test holds the two
/// together). Writing it here spares a cold `send` Foundation's bridging to `NSDictionary` and
/// its writer's first use, a dynamic cast per type (docs/performance.md).
enum PlainJSON: Sendable {
    case string(String)
    case integer(Int)
    case object([String: PlainJSON])

    var bytes: [UInt8] {
        var text = ""
        text.reserveCapacity(128)
        append(to: &text)
        return Array(text.utf8)
    }

    private func append(to text: inout String) {
        switch self {
        case .string(let value): TextEncoding.appendJSONString(value, to: &text)
        case .integer(let number): text += String(number)
        case .object(let members):
            text += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { text += "," }
                TextEncoding.appendJSONString(key, to: &text)
                text += ":"
                members[key]?.append(to: &text)
            }
            text += "}"
        }
    }
}
