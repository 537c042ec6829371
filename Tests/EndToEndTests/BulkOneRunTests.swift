import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A results file belongs to one run at a time, and a resume matches by token: concurrent
/// resumes, a resume during the run, a token file whose lines moved, duplicates, a BOM, a
/// results file deleted mid-run. The real binary against `apnsctl gateway serve`, whose record
/// of deliveries is the judge.
@Suite(.serialized)
struct BulkOneRunTests {
    static func arguments(_ pki: TestPKI.Identities, _ gateway: GatewayProcess, tokens: String) -> [String] {
        [
            "send", pki.identity("sandbox"), "--environment", "sandbox", "--alert", "bulk", "--tokens", tokens,
            "--password-env", "MINT",
        ] + gateway.connection
    }

    /// Deliveries per device token.
    static func delivered(_ gateway: GatewayProcess) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for record in try gateway.deliveries() { counts[record["device_token"] as? String ?? "", default: 0] += 1 }
        return counts
    }

    /// Every token has exactly one result; none was shown twice (a token that reached the
    /// gateway more than once, a resume sending again what a killed run had in flight, got the
    /// same apns-id and collapse ID each time); every token whose result is not
    /// `outcome_unknown` reached it.
    static func expectEachTokenOnce(_ tokens: [String], results: [[String: Any]], gateway: GatewayProcess) throws {
        let counts = try delivered(gateway)
        let shownTwice = try BulkFaultTests.shown(gateway).filter { $0.value > 1 }
        #expect(shownTwice.isEmpty, "\(shownTwice.count) tokens shown more than once")
        var resultsByToken: [String: Int] = [:]
        for result in results { resultsByToken[result["token"] as? String ?? "", default: 0] += 1 }
        let withoutResult = tokens.filter { resultsByToken[$0] == nil }
        #expect(withoutResult.isEmpty, "\(withoutResult.count) tokens have no result")
        #expect(resultsByToken.values.allSatisfy { $0 == 1 }, "a token has more than one result")
        let unknown = Set(results.filter { errorCode($0) == "outcome_unknown" }.compactMap { $0["token"] as? String })
        let neverSent = tokens.filter { !unknown.contains($0) && counts[$0] == nil }
        #expect(neverSent.isEmpty, "\(neverSent.count) tokens never delivered, e.g. \(neverSent.prefix(3))")
    }

    @Test func aSecondRunOrResumeOfTheSameResultsRefusesAndNamesTheProcess() throws {
        let bulk = try BulkSetting(
            gateway: ["--latency-ms", "20", "--max-concurrent-streams", "10"],
            tokens: 4_000,
            seed: 41
        )
        let (gateway, resultsFile, arguments) = (bulk.gateway, bulk.resultsFile, bulk.arguments)
        let original = try BulkSendTests.startSend(
            arguments + ["--results", resultsFile],
            stderr: FileHandle.nullDevice
        )
        BulkSendTests.waitForResults(resultsFile, atLeast: 300)
        // A resume while the run goes on.
        let during = try bulk.run(["--resume", resultsFile], timeout: 60)
        #expect(during.status == 2, "exit \(during.status): \(during.stderr)")
        #expect(during.stderr.contains("process \(original.processIdentifier)"), "\(during.stderr)")
        kill(original.processIdentifier, SIGKILL)
        original.waitUntilExit()

        // Two resumes of the killed run at once: one takes the run, the other refuses.
        let errors = [Pipe(), Pipe()]
        let resumes = try errors.map { try BulkSendTests.startSend(arguments + ["--resume", resultsFile], stderr: $0) }
        let stderrs = errors.map { String(decoding: $0.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        for process in resumes { process.waitUntilExit() }
        let statuses = resumes.map(\.terminationStatus)
        let refused = statuses.enumerated().filter { $0.element == 2 }.map(\.offset)
        #expect(refused.count == 1, "exits \(statuses): \(stderrs)")
        if let loser = refused.first {
            let winner = resumes[1 - loser].processIdentifier
            #expect(stderrs[loser].contains("process \(winner)"), "\(stderrs[loser])")
            // 1: what the kill left in flight is reported outcome_unknown.
            #expect([0, 1].contains(statuses[1 - loser]), "\(stderrs[1 - loser])")
        }
        try Self.expectEachTokenOnce(
            bulk.tokens,
            results: BulkStopAndResumeTests.results(resultsFile),
            gateway: gateway
        )
        #expect(!FileManager.default.fileExists(atPath: resultsFile + ".journal"), "the complete run keeps no journal")
    }

    @Test func aResumeWithTheUnansweredLinesMovedSendsEachTokenOnce() throws {
        let bulk = try BulkSetting(
            gateway: ["--latency-ms", "5", "--max-concurrent-streams", "40"],
            tokens: 4_000,
            seed: 42
        )
        let (pki, gateway, tokens, resultsFile) = (bulk.pki, bulk.gateway, bulk.tokens, bulk.resultsFile)
        try bulk.killMidRun(after: 1_000)
        let answered = Set(try BulkStopAndResumeTests.results(resultsFile).compactMap { $0["token"] as? String })
        // The lines without a result (those in flight among them) go first, reversed, and a
        // few new tokens come in between: every line number changes.
        let newTokens = SeededGenerator.tokens(50, seed: 4242)
        let unanswered = tokens.filter { !answered.contains($0) }.reversed()
        let reordered = newTokens.prefix(25) + unanswered + newTokens.suffix(25) + tokens.filter(answered.contains)
        let moved = bulk.folder.path("moved.txt")
        try (reordered.joined(separator: "\n") + "\n").write(toFile: moved, atomically: true, encoding: .utf8)

        let resumed = try BulkSendTests.run(
            Self.arguments(pki, gateway, tokens: moved) + ["--resume", resultsFile],
            timeout: 120
        )
        #expect(resumed.status == 0 || resumed.status == 1, "exit \(resumed.status): \(resumed.stderr)")
        let results = try BulkStopAndResumeTests.results(resultsFile)
        try Self.expectEachTokenOnce(tokens + newTokens, results: results, gateway: gateway)
        // Only what was in flight at the kill (at most the 40 streams) may be unknown.
        let unknown = results.filter { errorCode($0) == "outcome_unknown" }
        #expect(unknown.count <= 40, "\(unknown.count) lines reported outcome_unknown")
    }

    @Test func duplicatesAreSentOnceAndABOMIsNotALine() throws {
        let (pki, gateway, _) = try BulkSendTests().gateway([])
        let folder = try TemporaryFolder()
        let (tokens, _, _) = try BulkSendTests.makeTokens(300, seed: 43, in: folder)
        let lines = tokens + tokens.prefix(20).map { $0.uppercased() }
        let file = folder.path("bom.txt")
        try Data([0xEF, 0xBB, 0xBF] + Array((lines.joined(separator: "\n") + "\n").utf8)).write(
            to: URL(fileURLWithPath: file)
        )
        let once = try BulkSendTests.run(
            Self.arguments(pki, gateway, tokens: file) + ["--results", folder.path("a.jsonl")]
        )
        #expect(once.status == 0, "exit \(once.status): \(once.stderr)")
        #expect(once.stderr.contains("duplicates: 20 lines"), "\(once.stderr)")
        let results = try BulkStopAndResumeTests.results(folder.path("a.jsonl"))
        #expect(results.count == 300 && results.allSatisfy { $0["status"] as? Int == 200 })
        #expect(try Self.delivered(gateway).count == 300)
        #expect(try gateway.deliveries().count == 300)

        let all = try BulkSendTests.run(
            Self.arguments(pki, gateway, tokens: file) + ["--results", folder.path("b.jsonl"), "--allow-duplicates"]
        )
        #expect(all.status == 0, "exit \(all.status): \(all.stderr)")
        #expect(try gateway.deliveries().count == 300 + 320)
    }

    @Test func aResultsFileDeletedDuringTheRunFailsTheRun() throws {
        let bulk = try BulkSetting(
            gateway: ["--latency-ms", "20", "--max-concurrent-streams", "10"],
            tokens: 3_000,
            seed: 44,
            results: "deleted.jsonl"
        )
        let errors = Pipe()
        let process = try BulkSendTests.startSend(bulk.arguments + ["--results", bulk.resultsFile], stderr: errors)
        BulkSendTests.waitForResults(bulk.resultsFile, atLeast: 200)
        try FileManager.default.removeItem(atPath: bulk.resultsFile)
        let stderr = BulkSendTests.endOf(process, errors)
        #expect(process.terminationStatus == 2, "\(stderr)")
        #expect(stderr.contains("was deleted or replaced") && !stderr.contains("✓"), "\(stderr)")
        #expect(!FileManager.default.fileExists(atPath: bulk.resultsFile))
    }
}
