import Foundation
import PushGateway
import TestSupport
import Testing

/// APNs' connection dynamics through the real binaries: `gateway serve` plays them, `send`
/// (one notification and `--tokens`) meets them.
@Suite(.serialized)
struct GatewayDynamicsTests {
    static let key = CLI.cert("keys/AuthKey_ABC123DEFG.p8")
    static let tokenKey = GatewayUnderAttackTests.keyArguments

    /// A gateway (optimised binary) writing its counters to a stats file when stopped, trusting
    /// the client CA of `BulkSendTests.pki`.
    static func gateway(_ extra: [String]) throws -> (GatewayProcess, String) {
        let (_, gateway, stats) = try BulkSendTests().gateway(extra)
        return (gateway, stats)
    }

    /// Stops the gateway and reads what it counted.
    static func stop(_ gateway: GatewayProcess, _ statsFile: String) throws -> [String: Any] {
        gateway.stop()
        return try BulkSendTests.stats(statsFile)
    }

    /// A bulk run of the alert "bulk" with the test key to `tokens`, its results in `results`.
    static func bulkWithKey(_ gateway: GatewayProcess, tokens: String, results: String) throws -> CLI.Result {
        try CLI.runProgram(
            CLI.throughputBinary,
            [
                "send", key, "--team-id", "ABCDE12345", "--topic", "com.example.app", "--environment", "sandbox",
                "--alert", "bulk", "--tokens", tokens, "--results", results,
            ] + gateway.connection,
            timeout: 120
        )
    }

    /// The handshake report of the test key with `gateway`.
    static func handshakeWithKey(_ gateway: GatewayProcess) throws -> (report: [String: Any]?, stdout: String) {
        let handshake = try CLI.run(
            ["handshake", key, "--team-id", "ABCDE12345", "--environment", "sandbox", "--json"] + gateway.connection
        )
        return (try GatewayCommandTests.json(handshake)["handshake"] as? [String: Any], handshake.stdout)
    }

    /// One notification with the test key, as `send KEY.p8` does it.
    static func sendWithKey(
        _ gateway: GatewayProcess,
        keyID: String = "ABC123DEFG",
        topic: String
    ) throws
        -> CLI.Result
    {
        try CLI.run(
            [
                "send", key, "--team-id", "ABCDE12345", "--key-id", keyID, "--topic", topic, "--environment",
                "sandbox", "--token", GatewayCommandTests.token, "--alert", "hi",
            ] + gateway.connection
        )
    }

    // MARK: Keys Apple restricts

    @Test func eachNewerKeyReasonReachesTheUserWithItsExplanation() throws {
        let cases: [(gateway: [String], keyID: String, topic: String, reason: APNsReason)] = [
            (
                ["--key-environment", "ABC123DEFG=production"], "ABC123DEFG", "com.example.app",
                .badEnvironmentKeyInToken
            ),
            (
                ["--key-environment", "ZZZ999ZZZZ=production"], "ZZZ999ZZZZ", "com.example.app",
                .badEnvironmentKeyIdInToken
            ),
            (["--key-topic", "ABC123DEFG=com.example.app"], "ABC123DEFG", "com.other.app", .unrelatedKeyIdInToken),
        ]
        for test in cases {
            let (gateway, _) = try Self.gateway(Self.tokenKey + test.gateway)
            let sent = try Self.sendWithKey(gateway, keyID: test.keyID, topic: test.topic)
            #expect(sent.status == 1, "\(test.reason.rawValue): \(sent.stdout)\(sent.stderr)")
            #expect(sent.stdout.contains("403 \(test.reason.rawValue)"), "\(sent.stdout)")
            #expect(sent.stdout.contains(test.reason.explanation), "\(sent.stdout)")
            #expect(sent.stdout.contains(test.reason.fix), "\(sent.stdout)")
            // The same key within its scope is accepted.
            let fine = try Self.sendWithKey(gateway, topic: "com.example.app")
            #expect(fine.status == (test.reason == .badEnvironmentKeyInToken ? 1 : 0), "\(fine.stdout)")
        }
        // Turned off, the restrictions are not enforced.
        let (open, _) = try Self.gateway(
            Self.tokenKey + ["--key-environment", "ABC123DEFG=production", "--key-topic", "ABC123DEFG=com.example.app"]
                + ["--no-key-scopes"]
        )
        let fine = try Self.sendWithKey(open, topic: "com.other.app")
        #expect(fine.status == 0, "\(fine.stdout)\(fine.stderr)")
    }

    @Test func keyScopeDeclarationsAreCheckedAtStart() throws {
        let pki = try BulkSendTests.pki.get()
        let base = ["gateway", "serve", "--environment", "sandbox", "--client-ca", pki.clientCA] + Self.tokenKey
        let badEnvironment = try CLI.run(base + ["--key-environment", "ABC123DEFG=staging"])
        #expect(badEnvironment.status == 64)
        #expect(badEnvironment.stderr.contains("sandbox or production"), "\(badEnvironment.stderr)")
        let unknownKey = try CLI.run(base + ["--key-topic", "QQQ111QQQQ=com.example.app"])
        #expect(unknownKey.status == 64)
        #expect(unknownKey.stderr.contains("--token-key QQQ111QQQQ="), "\(unknownKey.stderr)")
        let sameEnvironment = try CLI.run(base + ["--key-environment", "QQQ111QQQQ=sandbox"])
        #expect(sameEnvironment.status == 64)
        #expect(sameEnvironment.stderr.contains("--token-key QQQ111QQQQ="), "\(sameEnvironment.stderr)")
    }

    // MARK: The stream limit, against the bulk sender

    /// `count` tokens of which those at the positions `unknown` picks are missing from the
    /// registry (BadDeviceToken).
    static func registry(
        _ count: Int,
        in folder: TemporaryFolder,
        unknown isUnknown: (Int) -> Bool
    ) throws -> (
        tokens: String, devices: String, unknown: Set<String>
    ) {
        let (tokens, _, path) = try BulkSendTests.makeTokens(count, seed: 11, in: folder)
        var registry: [String: [String: String]] = [:]
        var unknown: Set<String> = []
        for (index, token) in tokens.enumerated() {
            if isUnknown(index) {
                unknown.insert(token)
            } else {
                registry[token] = ["topic": "com.example.app", "environment": "sandbox"]
            }
        }
        let devices = folder.path("devices.json")
        try JSONSerialization.data(withJSONObject: registry).write(to: URL(fileURLWithPath: devices))
        return (path, devices, unknown)
    }

    /// No stream above the limit in force at any moment, and the limit of 1 was really met.
    static func expectLimitsHeld(_ stats: [String: Any], low: String, high: String) {
        let byLimit = stats["max_concurrent_streams_by_limit"] as? [String: Int] ?? [:]
        #expect(stats["stream_limit_violations"] as? Int == 0, "\(stats)")
        for (limit, most) in byLimit {
            #expect(most <= Int(limit) ?? 0, "\(most) streams open while \(limit) was in force")
        }
        #expect(byLimit[low] == 1, "streams were sent while the limit was \(low): \(byLimit)")
        #expect((byLimit[high] ?? 0) > 1, "concurrency was used under \(high): \(byLimit)")
    }

    @Test func aBulkRunWithRejectionsNeverExceedsTheLimitAndLeavesNothingUncertain() throws {
        let folder = try TemporaryFolder()
        // Rejections in runs of 20: within one the client drains what it has in flight and
        // then sends one at a time, so streams arrive while the limit of 1 is in force.
        let (tokens, devices, unknown) = try Self.registry(200, in: folder) { ($0 / 20) % 2 == 1 }
        let (gateway, statsFile) = try Self.gateway([
            "--devices", devices, "--latency-ms", "20", "--max-concurrent-streams", "8",
        ])
        let results = folder.path("results.jsonl")
        let run = try BulkSendTests.run(
            BulkOneRunTests.arguments(try BulkSendTests.pki.get(), gateway, tokens: tokens) + ["--results", results]
        )
        #expect(run.status == 1, "some were rejected: \(run.stderr)")
        let lines = try BulkSendTests.results(results)
        #expect(lines.count == 200)
        #expect(lines.allSatisfy { $0["uncertain"] == nil }, "\(lines.filter { $0["uncertain"] != nil }.prefix(3))")
        let rejected = Set(
            lines.filter { $0["reason"] as? String == "BadDeviceToken" }.compactMap { $0["token"] as? String }
        )
        #expect(rejected == unknown)
        #expect(lines.filter { $0["status"] as? Int == 200 }.count == 200 - unknown.count)
        let (counts, _) = try BulkSendTests.deliveryCounts(gateway)
        #expect(counts.count == 200 - unknown.count && counts.values.allSatisfy { $0 == 1 })

        let stats = try Self.stop(gateway, statsFile)
        Self.expectLimitsHeld(stats, low: "1", high: "8")
        #expect((stats["settings_changes"] as? Int ?? 0) >= 2, "\(stats)")
    }

    @Test func aTokenBulkRunStartsAtOneStreamAndThenUsesTheLimit() throws {
        let folder = try TemporaryFolder()
        let (_, _, tokens) = try BulkSendTests.makeTokens(200, seed: 12, in: folder)
        let (gateway, statsFile) = try Self.gateway(
            Self.tokenKey + ["--latency-ms", "20", "--max-concurrent-streams", "64"]
        )
        let results = folder.path("results.jsonl")
        let run = try Self.bulkWithKey(gateway, tokens: tokens, results: results)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = try BulkSendTests.results(results)
        #expect(lines.count == 200 && lines.allSatisfy { $0["status"] as? Int == 200 && $0["uncertain"] == nil })
        let stats = try Self.stop(gateway, statsFile)
        Self.expectLimitsHeld(stats, low: "1", high: "64")
        #expect(stats["settings_changes"] as? Int == 1, "one raise, after the first valid token: \(stats)")
        #expect(stats["refused_streams"] as? Int == 0, "\(stats)")
    }

    @Test func turnedOffTheLimitStaysWhereItWasConfigured() throws {
        let folder = try TemporaryFolder()
        let (tokens, devices, _) = try Self.registry(100, in: folder) { $0 % 5 == 4 }
        let (gateway, statsFile) = try Self.gateway(
            Self.tokenKey + [
                "--devices", devices, "--max-concurrent-streams", "64", "--no-single-stream-after-rejection",
                "--no-single-stream-until-token",
            ]
        )
        let handshake = try Self.handshakeWithKey(gateway)
        #expect(handshake.report?["max_concurrent_streams"] as? Int == 64, "\(handshake.stdout)")
        let results = folder.path("results.jsonl")
        _ = try Self.bulkWithKey(gateway, tokens: tokens, results: results)
        #expect(try BulkSendTests.results(results).count == 100)
        let stats = try Self.stop(gateway, statsFile)
        #expect(stats["settings_changes"] as? Int == 0, "\(stats)")
        #expect((stats["max_concurrent_streams_by_limit"] as? [String: Int])?.keys.sorted() == ["64"], "\(stats)")
    }

    @Test func theTokenWarmUpShowsInTheHandshake() throws {
        let (gateway, _) = try Self.gateway(Self.tokenKey + ["--max-concurrent-streams", "64"])
        let handshake = try Self.handshakeWithKey(gateway)
        #expect(handshake.report?["max_concurrent_streams"] as? Int == 1, "\(handshake.stdout)")
    }

    // MARK: GOAWAY's reason, shown

    @Test func theBulkSummaryNamesWhyAPNsClosedTheConnection() throws {
        let folder = try TemporaryFolder()
        let (_, _, tokens) = try BulkSendTests.makeTokens(250, seed: 13, in: folder)
        for (extra, said) in [
            ([], "APNs closed the connection: Shutdown"),
            (["--no-goaway-reasons"], "APNs closed the connection: NO_ERROR"),
        ] {
            let (gateway, _) = try Self.gateway(["--goaway-after", "100"] + extra)
            let results = folder.path("results-\(extra.count).jsonl")
            let run = try BulkSendTests.run(
                BulkOneRunTests.arguments(try BulkSendTests.pki.get(), gateway, tokens: tokens) + [
                    "--results", results,
                ]
            )
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stderr.contains(said), "\(run.stderr)")
            #expect(extra.isEmpty == run.stderr.contains(APNsReason.shutdown.explanation), "\(run.stderr)")
            #expect(try BulkSendTests.results(results).count == 250)
        }
    }
}
