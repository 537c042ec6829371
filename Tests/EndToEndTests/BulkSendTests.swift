import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `apnsctl send --tokens`: the real binary against the real local gateway, with faults.
/// Every test checks the results file against the gateway's own record of deliveries.
@Suite(.serialized)
struct BulkSendTests {
    /// One PKI and sandbox identity for the suite's gateways.
    static let pki: Result<TestPKI.Identities, any Error> = Result { try TestPKI.Identities() }

    /// A token file: `count` distinct tokens (seeded), with `extra` lines inserted at given
    /// 0-based positions of the written file.
    static func makeTokens(
        _ count: Int,
        seed: UInt64,
        in folder: TemporaryFolder,
        extra: [Int: String] = [:]
    ) throws -> (tokens: [String], lines: [String], path: String) {
        let tokens = SeededGenerator.tokens(count, seed: seed)
        var lines = tokens
        for (position, text) in extra.sorted(by: { $0.key < $1.key }) { lines.insert(text, at: position) }
        let path = folder.path("tokens.txt")
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return (tokens, lines, path)
    }

    /// The result lines of a results file; its first line must be the run header.
    static func results(_ path: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let objects = try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
        }
        #expect(objects.first?["run"] is [String: Any], "a results file starts with its run header")
        // Run headers, stop and end records describe the run; they are not results.
        return objects.filter { $0["run"] == nil && $0["stop"] == nil && $0["end"] == nil }
    }

    /// What a stopped gateway wrote with --stats.
    static func stats(_ path: String) throws -> [String: Any] {
        try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        )
    }

    /// Deliveries the gateway recorded, counted by apns-id.
    static func deliveryCounts(_ gateway: GatewayProcess) throws -> (counts: [String: Int], dropped: Set<String>) {
        var counts: [String: Int] = [:]
        var dropped: Set<String> = []
        for record in try gateway.deliveries() {
            let id = try #require(record["apns_id"] as? String)
            counts[id, default: 0] += 1
            if record["answer_dropped"] as? Bool == true { dropped.insert(id) }
        }
        return (counts, dropped)
    }

    /// Checks the results cover each token line exactly once, with the token of that line.
    static func expectOneResultPerLine(_ results: [[String: Any]], lines: [String]) {
        var seen: [Int: Int] = [:]
        for result in results {
            guard let line = result["line"] as? Int else {
                Issue.record("a result without a line number: \(result)")
                continue
            }
            seen[line, default: 0] += 1
        }
        let expected = Set(
            lines.enumerated().compactMap { index, text -> Int? in
                let trimmed = text.trimmingCharacters(in: .whitespaces)
                return trimmed.isEmpty || trimmed.hasPrefix("#") ? nil : index + 1
            }
        )
        #expect(Set(seen.keys) == expected, "lines with results differ from the token lines")
        let duplicated = seen.filter { $0.value > 1 }
        #expect(duplicated.isEmpty, "lines with more than one result: \(duplicated.keys.sorted().prefix(10))")
        for result in results {
            if let line = result["line"] as? Int, line <= lines.count, errorCode(result) != "malformed_token" {
                #expect(
                    result["token"] as? String == lines[line - 1].lowercased(),
                    "line \(line) reports another token"
                )
            }
        }
    }

    func gateway(_ extra: [String]) throws -> (TestPKI.Identities, GatewayProcess, String) {
        let pki = try Self.pki.get()
        let statsFile = pki.folder.path("stats-\(UUID().uuidString.prefix(8)).json")
        let gateway = try GatewayProcess(
            pki.folder,
            name: "bulk-\(UUID().uuidString.prefix(8))",
            arguments: ["--environment", "sandbox", "--client-ca", pki.clientCA, "--stats", statsFile] + extra,
            binary: CLI.throughputBinary
        )
        return (pki, gateway, statsFile)
    }

    /// Starts the optimised binary in the background (arguments carry --password-env MINT).
    static func startSend(_ arguments: [String], stderr: Any) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.throughputBinary)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["MINT"] = GatewayCommandTests.password
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderr
        try process.run()
        return process
    }

    /// Runs `command` as a pasted line in a shell, in `folder`, with the password in MINT.
    static func runInShell(
        _ command: String,
        in folder: TemporaryFolder,
        timeout: TimeInterval = 120
    ) throws -> CLI.Result {
        try CLI.runProgram(
            "/bin/bash",
            ["-c", "cd \(BulkResumeCommandTests.quoted(folder.path(""))) && " + command],
            environment: ["MINT": GatewayCommandTests.password],
            timeout: timeout
        )
    }

    /// The resume command a stopped run printed after "continue with: " in `text`.
    static func resumeCommand(in text: String) -> String? {
        text.split(separator: "\n").first { $0.contains("continue with: ") }.map {
            String($0[$0.range(of: "continue with: ")!.upperBound...])
        }
    }

    /// What a background run wrote to `errors` (its standard error), once it has ended.
    static func endOf(_ process: Process, _ errors: Pipe) -> String {
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return stderr
    }

    /// Waits until the results file has `count` lines (the bound only ends a hung test).
    static func waitForResults(_ path: String, atLeast count: Int) {
        waitUntil {
            // The run header is a line of its own.
            ((try? String(contentsOfFile: path, encoding: .utf8))?.split(separator: "\n").count ?? 0) > count
        }
    }

    /// Runs the optimised binary with the identity's password in the environment.
    static func send(_ arguments: [String], stdin: String? = nil, timeout: TimeInterval = 300) throws -> CLI.Result {
        try run(arguments + ["--password-env", "MINT"], stdin: stdin, timeout: timeout)
    }

    /// The same, for arguments that already name the password's variable (`--password-env MINT`).
    static func run(_ arguments: [String], stdin: String? = nil, timeout: TimeInterval = 300) throws -> CLI.Result {
        try CLI.runProgram(
            CLI.throughputBinary,
            arguments,
            stdin: stdin,
            environment: ["MINT": GatewayCommandTests.password],
            timeout: timeout
        )
    }

    @Test func hundredThousandTokensWithFaultsAndGoAwayGetOneResultEachAndOneDeliveryEach() throws {
        let bulk = try BulkSetting(
            gateway: ["--rate-503", "0.03", "--rate-429", "0.02", "--goaway-after", "10000", "--seed", "7"],
            tokens: 100_000,
            seed: 1
        )
        let run = try bulk.run(["--results", bulk.resultsFile, "--max-attempts", "10"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("100,000 accepted"), "\(run.stderr)")

        let results = try Self.results(bulk.resultsFile)
        #expect(results.count == bulk.tokens.count)
        Self.expectOneResultPerLine(results, lines: bulk.lines)
        #expect(results.allSatisfy { $0["status"] as? Int == 200 })
        // The faults happened and were retried, with the same apns-id; none was uncertain,
        // because GOAWAY says exactly what was processed.
        #expect(results.filter { ($0["attempts"] as? Int ?? 0) > 1 }.count > 1_000)
        #expect(
            results.allSatisfy { $0["uncertain"] == nil },
            "uncertain: \(results.filter { $0["uncertain"] != nil }.prefix(3))"
        )

        let (counts, _) = try Self.deliveryCounts(bulk.gateway)
        for result in results {
            let id = try #require(result["apns_id"] as? String)
            #expect(counts[id] == 1, "line \(result["line"] ?? "?") was delivered \(counts[id] ?? 0) times")
        }
        #expect(counts.count == results.count)
        #expect(
            !FileManager.default.fileExists(atPath: bulk.resultsFile + ".journal"),
            "a finished run leaves no journal"
        )

        let stats = try bulk.stopAndReadStatistics()
        #expect((stats["go_aways_sent"] as? Int ?? 0) >= 9, "\(stats)")
        let rejected = stats["rejected"] as? [String: Int] ?? [:]
        #expect((rejected["ServiceUnavailable"] ?? 0) > 1_000 && (rejected["TooManyRequests"] ?? 0) > 1_000, "\(stats)")
    }

    @Test func anAbruptDropMarksExactlyTheNotificationsWhoseAnswerWasLost() throws {
        let bulk = try BulkSetting(
            gateway: ["--rate-503", "0.02", "--drop-after", "30000", "--max-concurrent-streams", "100", "--seed", "3"],
            tokens: 60_000,
            seed: 2
        )
        let run = try bulk.run(["--results", bulk.resultsFile, "--max-attempts", "10"])
        #expect(run.status == 0, "\(run.stderr)")

        let results = try Self.results(bulk.resultsFile)
        #expect(results.count == bulk.tokens.count)
        Self.expectOneResultPerLine(results, lines: bulk.lines)
        #expect(results.allSatisfy { $0["status"] as? Int == 200 })

        let (counts, dropped) = try Self.deliveryCounts(bulk.gateway)
        #expect(dropped.count == 1, "the fault drops exactly one answer")
        let twice = Set(counts.filter { $0.value > 1 }.keys)
        // Only the notification whose answer was lost reached the gateway twice...
        #expect(twice == dropped)
        #expect(counts.values.allSatisfy { $0 <= 2 })
        // ...and the results mark it, and only notifications that were in flight at the drop.
        let uncertain = results.filter { $0["uncertain"] as? Bool == true }
        let uncertainIDs = Set(uncertain.compactMap { $0["apns_id"] as? String })
        #expect(dropped.isSubset(of: uncertainIDs))
        #expect(uncertain.allSatisfy { ($0["attempts"] as? Int ?? 0) >= 2 })
        #expect(
            !uncertain.isEmpty && uncertain.count <= 100,
            "at most the 100 streams in flight; got \(uncertain.count)"
        )
        // Every other notification was delivered exactly once.
        for result in results where !(result["uncertain"] as? Bool ?? false) {
            let id = try #require(result["apns_id"] as? String)
            #expect(counts[id] == 1)
        }
        #expect(run.stderr.contains("uncertain"), "\(run.stderr)")
    }

    @Test func streamsFollowTheAdvertisedLimitAsItRises() throws {
        let bulk = try BulkSetting(
            gateway: ["--max-concurrent-streams", "1", "--change-streams", "200:16"],
            tokens: 3_000,
            seed: 3
        )
        let run = try bulk.run(["--results", bulk.resultsFile])
        #expect(run.status == 0, "\(run.stderr)")
        let results = try Self.results(bulk.resultsFile)
        #expect(results.count == bulk.tokens.count)
        Self.expectOneResultPerLine(results, lines: bulk.lines)

        let stats = try bulk.stopAndReadStatistics()
        // Never above what was advertised: nothing refused, no violation...
        #expect(stats["refused_streams"] as? Int == 0, "\(stats)")
        #expect(stats["stream_limit_violations"] as? Int == 0, "\(stats)")
        #expect(stats["settings_changes"] as? Int == 1, "\(stats)")
        // ...and the raise was used: more than one stream at once, never more than 16.
        let most = stats["max_concurrent_streams_observed"] as? Int ?? 0
        #expect(most > 1 && most <= 16, "most concurrent streams: \(most)")
        #expect(stats["accepted"] as? Int == bulk.tokens.count)
    }

    /// At most once (`--no-resend-uncertain`), recorded in the run's header and kept by its
    /// resume without being given again.
    @Test func resumeAfterSIGKILLOfAnAtMostOnceRunDeliversNothingTwice() throws {
        let bulk = try BulkSetting(
            gateway: ["--latency-ms", "3", "--max-concurrent-streams", "50"],
            tokens: 15_000,
            seed: 4
        )
        // First run: killed without warning once a few thousand results are written.
        let process = try bulk.killMidRun(after: 3_000, extra: ["--no-resend-uncertain"])
        #expect(process.terminationReason == .uncaughtSignal)
        let firstRun = try Self.results(bulk.resultsFile).count
        #expect(firstRun >= 3_000 && firstRun < bulk.tokens.count, "killed mid-run: \(firstRun) results")
        #expect(FileManager.default.fileExists(atPath: bulk.resultsFile + ".journal"))

        // Second run: continues the same results file.
        let resumed = try bulk.run(["--resume", bulk.resultsFile])
        #expect([0, 1].contains(resumed.status), "\(resumed.stderr)")
        let results = try Self.results(bulk.resultsFile)
        #expect(results.count == bulk.tokens.count)
        Self.expectOneResultPerLine(results, lines: bulk.lines)
        #expect(resumed.stderr.contains("skipped (already done)"), "\(resumed.stderr)")

        let (counts, _) = try Self.deliveryCounts(bulk.gateway)
        #expect(counts.values.allSatisfy { $0 == 1 }, "a notification was delivered twice")
        let delivered = try BulkOneRunTests.delivered(bulk.gateway)
        #expect(delivered.values.allSatisfy { $0 == 1 }, "a device received the notification twice")
        // What the kill left in flight is reported, not resent; everything else was delivered.
        let unknown = results.filter { errorCode($0) == "outcome_unknown" }
        #expect(unknown.count <= 50)
        #expect(unknown.allSatisfy { $0["uncertain"] as? Bool == true })
        for result in results where result["status"] as? Int == 200 {
            #expect(counts[result["apns_id"] as? String ?? ""] == 1)
        }
        #expect(
            delivered.count + unknown.filter { delivered[$0["token"] as? String ?? ""] == nil }.count
                == bulk.tokens.count
        )
    }

    @Test func ctrlCFinishesWhatIsInFlightAndResumeCompletesTheRest() throws {
        let bulk = try BulkSetting(
            gateway: ["--latency-ms", "5", "--max-concurrent-streams", "20"],
            tokens: 8_000,
            seed: 8
        )
        let errors = Pipe()
        let process = try Self.startSend(bulk.arguments + ["--results", bulk.resultsFile], stderr: errors)
        Self.waitForResults(bulk.resultsFile, atLeast: 1_000)
        kill(process.processIdentifier, SIGINT)
        let stderr = Self.endOf(process, errors)
        #expect(process.terminationStatus == 130, "\(stderr)")
        #expect(stderr.contains("interrupted") && stderr.contains("--resume"), "\(stderr)")

        // What was in flight was answered and written: every delivery so far has its result.
        let partial = try Self.results(bulk.resultsFile)
        #expect(partial.count < bulk.tokens.count)
        #expect(try bulk.gateway.deliveries().count == partial.count)

        let resumed = try bulk.run(["--resume", bulk.resultsFile])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let results = try Self.results(bulk.resultsFile)
        Self.expectOneResultPerLine(results, lines: bulk.lines)
        #expect(results.allSatisfy { $0["status"] as? Int == 200 && $0["uncertain"] == nil })
        let (counts, _) = try Self.deliveryCounts(bulk.gateway)
        #expect(counts.count == bulk.tokens.count && counts.values.allSatisfy { $0 == 1 })
    }

    @Test func tokensFromADeviceWithNoLineEndStopRatherThanReadForEver() throws {
        let (pki, gateway, _) = try gateway([])
        let folder = try TemporaryFolder()
        let run = try Self.run(
            BulkOneRunTests.arguments(pki, gateway, tokens: "/dev/zero") + ["--results", folder.path("results.jsonl")],
            timeout: 60
        )
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains("no end within its first MiB"), "\(run.stderr)")
        #expect(try gateway.deliveries().isEmpty)
        // The stop names its real cause: the input, not the results file.
        let written = try String(contentsOfFile: folder.path("results.jsonl"), encoding: .utf8)
        #expect(written.contains(#""cause":"input_failed""#), "\(written)")
    }

    @Test func sigtermDuringStartUpIsAStopWithStatus130() throws {
        let (pki, gateway, _) = try gateway([])
        let folder = try TemporaryFolder()
        // Tokens from a FIFO nobody writes to: the run waits in its start-up, opening them.
        let fifo = folder.path("tokens.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let errors = Pipe()
        let process = try Self.startSend(
            BulkOneRunTests.arguments(pki, gateway, tokens: fifo) + ["--results", folder.path("results.jsonl")],
            stderr: errors
        )
        // Signalled once the run waits in its start-up: a thread of it is opening the FIFO, which the
        // kernel shows as waiting for the FIFO's other end (the bound only ends a hung test).
        let task = "/proc/\(process.processIdentifier)/task"
        func opening() -> Bool {
            let threads = (try? FileManager.default.contentsOfDirectory(atPath: task)) ?? []
            return threads.contains {
                (try? String(contentsOfFile: "\(task)/\($0)/wchan", encoding: .utf8)) == "wait_for_partner"
            }
        }
        waitUntil { opening() || !process.isRunning }
        #expect(opening(), "the run never waited to open its tokens")
        kill(process.processIdentifier, SIGTERM)
        let stderr = Self.endOf(process, errors)
        // The documented status of an interrupted run, not the signal's default death (143).
        #expect(process.terminationStatus == 130, "\(stderr)")
        #expect(process.terminationReason == .exit)
        #expect(stderr.contains("nothing was sent"), "\(stderr)")
        #expect(try gateway.deliveries().isEmpty)
    }

    @Test func malformedLinesAreReportedWithTheirNumbersAndTheRunGoesOn() throws {
        let long = String(repeating: "ab", count: 700)
        let bulk = try BulkSetting(
            tokens: 500,
            seed: 5,
            extraLines: [
                0: "# device tokens for the smoke test", 1: "", 10: "not-a-token", 20: "abc", 30: long, 40: "   ",
                50: "<740f4707 bebcf74f 9b7c25d4 8e335894 5f6aa01d a5ddb387 462c7eaf 61bb78ad>  # pasted from a log",
            ]
        )
        let tokens = bulk.tokens
        // stdin and --json: results on standard output.
        let run = try Self.run(
            BulkOneRunTests.arguments(bulk.pki, bulk.gateway, tokens: "-") + ["--json"],
            stdin: try String(contentsOfFile: bulk.tokenFile, encoding: .utf8)
        )
        #expect(run.status == 1, "malformed lines make the exit status 1: \(run.stderr)")
        let results = try run.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(results.count == tokens.count + 4)
        let malformed = results.filter { errorCode($0) == "malformed_token" }
        #expect(Set(malformed.compactMap { $0["line"] as? Int }) == [11, 21, 31])
        let messages = Dictionary(
            uniqueKeysWithValues: malformed.map {
                ($0["line"] as? Int ?? 0, ($0["error"] as? [String: Any])?["message"] as? String ?? "")
            }
        )
        #expect(messages[11]?.contains("'n' at position 1") == true, "\(messages)")
        #expect(messages[21]?.contains("3 hex digits") == true, "\(messages)")
        #expect(messages[31]?.contains("longer than") == true, "\(messages)")
        #expect(malformed.allSatisfy { $0["attempts"] as? Int == 0 && $0["status"] is NSNull })
        // The pasted form with a trailing comment is a token like any other.
        let pasted = try #require(results.first { $0["line"] as? Int == 51 })
        #expect(pasted["token"] as? String == GatewayCommandTests.token)
        #expect(pasted["status"] as? Int == 200)
        #expect(results.filter { $0["status"] as? Int == 200 }.count == tokens.count + 1)
        #expect(try bulk.gateway.deliveries().count == tokens.count + 1)
    }

    @Test func resumingWithAnotherTokenFileSendsOnlyItsNewTokens() throws {
        let (pki, gateway, _) = try gateway([])
        let folder = try TemporaryFolder()
        let (_, _, tokenFile) = try Self.makeTokens(50, seed: 6, in: folder)
        let resultsFile = folder.path("results.jsonl")
        let base =
            ["send", pki.identity("sandbox"), "--environment", "sandbox", "--alert", "bulk"] + gateway.connection
        let first = try pki.run(base + ["--tokens", tokenFile, "--results", resultsFile])
        #expect(first.status == 0, "\(first.stderr)")
        // Writing over an existing results file is refused.
        let again = try pki.run(base + ["--tokens", tokenFile, "--results", resultsFile])
        #expect(again.status == 1)
        #expect(again.stderr.contains("already exists") && again.stderr.contains("--resume"), "\(again.stderr)")

        let other = folder.path("other.txt")
        // A resume matches by token, not line: another file's tokens are new ones, each sent
        // once; the ones already done (by any line) are skipped.
        try
            (SeededGenerator.tokens(50, seed: 99).joined(separator: "\n") + "\n"
            + String(contentsOfFile: tokenFile, encoding: .utf8))
            .write(toFile: other, atomically: true, encoding: .utf8)
        let other50 = try pki.run(base + ["--tokens", other, "--resume", resultsFile])
        #expect(other50.status == 0, "\(other50.stderr)")
        #expect(other50.stderr.contains("skipped (already done) 50"), "\(other50.stderr)")
        // It is told that the file is not the one the run began with, and how to send the rest.
        #expect(other50.stderr.contains("not the token file the run began with"), "\(other50.stderr)")
        #expect(other50.stderr.contains("--tokens \(tokenFile)"), "\(other50.stderr)")
        let delivered = try BulkOneRunTests.delivered(gateway)
        #expect(delivered.count == 100 && delivered.values.allSatisfy { $0 == 1 }, "each token once")

        // A run that cannot start leaves no results file or journal behind.
        let never = folder.path("never.jsonl")
        let unreachable = try pki.run([
            "send", pki.identity("sandbox"), "--environment", "sandbox", "--alert", "bulk",
            "--tokens", tokenFile, "--results", never, "--gateway", "127.0.0.1:1", "--ca", gateway.caFile,
        ])
        #expect(unreachable.status == 2)
        #expect(unreachable.stderr.contains("Connection refused"), "\(unreachable.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: never)
                && !FileManager.default.fileExists(atPath: never + ".journal")
        )
        let missing = try pki.run(base + ["--tokens", folder.path("no-such-file.txt"), "--results", never])
        #expect(missing.status == 2 && missing.stderr.contains("does not exist"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: never))
    }
}

/// SplitMix64: the same tokens every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    /// `count` device tokens (64 hex digits), the same for the same seed.
    static func tokens(_ count: Int, seed: UInt64) -> [String] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in (0..<4).map { _ in String(format: "%016llx", generator.next()) }.joined() }
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
