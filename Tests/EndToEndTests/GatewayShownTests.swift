import Foundation
import TestSupport
import Testing

/// `gateway serve --stats FILE --shown FILE`: the real gateway process, sent to by apnsctl and by
/// curl, counts per device what was delivered and what a person would see, and writes both files
/// as their schemas say when it stops.
@Suite(.serialized)
struct GatewayShownTests {
    /// One device per case, so that each device's counters tell one story.
    static func device(_ number: Int) -> String {
        let hex = String(0xA000 + number, radix: 16)
        return String(repeating: "0", count: 64 - hex.count) + hex
    }

    struct Run {
        let pki: TestPKI.Identities
        let gateway: GatewayProcess
        let stats: String
        let shown: String
        let pem: String

        init() throws {
            pki = try TestPKI.Identities()
            stats = pki.folder.path("shown-stats-\(UUID().uuidString.prefix(8)).json")
            shown = pki.folder.path("shown-\(UUID().uuidString.prefix(8)).jsonl")
            gateway = try pki.gateway("sandbox", ["--stats", stats, "--shown", shown])
            pem = try pki.pem("sandbox")
        }

        /// apnsctl send to `device` with `extra` options.
        func send(_ device: String, _ extra: [String]) throws {
            let result = try pki.run(
                ["send", pki.identity("sandbox"), "--environment", "sandbox", "--token", device] + extra
                    + gateway.connection
            )
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        }

        /// curl's POST of an alert to `device` with these apns-id and collapse id.
        func curl(_ device: String, apnsID: String, collapseID: String?) throws {
            var headers = [
                "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert", "-H", "apns-id: \(apnsID)",
            ]
            if let collapseID { headers += ["-H", "apns-collapse-id: \(collapseID)"] }
            let result = try GatewayCommandTests.curl(
                pem,
                gateway,
                headers + [
                    "--data", #"{"aps":{"alert":"once"}}"#, "https://localhost:\(gateway.port)/3/device/\(device)",
                ]
            )
            #expect(result.stdout.hasPrefix("HTTP/2 200"), "\(result.stdout)\(result.stderr)")
        }

        /// Stops the gateway and reads both files, each checked against its schema.
        func stopAndRead() throws -> (stats: [String: Any], shown: [String: [String: Any]]) {
            gateway.stop()
            let statsText = try String(contentsOfFile: stats, encoding: .utf8)
            let shownText = try String(contentsOfFile: shown, encoding: .utf8)
            try Self.expectValid("gateway-stats", statsText, lines: false)
            try Self.expectValid("gateway-shown-line", shownText, lines: true)
            let statsObject = try #require(
                try JSONSerialization.jsonObject(with: Data(statsText.utf8)) as? [String: Any]
            )
            var byDevice: [String: [String: Any]] = [:]
            for line in shownText.split(separator: "\n") {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                byDevice[try #require(object["device_token"] as? String)] = object
            }
            return (statsObject, byDevice)
        }

        static func expectValid(_ schema: String, _ text: String, lines: Bool) throws {
            let python = CLI.packageRoot.appendingPathComponent(".venv/bin/python").path
            let script = CLI.packageRoot.appendingPathComponent("scripts/validate-json").path
            let checked = try CLI.runProgram(python, [script] + (lines ? ["--lines"] : []) + [schema], stdin: text)
            #expect(
                checked.status == 0,
                "does not follow \(schema).schema.json:\n\(checked.stderr)\n\(text.prefix(2000))"
            )
        }
    }

    @Test func eachDeviceCountsWhatWasDeliveredAndWhatAPersonWouldSee() throws {
        let run = try Run()
        let (collapsed, resentCollapsed, background, resentBare, twoIDs) =
            (Self.device(1), Self.device(2), Self.device(3), Self.device(4), Self.device(5))
        // apnsctl: two notifications with one collapse id (two apns-ids) show as one.
        try run.send(collapsed, ["--alert", "first", "--collapse-id", "score"])
        try run.send(collapsed, ["--alert", "second", "--collapse-id", "score"])
        // curl: a resend of one apns-id with the same collapse id: delivered twice, shown once.
        let resent = UUID().uuidString.lowercased()
        try run.curl(resentCollapsed, apnsID: resent, collapseID: resent)
        try run.curl(resentCollapsed, apnsID: resent, collapseID: resent)
        // apnsctl: a background push is delivered and shows nothing.
        try run.send(background, ["--background"])
        // curl: the same resend without a collapse id: a person sees it twice.
        let bare = UUID().uuidString.lowercased()
        try run.curl(resentBare, apnsID: bare, collapseID: nil)
        try run.curl(resentBare, apnsID: bare, collapseID: nil)
        // apnsctl: two notifications without a collapse id: two delivered, two shown.
        try run.send(twoIDs, ["--alert", "one"])
        try run.send(twoIDs, ["--alert", "two"])

        let (stats, shown) = try run.stopAndRead()
        let devices = try #require(stats["devices"] as? [String: [String: Int]], "\(stats)")
        func counts(_ device: String) -> [String: Int] { devices[device] ?? [:] }
        #expect(
            counts(collapsed) == ["delivered": 2, "shown": 1, "delivered_twice": 0, "shown_twice": 0, "evicted": 0]
        )
        #expect(
            counts(resentCollapsed) == [
                "delivered": 2, "shown": 1, "delivered_twice": 1, "shown_twice": 0, "evicted": 0,
            ]
        )
        #expect(
            counts(background) == ["delivered": 1, "shown": 0, "delivered_twice": 0, "shown_twice": 0, "evicted": 0]
        )
        #expect(
            counts(resentBare) == ["delivered": 2, "shown": 2, "delivered_twice": 1, "shown_twice": 1, "evicted": 0]
        )
        #expect(counts(twoIDs) == ["delivered": 2, "shown": 2, "delivered_twice": 0, "shown_twice": 0, "evicted": 0])

        // The run's totals, and the gateway's log, agree with the devices.
        let totals = try #require(stats["display"] as? [String: Any])
        #expect(totals["delivered"] as? Int == 9)
        #expect(totals["shown"] as? Int == 6)
        #expect(totals["devices_shown_twice"] as? Int == 1)
        #expect(stats["accepted"] as? Int == 9)
        #expect(try run.gateway.deliveries().count == 9)

        // What a person would see: the latest of the collapsed pair, the resent one once, nothing
        // for the background push.
        let collapsedHeld = try #require(shown[collapsed]?["notifications"] as? [[String: Any]])
        #expect(collapsedHeld.count == 1)
        #expect(collapsedHeld.first?["collapse_id"] as? String == "score")
        #expect(collapsedHeld.first?["replacements"] as? Int == 1)
        let logged = try run.gateway.deliveries().filter { $0["device_token"] as? String == collapsed }
        #expect(collapsedHeld.first?["apns_id"] as? String == logged.last?["apns_id"] as? String)
        let resentHeld = try #require(shown[resentCollapsed]?["notifications"] as? [[String: Any]])
        #expect(resentHeld.map { $0["apns_id"] as? String } == [resent])
        #expect((shown[background]?["notifications"] as? [Any])?.isEmpty == true)
        #expect(shown[background]?["delivered"] as? Int == 1)
        #expect((shown[resentBare]?["notifications"] as? [Any])?.count == 2)
    }

    @Test func theStreamsInFlightAreRecordedPerConnectionAndOverTime() throws {
        let run = try Run()
        try run.send(Self.device(1), ["--alert", "hi"])
        try run.curl(Self.device(2), apnsID: UUID().uuidString.lowercased(), collapseID: nil)
        let (stats, _) = try run.stopAndRead()
        let streams = try #require(stats["streams_in_flight"] as? [String: Any])
        #expect(streams["interval_ms"] as? Int == 100)
        // apnsctl's connection and curl's: one stream each at most.
        let peaks = try #require(streams["peak_by_connection"] as? [String: Int])
        #expect(peaks.count == 2, "\(peaks)")
        #expect(peaks.values.allSatisfy { $0 == 1 }, "\(peaks)")
        let series = try #require(streams["max_open"] as? [Int])
        #expect(series.max() == 1)
        #expect(stats["connections"] as? Int == 2)
    }

    /// Under a fault that loses answers, whatever the sender does: the display agrees with the
    /// gateway's own log device by device, and the streams in flight stay within what was
    /// advertised.
    @Test func underLostAnswersTheCountsAgreeWithTheLogAndThePeaksWithTheFault() throws {
        let bulk = try BulkSetting(
            gateway: ["--close-after", "50", "--max-concurrent-streams", "100", "--drop-after", "120"],
            tokens: 400,
            seed: 41
        )
        // The sender's outcome is not this test's subject: it may retry or give up.
        _ = try bulk.run(["--results", bulk.resultsFile, "--max-attempts", "3"])
        let stats = try bulk.stopAndReadStatistics()

        var logged: [String: [String: Int]] = [:]
        for record in try bulk.gateway.deliveries() {
            let device = try #require(record["device_token"] as? String)
            logged[device, default: [:]][try #require(record["apns_id"] as? String), default: 0] += 1
        }
        let devices = try #require(stats["devices"] as? [String: [String: Int]], "\(stats.keys)")
        #expect(Set(devices.keys) == Set(logged.keys))
        for (device, ids) in logged {
            let counts = devices[device] ?? [:]
            let total = ids.values.reduce(0, +)
            #expect(counts["delivered"] == total, "\(device): \(counts) against the log's \(ids)")
            #expect(counts["delivered_twice"] == ids.values.filter { $0 > 1 }.count, "\(device)")
            // Each alert carries a collapse id of its own (the sender's apns-id), so a resend
            // replaces what the first delivery showed: each notification is seen once.
            #expect(counts["shown"] == ids.count, "\(device)")
            #expect(counts["shown_twice"] ?? 0 == 0, "\(device)")
        }
        let totals = try #require(stats["display"] as? [String: Any])
        #expect(totals["delivered"] as? Int == stats["accepted"] as? Int)
        #expect(((stats["answers_dropped"] as? [String])?.count ?? 0) <= 1)

        let streams = try #require(stats["streams_in_flight"] as? [String: Any])
        let peaks = try #require(streams["peak_by_connection"] as? [String: Int])
        // What the sender had open on each connection, never above the limit advertised (the
        // streams that arrive with stream 51, before the close takes effect, count too).
        #expect(!peaks.isEmpty && peaks.values.allSatisfy { $0 <= 100 }, "\(peaks)")
        #expect(peaks.count <= stats["connections"] as? Int ?? 0)
        // All connections together had at least the most one had, and at most all their peaks.
        let series = try #require(streams["max_open"] as? [Int])
        let most = series.max() ?? 0
        #expect(most >= peaks.values.max() ?? 0 && most <= peaks.values.reduce(0, +), "\(most) against \(peaks)")
    }
}
