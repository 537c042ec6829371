import Foundation
import TestSupport
import Testing

/// Live Activities without hand-written JSON, through the real binary and the local gateway.
@Suite(.needsPrivateSecretService)
struct LiveActivityTests {
    static func aps(_ record: [String: Any]?) throws -> [String: Any] {
        try #require((record?["payload"] as? [String: Any])?["aps"] as? [String: Any])
    }

    static func now() -> Int { Int(Date().timeIntervalSince1970) }

    @Test func startUpdateEndSequence() throws {
        let setup = try TokenKeySetup()
        let send = ["send", setup.alias, "--token", TokenKeySetup.token]
        let attributes = try setup.file("attributes.json", "{\"orderID\":\"A-17\",\"shop\":\"Corner café\"}")

        // Push-to-start, its content state on standard input.
        let beforeStart = Self.now()
        let start = try setup.run(
            send + [
                "--event", "start", "--attributes-type", "DeliveryAttributes", "--attributes", attributes,
                "--content-state", "-", "--alert", "Your order is on its way", "--title", "Delivery",
                "--relevance-score", "75", "--input-push-token",
            ],
            stdin: "{\"status\":\"cooking\",\"eta\":25}"
        )
        #expect(start.status == 0, "\(start.stdout)\(start.stderr)")
        let afterStart = Self.now()

        // An update, stale in 30 minutes.
        let update = try setup.run(
            send + [
                "--event", "update", "--content-state", "{\"status\":\"on the way\",\"eta\":10}", "--stale-date", "30m",
            ]
        )
        #expect(update.status == 0, "\(update.stderr)")
        let afterUpdate = Self.now()

        // The end, dismissed at a given RFC 3339 time, at low power priority.
        let dismissal = Date(timeIntervalSince1970: TimeInterval(afterUpdate + 3_600))
        let formatter = ISO8601DateFormatter()
        let end = try setup.run(
            send + [
                "--event", "end", "--content-state", "{\"status\":\"delivered\",\"eta\":0}", "--dismissal-date",
                formatter.string(from: dismissal), "--priority", "5",
            ]
        )
        #expect(end.status == 0, "\(end.stderr)")
        let afterEnd = Self.now()

        let records = try setup.gateway.deliveries()
        #expect(records.count == 3)
        for record in records {
            #expect(record["topic"] as? String == "com.example.app.push-type.liveactivity")
            #expect((record["headers"] as? [String: String])?["apns-push-type"] == "liveactivity")
        }

        let started = try Self.aps(records.first)
        #expect(started["event"] as? String == "start")
        #expect(started["attributes-type"] as? String == "DeliveryAttributes")
        #expect((started["attributes"] as? [String: Any])?["shop"] as? String == "Corner café")
        #expect((started["content-state"] as? [String: Any])?["eta"] as? Int == 25)
        #expect((started["alert"] as? [String: Any])?["body"] as? String == "Your order is on its way")
        #expect((started["alert"] as? [String: Any])?["title"] as? String == "Delivery")
        #expect(started["relevance-score"] as? Int == 75)
        #expect(started["input-push-token"] as? Int == 1)
        let startTimestamp = try #require(started["timestamp"] as? Int)
        #expect((beforeStart...afterStart).contains(startTimestamp))

        let updated = try Self.aps(records[1])
        #expect(updated["event"] as? String == "update")
        #expect((updated["content-state"] as? [String: Any])?["status"] as? String == "on the way")
        #expect(updated["attributes"] == nil && updated["alert"] == nil)
        let updateTimestamp = try #require(updated["timestamp"] as? Int)
        #expect((startTimestamp...afterUpdate).contains(updateTimestamp))
        let stale = try #require(updated["stale-date"] as? Int)
        #expect((updateTimestamp + 1_800...afterUpdate + 1_800).contains(stale))

        let ended = try Self.aps(records[2])
        #expect(ended["event"] as? String == "end")
        #expect(ended["dismissal-date"] as? Int == afterUpdate + 3_600)
        #expect((updateTimestamp...afterEnd).contains(try #require(ended["timestamp"] as? Int)))
        #expect((records[2]["headers"] as? [String: String])?["apns-priority"] == "5")
    }

    /// Payloads and headers that break ActivityKit's rules are refused before sending, with the
    /// rule named, and nothing reaches the gateway.
    @Test func brokenRulesAreRefusedBeforeSending() throws {
        let setup = try TokenKeySetup()
        let send = ["send", setup.alias, "--token", TokenKeySetup.token]
        let milliseconds = try setup.file(
            "ms.json",
            "{\"aps\":{\"event\":\"update\",\"timestamp\":1900000000000,\"content-state\":{}}}"
        )
        let noState = try setup.file("nostate.json", "{\"aps\":{\"event\":\"update\",\"timestamp\":1900000000}}")
        let cases: [(arguments: [String], says: String)] = [
            (["--event", "start", "--content-state", "{}", "--alert", "x"], "--attributes-type"),
            (
                ["--event", "start", "--attributes-type", "A", "--attributes", "{}", "--content-state", "{}"],
                "--alert"
            ),
            (["--event", "update"], "--content-state"),
            (["--event", "update", "--content-state", "{}", "--push-type", "alert"], "liveactivity"),
            (["--event", "update", "--content-state", "[1]"], "not a JSON object"),
            (["--event", "update", "--content-state", "{}", "--dismissal-date", "1h"], "--event end"),
            (["--event", "update", "--content-state", "{}", "--stale-date", "2020-01-01T00:00:00Z"], "in the past"),
            (["--event", "end", "--attributes", "{}"], "--event start"),
            (["--content-state", "{}", "--alert", "x"], "--event"),
            (["--payload", milliseconds, "--push-type", "liveactivity"], "milliseconds"),
            (["--payload", noState, "--push-type", "liveactivity"], "content-state"),
        ]
        for test in cases {
            let result = try setup.run(send + test.arguments)
            #expect(result.status == 64, "\(test.arguments): \(result.stderr)")
            #expect(result.stderr.contains(test.says), "\(test.arguments): \(result.stderr)")
        }
        #expect(try setup.gateway.deliveries().isEmpty)
    }
}
