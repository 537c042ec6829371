import ArgumentParser
import CredentialFormats
import Foundation
import PushCore

/// The options as the library's ``NotificationRequest``: the library owns APNs' defaults and
/// rules; this file only maps options to it and words its rules with the options' names.
extension Send {
    /// The request's shape from the options alone (no file read), for `validate()`.
    var requestShape: NotificationRequest.Shape {
        var shape = NotificationRequest.Shape(
            kind: .payload,
            destination: channel == nil ? .device : .broadcast,
            pushType: pushType.map { PushType($0) },
            priority: priority.map(PushPriority.init),
            hasCollapseID: collapseID != nil,
            hasAPNsID: apnsID != nil
        )
        if let event = liveActivity.event {
            shape.kind = .liveActivity
            shape.event = event
            shape.present = liveActivity.presentKeys(alert: alert, title: title)
        } else if alert != nil {
            shape.kind = .alert
        } else if background {
            shape.kind = .background
        }
        return shape
    }

    /// The request, its payload read from the file or standard input named by --payload, or
    /// built from the alert, background or Live Activity options.
    func makeRequest() throws -> NotificationRequest {
        let content: NotificationRequest.Content
        if let activity = try liveActivity.content(alert: alert, title: title, sound: sound) {
            content = .liveActivity(activity)
        } else if let alert {
            content = .alert(title: title, body: alert, sound: sound, badge: badge)
        } else if background {
            content = .background
        } else if let payload {
            content = .payload(
                payload == "-"
                    ? try InputFile.read(path: payload, kind: .payload)
                    : try CredentialFile.readBytes(path: payload, kind: .payload)
            )
        } else {
            content = .payload([])
        }
        return NotificationRequest(
            content: content,
            destination: channel == nil ? .device : .broadcast,
            pushType: pushType.map { PushType($0) },
            priority: priority.map(PushPriority.init),
            expiration: try expiration.map { try PushTime.expiration($0, now: Date()) },
            collapseID: collapseID,
            apnsID: apnsID.flatMap(UUID.init(uuidString:))
        )
    }

    /// The first rule the options break, worded with the options' names (exit 64 before
    /// anything is read or sent).
    func validateRequestRules() throws {
        guard let rule = NotificationRequest.rules(requestShape).first else { return }
        throw ValidationError(Self.words(rule))
    }

    static func words(_ rule: NotificationRequest.Rule) -> String {
        switch rule {
        case .backgroundPriority:
            return "A background push must use priority 5 (APNs answers BadPriority otherwise)."
        case .liveActivityPushType(let type):
            return "--event builds a Live Activity payload: the push type is liveactivity, not \(type)."
        case .broadcastPushType(let type):
            return "A broadcast carries a Live Activity: --push-type is liveactivity, not \(type)."
        case .broadcastContent(.background):
            return "A broadcast carries a Live Activity payload, not --background."
        case .broadcastContent:
            return "A broadcast carries a Live Activity payload: give --event update|end or --payload FILE."
        case .broadcastCollapseID:
            return "--collapse-id is for device notifications; a broadcast has none."
        case .broadcastAPNsID:
            return "--apns-id is for device notifications; a broadcast gets an apns-request-id."
        case .liveActivity(.missing(let keys, .start)) where keys == [.alert]:
            return "--event start (push-to-start) needs --alert TEXT: the system shows it as the activity appears."
        case .liveActivity(.missing(_, .start)):
            return
                "--event start (push-to-start) needs --attributes-type NAME, --attributes FILE|JSON and --content-state FILE|JSON, and an --alert TEXT."
        case .liveActivity(.missing(_, let event)):
            return "--event \(event.rawValue) needs --content-state FILE|JSON: the activity's new content."
        case .liveActivity(.misplaced(.dismissalDate, _)):
            return "--dismissal-date goes with --event end."
        case .liveActivity(.misplaced(let key, let event)):
            return
                "\(LiveActivityOptions.option(for: key)) is for --event start (push-to-start), not \(event.rawValue)."
        }
    }
}
