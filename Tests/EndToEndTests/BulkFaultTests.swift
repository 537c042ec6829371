import Foundation
import TestSupport
import Testing

/// Faults that lose answers, against `apnsctl gateway serve`, over 50,000 tokens: late answers
/// (`--latency-ms` beyond `--timeout`), connections closed with streams in flight
/// (`--close-after`), an answer cut with its connection (`--drop-after`), GOAWAYs, and a run
/// killed and resumed. The gateway is the judge of what a person would see: its log has every
/// token delivered at least once, and its count of what each device shows (`--stats`) has no
/// device shown a notification twice (a second delivery carries the same collapse ID as the
/// first, so it replaces it). Its record of the streams in flight shows the sender backing off.
@Suite(.serialized)
struct BulkFaultTests {
    /// Per device token, the notifications Notification Center would hold from the gateway's
    /// log: one per collapse ID, and one per delivery that carried none.
    static func shown(_ gateway: GatewayProcess) throws -> [String: Int] {
        var collapsed: [String: Set<String>] = [:]
        var plain: [String: Int] = [:]
        for record in try gateway.deliveries() {
            let token = try #require(record["device_token"] as? String)
            if let collapseID = (record["headers"] as? [String: String])?["apns-collapse-id"] {
                collapsed[token, default: []].insert(collapseID)
            } else {
                plain[token, default: 0] += 1
            }
        }
        return collapsed.mapValues(\.count).merging(plain, uniquingKeysWith: +)
    }

    /// Every token delivered at least once, shown once, and every delivery carrying the collapse
    /// ID derived from its apns-id (a resend shares it). Returns the deliveries beyond one per
    /// token: the copies the collapse ID made harmless.
    @discardableResult
    static func expectShownOnce(_ bulk: BulkSetting) throws -> Int {
        let deliveries = try bulk.gateway.deliveries()
        let delivered = Set(deliveries.compactMap { $0["device_token"] as? String })
        let missing = bulk.tokens.filter { !delivered.contains($0) }
        #expect(missing.isEmpty, "\(missing.count) tokens never delivered, e.g. \(missing.prefix(3))")
        let twice = try shown(bulk.gateway).filter { $0.value > 1 }
        #expect(twice.isEmpty, "\(twice.count) devices shown a notification twice, e.g. \(twice.prefix(3))")
        let mismatched = deliveries.filter {
            ($0["headers"] as? [String: String])?["apns-collapse-id"] != $0["apns_id"] as? String
        }
        #expect(mismatched.isEmpty, "deliveries without the apns-id as collapse ID: \(mismatched.prefix(2))")
        return deliveries.count - delivered.count
    }

    /// What the gateway counted, once stopped (it writes its statistics as it stops): every token
    /// a device, each device showing one notification, none shown twice. Returns the statistics.
    @discardableResult
    static func expectShownOnceByTheGateway(_ bulk: BulkSetting) throws -> [String: Any] {
        let stats = try bulk.stopAndReadStatistics()
        let display = try #require(stats["display"] as? [String: Any], "\(stats)")
        #expect(display["untracked_deliveries"] as? Int == 0, "\(display)")
        #expect(display["devices"] as? Int == bulk.tokens.count, "every token delivered: \(display)")
        #expect(display["shown"] as? Int == bulk.tokens.count, "one notification on each device: \(display)")
        #expect(display["devices_shown_twice"] as? Int == 0, "\(display)")
        return stats
    }

    /// The most streams open at once in each interval, as the gateway recorded them: after the
    /// run first reached its peak, an interval at most 60 % of it, with more open in a later one
    /// (the run went on, narrower: not the end of the list).
    static func expectInFlightReduced(_ stats: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) throws
    {
        let record = try #require(stats["streams_in_flight"] as? [String: Any], "\(stats)")
        let series = try #require(record["max_open"] as? [Int], "\(record)")
        let peak = series.max() ?? 0
        let first = series.firstIndex(of: peak) ?? 0
        let narrowed = series.indices.dropFirst(first + 1).contains { index in
            series[index] <= peak * 6 / 10 && series[(index + 1)...].contains { $0 > series[index] }
        }
        #expect(
            peak > 0 && narrowed,
            "no narrowing in the streams in flight: \(series)",
            sourceLocation: sourceLocation
        )
    }

    /// The summary a run with `--results FILE --json` prints on standard output.
    static func summary(_ run: CLI.Result) throws -> [String: Any] {
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        return try #require(report["summary"] as? [String: Any], "\(report)")
    }

    @Test func answersLaterThanTheTimeoutAreWaitedForAndShownOnce() throws {
        let bulk = try BulkSetting(gateway: ["--latency-ms", "995"], tokens: 50_000, seed: 61)
        // Four connections of 1,000 streams: 50,000 answers a second late take some 25 s.
        let run = try bulk.run(["--results", bulk.resultsFile, "--timeout", "1", "--connections", "4"], timeout: 300)
        #expect(run.status == 0, "\(run.stderr)")
        let results = try BulkSendTests.results(bulk.resultsFile)
        BulkSendTests.expectOneResultPerLine(results, lines: bulk.lines)
        #expect(results.allSatisfy { $0["status"] as? Int == 200 })
        try Self.expectShownOnce(bulk)
        // The cause, named: answers came later than --timeout; the deadline grew and fewer
        // notifications were in flight.
        #expect(run.stderr.contains("the deadline of a request grew to"), "\(run.stderr)")
        #expect(run.stderr.contains("streams in flight halved"), "\(run.stderr)")
        try Self.expectInFlightReduced(try Self.expectShownOnceByTheGateway(bulk))
    }

    @Test func connectionsClosedWithAThousandStreamsInFlightBackOffAndShowEachAlertOnce() throws {
        let bulk = try BulkSetting(gateway: ["--close-after", "500"], tokens: 50_000, seed: 62)
        let run = try bulk.run(["--results", bulk.resultsFile, "--json", "--max-attempts", "10"], timeout: 300)
        #expect(run.status == 0, "\(run.stderr)")
        let results = try BulkSendTests.results(bulk.resultsFile)
        BulkSendTests.expectOneResultPerLine(results, lines: bulk.lines)
        #expect(
            results.allSatisfy { $0["status"] as? Int == 200 },
            "\(results.filter { $0["status"] as? Int != 200 }.prefix(2))"
        )
        let copies = try Self.expectShownOnce(bulk)
        // What was resent says why, and shares its apns-id (so its collapse ID) with the first.
        let uncertain = results.filter { $0["uncertain"] as? Bool == true }
        #expect(!uncertain.isEmpty)
        #expect(uncertain.allSatisfy { $0["uncertain_because"] as? String == "connection_closed" })
        #expect(copies <= uncertain.count, "only what was uncertain reached the gateway more than once")
        // The summary names the cause and the backing off.
        let summary = try Self.summary(run)
        let lost = summary["lost_answers"] as? [String: Int] ?? [:]
        #expect((lost["connection_closed"] ?? 0) > 0, "\(summary)")
        #expect((summary["in_flight_reductions"] as? Int ?? 0) >= 1, "\(summary)")
        #expect((summary["fewest_in_flight"] as? Int ?? 1_000) <= 500, "streams in flight visibly reduced: \(summary)")
        try Self.expectInFlightReduced(try Self.expectShownOnceByTheGateway(bulk))
    }

    /// An answer cut with its connection (`--drop-after`) and connections closed with GOAWAY: the
    /// first is resent and replaces itself, the second is never uncertain.
    @Test func aDroppedAnswerAndGoAwaysShowEachAlertOnce() throws {
        let bulk = try BulkSetting(
            gateway: ["--drop-after", "1200", "--goaway-after", "700", "--latency-ms", "5"],
            tokens: 50_000,
            seed: 65
        )
        let run = try bulk.run(["--results", bulk.resultsFile], timeout: 300)
        #expect(run.status == 0, "\(run.stderr)")
        let results = try BulkSendTests.results(bulk.resultsFile)
        BulkSendTests.expectOneResultPerLine(results, lines: bulk.lines)
        #expect(results.allSatisfy { $0["status"] as? Int == 200 })
        let copies = try Self.expectShownOnce(bulk)
        let uncertain = results.filter { $0["uncertain"] as? Bool == true }
        #expect(!uncertain.isEmpty, "the dropped answer's connection had streams in flight")
        #expect(uncertain.allSatisfy { $0["uncertain_because"] as? String == "connection_closed" })
        #expect(copies >= 1 && copies <= uncertain.count, "\(copies) copies, \(uncertain.count) uncertain")
        #expect(run.stderr.contains("answers lost:"), "\(run.stderr)")
        try Self.expectShownOnceByTheGateway(bulk)
    }

    /// A push type that acts twice when delivered twice: under the same faults nothing whose
    /// answer was lost is sent again; its line says it is uncertain and why.
    @Test(arguments: [(["--close-after", "500"], [String]()), (["--latency-ms", "995"], ["--timeout", "1"])])
    func aVoIPRunUnderTheSameFaultsResendsNothingUncertain(gateway: [String], send: [String]) throws {
        let bulk = try BulkSetting(gateway: gateway, tokens: 50_000, seed: 63)
        let payload = bulk.folder.path("voip.json")
        try #"{"aps":{},"call":"x"}"#.write(toFile: payload, atomically: true, encoding: .utf8)
        let voip = bulk.arguments.filter { $0 != "--alert" && $0 != "bulk" }
        let run = try BulkSendTests.run(
            voip + ["--push-type", "voip", "--payload", payload, "--results", bulk.resultsFile, "--connections", "4"]
                + send,
            timeout: 300
        )
        #expect([0, 1].contains(run.status), "\(run.stderr)")
        let results = try BulkSendTests.results(bulk.resultsFile)
        BulkSendTests.expectOneResultPerLine(results, lines: bulk.lines)
        let counts = try BulkOneRunTests.delivered(bulk.gateway)
        #expect(counts.values.allSatisfy { $0 == 1 }, "a voip notification reached a device twice")
        let uncertain = results.filter { $0["uncertain"] as? Bool == true }
        // Its line says why it is uncertain. (A line may show 2 attempts: one queued on a
        // connection that closed before it was written is not a delivery, and was sent again.)
        #expect(uncertain.allSatisfy { $0["uncertain_because"] != nil }, "\(uncertain.prefix(2))")
        #expect(uncertain.allSatisfy { ($0["error"] as? [String: Any])?["message"] as? String ?? "" != "" })
        let headers = try bulk.gateway.deliveries().compactMap { $0["headers"] as? [String: String] }
        #expect(headers.allSatisfy { $0["apns-collapse-id"] == nil }, "a voip push gets no collapse ID")
        // The gateway's count: a voip push is never shown, and none reached a device twice.
        let display = try #require(try bulk.stopAndReadStatistics()["display"] as? [String: Any])
        #expect(display["shown"] as? Int == 0 && display["devices_delivered_twice"] as? Int == 0, "\(display)")
    }

    @Test func aKilledRunResumedLosesNothingAndShowsNothingTwice() throws {
        let bulk = try BulkSetting(
            gateway: ["--latency-ms", "20", "--max-concurrent-streams", "50"],
            tokens: 20_000,
            seed: 64
        )
        // As a new user tried it: 20,000 tokens, 50 streams, 20 ms, kill -9 well into the run.
        try bulk.killMidRun(after: 8_000)
        let resumed = try bulk.run(["--resume", bulk.resultsFile], timeout: 180)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let results = try BulkSendTests.results(bulk.resultsFile)
        BulkSendTests.expectOneResultPerLine(results, lines: bulk.lines)
        #expect(results.allSatisfy { $0["status"] as? Int == 200 }, "nothing outcome_unknown, nothing lost")
        // What the kill left in flight was sent again, with its apns-id and collapse ID.
        let resent = results.filter { $0["uncertain_because"] as? String == "outcome_unknown" }
        #expect(!resent.isEmpty && resent.count <= 50, "\(resent.count) resent")
        try Self.expectShownOnce(bulk)
        try Self.expectShownOnceByTheGateway(bulk)
    }
}
