import Foundation
import PushCore
import Testing

/// APNs' defaults and rules, owned by the library: the push type a request implies, the
/// background priority, ActivityKit's presence rules and a broadcast's limits.
@Suite struct NotificationRequestTests {
    static let token = try! DeviceToken("740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad")

    static func update(_ change: (inout LiveActivity.Content) -> Void = { _ in }) -> LiveActivity.Content {
        var content = LiveActivity.Content(event: .update, timestamp: Date(timeIntervalSince1970: 1_900_000_000))
        content.contentState = "{\"eta\":3}"
        change(&content)
        return content
    }

    @Test func thePushTypeFollowsTheContentUnlessGiven() {
        #expect(
            NotificationRequest(content: .alert(title: nil, body: "hi", sound: nil, badge: nil)).resolvedPushType
                == .alert
        )
        #expect(NotificationRequest(content: .background).resolvedPushType == .background)
        #expect(NotificationRequest(content: .liveActivity(Self.update())).resolvedPushType == .liveactivity)
        #expect(NotificationRequest(content: .payload([]), destination: .broadcast).resolvedPushType == .liveactivity)
        #expect(NotificationRequest(content: .payload([]), pushType: .voip).resolvedPushType == .voip)
    }

    @Test func aBackgroundPushGoesAtPriorityFiveAndRefusesTen() throws {
        let template = try NotificationRequest(content: .background).template(topic: "com.example.app")
        #expect(template.priority == .powerConsiderate)
        #expect(template.pushType == .background)
        // An alert states no priority: APNs' own default (10) applies.
        let alert = try NotificationRequest(content: .alert(title: nil, body: "hi", sound: nil, badge: nil))
            .template(topic: nil)
        #expect(alert.priority == nil)

        let ten = NotificationRequest(content: .background, priority: .immediate)
        #expect(NotificationRequest.rules(ten.shape) == [.backgroundPriority(.immediate)])
        let error = try #require(throws: PushCoreError.self) { try ten.template(topic: nil) }
        #expect(error.code == .invalidNotification)
        #expect(error.message.contains("BadPriority"))
    }

    @Test func aLiveActivityNeedsItsPushTypeAndItsEventsKeys() throws {
        let asAlert = NotificationRequest(content: .liveActivity(Self.update()), pushType: .alert)
        #expect(NotificationRequest.rules(asAlert.shape) == [.liveActivityPushType(.alert)])

        var start = LiveActivity.Content(event: .start, timestamp: Date())
        start.contentState = "{}"
        let rules = NotificationRequest.rules(NotificationRequest(content: .liveActivity(start)).shape)
        #expect(rules == [.liveActivity(.missing([.attributesType, .attributes, .alert], event: .start))])

        let endWithAttributes = LiveActivity.Content(event: .end, timestamp: Date())
        var misplaced = endWithAttributes
        misplaced.attributes = "{}"
        misplaced.inputPushToken = true
        #expect(
            LiveActivity.presenceRules(event: .end, present: misplaced.presentKeys)
                == [.misplaced(.attributes, event: .end), .misplaced(.inputPushToken, event: .end)]
        )
        let dismissed = Self.update { $0.dismissalDate = Date() }
        #expect(
            LiveActivity.presenceRules(event: .update, present: dismissed.presentKeys)
                == [.misplaced(.dismissalDate, event: .update)]
        )

        // The same table judges a payload someone wrote: an update without content-state.
        let written = Array("{\"aps\":{\"event\":\"update\",\"timestamp\":1900000000}}".utf8)
        let error = try #require(throws: PushCoreError.self) {
            try NotificationRequest(content: .payload(written), pushType: .liveactivity).template(
                topic: "com.example.app.push-type.liveactivity"
            )
        }
        #expect(error.code == .invalidLiveActivity)
        #expect(error.message.contains("aps.content-state"))
    }

    @Test func aBroadcastCarriesOnlyALiveActivity() throws {
        let alert = NotificationRequest(
            content: .alert(title: nil, body: "hi", sound: nil, badge: nil),
            destination: .broadcast,
            collapseID: "x",
            apnsID: UUID()
        )
        #expect(
            NotificationRequest.rules(alert.shape) == [
                .broadcastContent(.alert), .broadcastCollapseID, .broadcastAPNsID,
            ]
        )
        #expect(NotificationRequest.failure(.broadcastCollapseID).code == .invalidChannel)

        let channel = try ChannelID("dHN0")
        let broadcast = try NotificationRequest(content: .liveActivity(Self.update()))
            .broadcast(bundleID: "com.example.app", channel: channel)
        #expect(broadcast.bundleID == "com.example.app")
        #expect(String(decoding: broadcast.payload, as: UTF8.self).contains("\"event\":\"update\""))
    }

    @Test func aDeviceNotificationKeepsItsHeaders() throws {
        let id = UUID()
        let expiry = Date(timeIntervalSince1970: 2_000_000_000)
        let notification = try NotificationRequest(
            content: .alert(title: "T", body: "B", sound: "default", badge: 2),
            expiration: expiry,
            collapseID: "group",
            apnsID: id
        ).notification(to: Self.token, topic: "com.example.app")
        #expect(notification.apnsID == id)
        #expect(notification.template.expiration == expiry)
        #expect(notification.template.collapseID == "group")
        #expect(notification.template.topic == "com.example.app")
        #expect(String(decoding: notification.template.payload, as: UTF8.self).contains("\"badge\":2"))
    }
}
