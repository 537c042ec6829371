import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `apnsctl results summary` and `apnsctl results tokens` over the results files of real bulk
/// runs against `apnsctl gateway serve`: the totals are the gateway's own counts, the tokens
/// listed are the ones it answered so, files of different runs are refused, and an unfinished
/// run gets the command that continues it, which works when pasted.
@Suite(.serialized)
struct ResultsCommandTests {
    /// When the chosen devices stopped being valid, as the gateway's registry gives it (ms).
    static let unregisteredAt: Int64 = 1_700_000_000_500

    @Test func theSummaryAndTheTokensAreTheGatewaysAnswersWithTheEnvironmentWarning() throws {
        // 300 devices: 200 registered in the sandbox, 10 of them unregistered (410 with a
        // timestamp), and 100 unknown to it (BadDeviceToken): most rejections are BadDeviceToken.
        let seed: UInt64 = 91
        let tokens = SeededGenerator.tokens(300, seed: seed)
        let registryFolder = try TemporaryFolder()
        var registry: [String: [String: Any]] = [:]
        for (index, token) in tokens.enumerated() where index < 200 {
            var entry: [String: Any] = ["topic": "com.example.app", "environment": "sandbox"]
            if index < 10 { entry["unregistered_at"] = Self.unregisteredAt }
            registry[token] = entry
        }
        let devices = registryFolder.path("devices.json")
        try JSONSerialization.data(withJSONObject: registry).write(to: URL(fileURLWithPath: devices))
        let bulk = try BulkSetting(gateway: ["--devices", devices], tokens: 300, seed: seed)
        #expect(bulk.tokens == tokens)
        let run = try bulk.run(["--results", bulk.resultsFile])
        #expect(run.status == 1, "some lines were rejected: exit \(run.status): \(run.stderr)")

        let text = try CLI.run(["results", "summary", bulk.resultsFile])
        text.exited(1, stdout: "190 accepted, 110 rejected", "Unregistered 10", "BadDeviceToken 100", "finished")
        #expect(
            text.stdout.contains("100 of the 110 rejections are BadDeviceToken, sent to the sandbox"),
            "\(text.stdout)"
        )
        #expect(text.stdout.contains("Do not delete them"), "\(text.stdout)")

        let json = try CLI.run(["results", "summary", bulk.resultsFile, "--json"])
        try JSONContractTests.expectValid("results-summary", json, status: 1)
        let summary = try json.json()
        let totals = try #require(summary["totals"] as? [String: Any])
        let statistics = try bulk.stopAndReadStatistics()
        // The gateway's own counts: its log of deliveries and its rejections by reason.
        #expect(totals["accepted"] as? Int == (try bulk.gateway.deliveries().count))
        #expect(totals["accepted"] as? Int == statistics["accepted"] as? Int)
        #expect(totals["rejected"] as? [String: Int] == statistics["rejected"] as? [String: Int], "\(statistics)")
        #expect(totals["results"] as? Int == 300 && summary["complete"] as? Bool == false)
        let warnings = try #require(summary["warnings"] as? [[String: Any]])
        #expect(warnings.map { $0["code"] as? String } == ["tokens_of_other_environment"])

        // The tokens to delete, each with the time the gateway gave, tab separated.
        let unregistered = try CLI.run(["results", "tokens", bulk.resultsFile, "--unregistered"])
        unregistered.succeeded()
        let rows = unregistered.stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(Set(rows.map { $0[0] }) == Set(tokens.prefix(10)), "\(unregistered.stdout)")
        #expect(rows.allSatisfy { $0.count == 2 && $0[1] == "2023-11-14T22:13:20.500Z" }, "\(unregistered.stdout)")
        let lines = try CLI.run(["results", "tokens", bulk.resultsFile, "--unregistered", "--json"])
        try JSONContractTests.expectValid("results-token", lines, lines: true, status: 0)

        let bad = try CLI.run(["results", "tokens", bulk.resultsFile, "--bad"])
        bad.succeeded(stderr: "most likely belong to production builds")
        #expect(Set(bad.stdout.split(separator: "\n").map(String.init)) == Set(tokens.suffix(100)))

        let neither = try CLI.run(["results", "tokens", bulk.resultsFile])
        neither.exited(64, stderr: "--unregistered")
    }

    @Test func aKilledRunGetsTheCommandThatContinuesItAndFilesOfAnotherRunAreRefused() throws {
        let bulk = try BulkSetting(
            gateway: ["--latency-ms", "3", "--max-concurrent-streams", "50"],
            tokens: 6_000,
            seed: 92
        )
        // While it runs, the summary reads the file as it is and names the run writing it.
        let process = try BulkSendTests.startSend(
            bulk.arguments + ["--results", bulk.resultsFile],
            stderr: FileHandle.nullDevice
        )
        BulkSendTests.waitForResults(bulk.resultsFile, atLeast: 1_000)
        // Held still (it keeps its lock), so that it is running whatever the machine's speed.
        kill(process.processIdentifier, SIGSTOP)
        let running = try CLI.run(["results", "summary", bulk.resultsFile, "--json"])
        let runningFile = try #require((try running.json()["files"] as? [[String: Any]])?.first)
        #expect(runningFile["state"] as? String == "running", "\(running.stdout)")
        #expect(runningFile["writer"] as? String == "process \(process.processIdentifier)")
        #expect(runningFile["resume_command"] == nil, "a run in progress is not continued")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()

        let stopped = try CLI.run(["results", "summary", bulk.resultsFile])
        stopped.exited(1, stdout: "interrupted", "left to send:", "continue with: ")
        let json = try CLI.run(["results", "summary", bulk.resultsFile, "--json"])
        try JSONContractTests.expectValid("results-summary", json, status: 1)
        let files = try #require(try json.json()["files"] as? [[String: Any]])
        #expect(files.first?["state"] as? String == "interrupted")
        let command = try #require(BulkSendTests.resumeCommand(in: stopped.stdout), "\(stopped.stdout)")
        #expect(files.first?["resume_command"] as? String == command)

        // Pasted as printed, it completes the run.
        let resumed = try BulkSendTests.runInShell(command, in: bulk.folder, timeout: 300)
        #expect([0, 1].contains(resumed.status), "\(command)\n\(resumed.stderr)")
        let after = try CLI.run(["results", "summary", bulk.resultsFile, "--json"])
        let summary = try after.json()
        let totals = try #require(summary["totals"] as? [String: Any])
        #expect(totals["results"] as? Int == bulk.tokens.count)
        let left = try #require(summary["left_to_send"] as? [String: Any])
        #expect(left["unfinished_files"] as? Int == 0)
        #expect((summary["files"] as? [[String: Any]])?.first?["state"] as? String == "finished")
        // Every accepted line reached its device; a line the kill left in flight was sent
        // again by the resume with the same apns-id (and so the same collapse id), so a device
        // that got two deliveries got one notification twice, never two.
        var idsByDevice: [String: Set<String>] = [:]
        for record in try bulk.gateway.deliveries() {
            let device = try #require(record["device_token"] as? String)
            idsByDevice[device, default: []].insert(try #require(record["apns_id"] as? String))
        }
        let accepted = try #require(totals["accepted"] as? Int)
        #expect(idsByDevice.count >= accepted, "\(accepted) accepted, \(idsByDevice.count) devices reached")
        #expect(idsByDevice.values.allSatisfy { $0.count == 1 }, "a device got two different notifications")
        #expect(after.status == (accepted == bulk.tokens.count ? 0 : 1))

        // Another run (another alert text) to the same gateway is another run.
        let other = bulk.folder.path("other.jsonl")
        let few = bulk.folder.path("few.txt")
        try (bulk.tokens.prefix(5).joined(separator: "\n") + "\n").write(toFile: few, atomically: true, encoding: .utf8)
        let another = try BulkSendTests.run(
            BulkOneRunTests.arguments(bulk.pki, bulk.gateway, tokens: few).map {
                $0 == "bulk" ? "another text" : $0
            } + ["--results", other]
        )
        #expect(another.status == 0, "\(another.stderr)")
        let refused = try CLI.run(["results", "summary", bulk.resultsFile, other])
        refused.exited(64, stderr: "belongs to another run", "the payload")
        try JSONContractTests.expectFailure(
            try CLI.run(["results", "summary", bulk.resultsFile, other, "--json"]),
            status: 64,
            code: "runs_differ"
        )
        let missing = try CLI.run(["results", "summary", bulk.folder.path("none.jsonl")])
        missing.exited(2, stderr: "cannot be read")
    }
}
