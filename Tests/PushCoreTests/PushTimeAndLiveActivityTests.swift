import Foundation
import PushCore
import Testing

/// Times and Live Activity payloads, against a fixed "now": no clock, no network.
struct PushTimeAndLiveActivityTests {
    static let now = Date(timeIntervalSince1970: 1_900_000_000)

    @Test func timesInEveryForm() throws {
        let cases: [(String, PushTime.Parsed)] = [
            ("0", .immediately),
            ("30m", .at(Self.now.addingTimeInterval(1_800))),
            ("1h", .at(Self.now.addingTimeInterval(3_600))),
            ("2d", .at(Self.now.addingTimeInterval(172_800))),
            ("1900003600", .at(Date(timeIntervalSince1970: 1_900_003_600))),
            ("2030-03-17T17:46:40Z", .at(Date(timeIntervalSince1970: 1_900_000_000))),
            ("2030-03-17T18:46:40+01:00", .at(Date(timeIntervalSince1970: 1_900_000_000))),
            ("2030-03-17T17:46:40.500Z", .at(Date(timeIntervalSince1970: 1_900_000_000.5))),
        ]
        for (text, expected) in cases { #expect(try PushTime.parse(text, now: Self.now) == expected, "\(text)") }
        #expect(try PushTime.expiration("0", now: Self.now) == Date(timeIntervalSince1970: 0))
    }

    @Test func pastAndMalformedTimesAreRefused() {
        for text in ["1", "1899999999", "2030-03-17T17:46:40Z"] {
            #expect(throws: PushCoreError.self) { try PushTime.expiration(text, now: Self.now) }
        }
        for text in ["", "m", "1.5h", "soon", "4294967296", "2030-02-30T00:00:00Z"] {
            #expect(throws: PushCoreError.self, "\(text)") { try PushTime.parse(text, now: Self.now) }
        }
        // A dismissal date may be past (the activity leaves at once); a stale date may not.
        #expect(throws: Never.self) { try PushTime.date("1", now: Self.now, what: "dismissal date", allowPast: true) }
        #expect(throws: PushCoreError.self) {
            try PushTime.date("1", now: Self.now, what: "stale date", allowPast: false)
        }
    }

    @Test func liveActivityPayloadFromItsParts() throws {
        var content = LiveActivity.Content(event: .update, timestamp: Self.now)
        content.contentState = "{\"eta\":5}"
        content.staleDate = Self.now.addingTimeInterval(600)
        content.relevanceScore = 12.5
        let payload = try LiveActivity.payload(content)
        let aps = try #require(
            (try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])?["aps"] as? [String: Any]
        )
        #expect(aps["event"] as? String == "update")
        #expect(aps["timestamp"] as? Int == 1_900_000_000)
        #expect(aps["stale-date"] as? Int == 1_900_000_600)
        #expect(aps["relevance-score"] as? Double == 12.5)
        #expect((aps["content-state"] as? [String: Any])?["eta"] as? Int == 5)
    }

    @Test func liveActivityRules() throws {
        func payload(_ aps: String) -> [UInt8] { Array("{\"aps\":\(aps)}".utf8) }
        let good = payload("{\"event\":\"update\",\"timestamp\":1900000000,\"content-state\":{}}")
        try LiveActivity.check(
            payload: good,
            pushType: .liveactivity,
            topic: "com.example.app.push-type.liveactivity",
            priority: .low
        )
        #expect(throws: PushCoreError.self) {
            try LiveActivity.check(payload: good, pushType: .alert, topic: nil, priority: nil)
        }
        #expect(throws: PushCoreError.self) {
            try LiveActivity.check(payload: good, pushType: .liveactivity, topic: "com.example.app", priority: nil)
        }
        let broken = [
            "{\"timestamp\":1900000000,\"content-state\":{}}",
            "{\"event\":\"pause\",\"timestamp\":1900000000,\"content-state\":{}}",
            "{\"event\":\"update\",\"content-state\":{}}",
            "{\"event\":\"update\",\"timestamp\":true,\"content-state\":{}}",
            "{\"event\":\"update\",\"timestamp\":1900000000000,\"content-state\":{}}",
            "{\"event\":\"update\",\"timestamp\":1900000000}",
            "{\"event\":\"update\",\"timestamp\":1900000000,\"content-state\":[]}",
            "{\"event\":\"update\",\"timestamp\":1900000000,\"content-state\":{},\"attributes\":{}}",
            "{\"event\":\"update\",\"timestamp\":1900000000,\"content-state\":{},\"dismissal-date\":1}",
            "{\"event\":\"start\",\"timestamp\":1900000000,\"content-state\":{},\"attributes\":{},\"alert\":\"x\"}",
            "{\"event\":\"start\",\"timestamp\":1900000000,\"content-state\":{},\"attributes-type\":\"A\",\"alert\":\"x\"}",
            "{\"event\":\"start\",\"timestamp\":1900000000,\"content-state\":{},\"attributes-type\":\"A\",\"attributes\":{}}",
        ]
        for aps in broken {
            #expect(throws: PushCoreError.self, "\(aps)") { try LiveActivity.check(payload: payload(aps)) }
        }
        let tooBig = payload(
            "{\"event\":\"end\",\"timestamp\":1900000000,\"content-state\":{\"x\":\"\(String(repeating: "y", count: 4100))\"}}"
        )
        #expect(throws: PushCoreError.self) { try LiveActivity.check(payload: tooBig) }
    }

    @Test func channelIDsAndRequests() throws {
        #expect(try ChannelID("dHN0LXNyY2gtY2hubA==").rawValue == "dHN0LXNyY2gtY2hubA==")
        for bad in ["", "not base64!", "%%%%"] { #expect(throws: PushCoreError.self) { try ChannelID(bad) } }
        let encoder = ChannelRequestEncoder(authority: "localhost:8443")
        let id = UUID(uuidString: "123E4567-E89B-12D3-A456-426614174000")!
        let create = try encoder.create(
            bundleID: "com.example.app",
            policy: .mostRecentMessageStored,
            requestID: id,
            bearer: nil
        )
        let headers = Dictionary(create.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
        #expect(headers[":method"] == "POST")
        #expect(headers[":path"] == "/1/apps/com.example.app/channels")
        #expect(headers["apns-request-id"] == "123e4567-e89b-12d3-a456-426614174000")
        #expect(
            String(decoding: create.body, as: UTF8.self)
                == "{\"message-storage-policy\":1,\"push-type\":\"LiveActivity\"}"
        )
        let list = try encoder.list(bundleID: "com.example.app", requestID: nil, bearer: "jwt")
        #expect(list.headers.contains { $0.name == ":path" && $0.value == "/1/apps/com.example.app/all-channels" })
        #expect(list.headers.contains { $0.name == "authorization" && $0.value == "bearer jwt" })
        #expect(throws: PushCoreError.self) {
            try encoder.list(bundleID: "com.example.app/../../3/device", requestID: nil, bearer: nil)
        }
    }
}
