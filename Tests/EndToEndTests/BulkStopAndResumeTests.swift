import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Bulk runs that stop early (results that cannot be written, a credential the gateway
/// refuses) and are then resumed: every token line ends with one result, and no device gets
/// the notification twice. The real binary against `apnsctl gateway serve`.
@Suite(.serialized)
struct BulkStopAndResumeTests {
    /// Result lines only (a results file may begin with a run header, which has no "line").
    static func results(_ path: String) throws -> [[String: Any]] {
        try BulkSendTests.results(path).filter { $0["line"] != nil }
    }

    /// Checks that no device token and no apns-id reached the gateway more than once.
    static func expectNothingDeliveredTwice(_ gateway: GatewayProcess) throws {
        var tokens: [String: Int] = [:]
        var ids: [String: Int] = [:]
        for record in try gateway.deliveries() {
            tokens[record["device_token"] as? String ?? "", default: 0] += 1
            ids[record["apns_id"] as? String ?? "", default: 0] += 1
        }
        let twiceTokens = tokens.filter { $0.value > 1 }
        let twiceIDs = ids.filter { $0.value > 1 }
        #expect(twiceTokens.isEmpty, "\(twiceTokens.count) devices got the notification more than once")
        #expect(twiceIDs.isEmpty, "\(twiceIDs.count) apns-ids were delivered more than once")
    }

    /// The file-size limit (`ulimit -f`, 1024-byte blocks) stops the results (or journal) from
    /// growing past 200 KiB: the run must stop with exit 2 and say so, not die of SIGXFSZ or go
    /// on as if its results were safe. The resumed run completes the file.
    @Test func resultsThatCannotBeWrittenStopTheRunAndResumeCompletesIt() throws {
        let bulk = try BulkSetting(tokens: 20_000, seed: 21)
        let (lines, resultsFile) = (bulk.lines, bulk.resultsFile)
        let limited = try CLI.runProgram(
            "/bin/bash",
            ["-c", #"ulimit -f 200; exec "$0" "$@""#, CLI.throughputBinary]
                + bulk.arguments + ["--results", resultsFile],
            environment: ["MINT": GatewayCommandTests.password],
            timeout: 300
        )
        #expect(limited.status == 2, "exit \(limited.status): \(limited.stderr)")
        let stderr = limited.stderr.lowercased()
        #expect(
            (stderr.contains("results") || stderr.contains("journal")) && stderr.contains("writ"),
            "stderr does not say the results cannot be written: \(limited.stderr)"
        )
        let written = try String(contentsOfFile: resultsFile, encoding: .utf8)
        #expect(written.utf8.count <= 200 * 1024)
        #expect(written.split(separator: "\n").count < lines.count, "the limit stopped the run before the end")

        let resumed = try bulk.run(["--resume", resultsFile])
        #expect([0, 1].contains(resumed.status), "exit \(resumed.status): \(resumed.stderr)")
        BulkSendTests.expectOneResultPerLine(try Self.results(resultsFile), lines: lines)
        // What the stop left without a written result (answered or in flight: the journal cannot
        // tell) was sent again with its apns-id and collapse ID: delivered twice, shown once.
        try BulkFaultTests.expectShownOnce(bulk)
    }

    /// A run stopped by a credential-wide rejection, and the state it leaves.
    struct StoppedRun {
        let pki: TestPKI.Identities
        let folder: TemporaryFolder
        let gatewayName: String
        let port: Int
        let tokens: [String]
        let lines: [String]
        let resultsFile: String
        let arguments: [String]
    }

    /// A sandbox certificate sent to a gateway playing production: 403 BadCertificateEnvironment
    /// for every token, which would repeat for all of them, so the run stops with exit 2.
    /// Leaves the gateway stopped.
    func stoppedByTheWrongEnvironment(tokens count: Int, seed: UInt64) throws -> StoppedRun {
        let pki = try BulkSendTests.pki.get()
        let folder = try TemporaryFolder()
        let name = "fatal-\(UUID().uuidString.prefix(8))"
        let production = try GatewayProcess(
            pki.folder,
            name: name,
            arguments: ["--environment", "production", "--client-ca", pki.clientCA],
            binary: CLI.throughputBinary
        )
        let (tokens, lines, tokenFile) = try BulkSendTests.makeTokens(count, seed: seed, in: folder)
        let resultsFile = folder.path("results.jsonl")
        let arguments = BulkOneRunTests.arguments(pki, production, tokens: tokenFile)
        let stopped = try BulkSendTests.run(arguments + ["--results", resultsFile], timeout: 120)
        #expect(stopped.status == 2, "exit \(stopped.status): \(stopped.stderr)")
        #expect(stopped.stderr.contains("BadCertificateEnvironment"), "\(stopped.stderr)")
        #expect(try production.deliveries().isEmpty, "the production gateway accepted nothing")
        // What the rejection stopped is not final: those lines are sent again on --resume.
        let final = try Self.results(resultsFile)
        let rejectedAsFinal = final.filter { $0["status"] as? Int == 403 }.compactMap { $0["line"] as? Int }
        #expect(
            rejectedAsFinal.isEmpty,
            "\(rejectedAsFinal.count) lines stopped by the rejection were written as final results, e.g. \(final.filter { $0["status"] as? Int == 403 }.prefix(2))"
        )
        #expect(final.count < tokens.count, "the run stopped early")
        production.stop()
        // The next gateway reuses the name (so --ca names the same file) and writes the port anew.
        try? FileManager.default.removeItem(atPath: pki.folder.path("\(name).port"))
        return StoppedRun(
            pki: pki,
            folder: folder,
            gatewayName: name,
            port: production.port,
            tokens: tokens,
            lines: lines,
            resultsFile: resultsFile,
            arguments: arguments
        )
    }

    /// The cause fixed: the gateway, on the same address, now plays `environment` (the sandbox).
    func fixedGateway(_ run: StoppedRun, environment: String = "sandbox") throws -> GatewayProcess {
        let gateway = try GatewayProcess(
            run.pki.folder,
            name: run.gatewayName,
            // --force: the new gateway's CA replaces the stopped one's, at the path the run was given.
            arguments: [
                "--environment", environment, "--client-ca", run.pki.clientCA, "--port", String(run.port), "--force",
            ],
            binary: CLI.throughputBinary
        )
        #expect(gateway.port == run.port)
        return gateway
    }

    @Test func afterAFatalRejectionResumeDeliversEveryTokenExactlyOnce() throws {
        let run = try stoppedByTheWrongEnvironment(tokens: 3_000, seed: 31)
        let sandbox = try fixedGateway(run)
        let resumed = try BulkSendTests.run(run.arguments + ["--resume", run.resultsFile], timeout: 120)
        #expect(resumed.status == 0, "exit \(resumed.status): \(resumed.stderr)")

        let results = try Self.results(run.resultsFile)
        BulkSendTests.expectOneResultPerLine(results, lines: run.lines)
        let notAccepted = results.filter { $0["status"] as? Int != 200 }.compactMap { $0["line"] as? Int }
        #expect(
            notAccepted.isEmpty,
            "\(notAccepted.count) lines did not end with 200, e.g. lines \(notAccepted.prefix(5))"
        )
        // The gateway's record: every token of the file exactly once, nothing else.
        let delivered = try BulkOneRunTests.delivered(sandbox)
        let missing = Set(run.tokens).subtracting(delivered.keys)
        let extra = Set(delivered.keys).subtracting(run.tokens)
        #expect(
            missing.isEmpty && extra.isEmpty,
            "\(missing.count) tokens of the file never delivered, \(extra.count) delivered that are not in it"
        )
        #expect(
            delivered.values.allSatisfy { $0 == 1 },
            "\(delivered.filter { $0.value > 1 }.count) tokens delivered more than once"
        )
    }

    @Test func aCredentialStopResumesWithAUniversalCertificate() throws {
        let run = try stoppedByTheWrongEnvironment(tokens: 3_000, seed: 33)
        let production = try fixedGateway(run, environment: "production")
        let universal = run.arguments.map { $0 == run.pki.identity("sandbox") ? run.pki.identity("universal") : $0 }
        #expect(universal != run.arguments)
        let resumed = try BulkSendTests.run(universal + ["--resume", run.resultsFile], timeout: 120)
        #expect(resumed.status == 0, "exit \(resumed.status): \(resumed.stderr)")
        #expect(resumed.stderr.contains("another credential"), "\(resumed.stderr)")
        let results = try Self.results(run.resultsFile)
        BulkSendTests.expectOneResultPerLine(results, lines: run.lines)
        let delivered = try BulkOneRunTests.delivered(production)
        let undelivered = Set(run.tokens).subtracting(delivered.keys)
        #expect(undelivered.isEmpty, "\(undelivered.count) tokens of the file not delivered")
        #expect(Set(delivered.keys).isSubset(of: run.tokens))
        #expect(delivered.values.allSatisfy { $0 == 1 }, "no token delivered twice")

        // Another credential is accepted only after a stop the credential caused.
        let again = try BulkSendTests.run(run.arguments + ["--resume", run.resultsFile], timeout: 120)
        #expect(again.status == 64 && again.stderr.contains("the credential"), "\(again.stderr)")
    }

    @Test func resumingWithAnotherAlertIsRefusedAndSendsNothing() throws {
        let run = try stoppedByTheWrongEnvironment(tokens: 3_000, seed: 32)
        let sandbox = try fixedGateway(run)
        let before = try String(contentsOfFile: run.resultsFile, encoding: .utf8)
        let otherAlert = run.arguments.map { $0 == "bulk" ? "another text" : $0 }
        #expect(otherAlert != run.arguments)
        let refused = try BulkSendTests.run(otherAlert + ["--resume", run.resultsFile], timeout: 120)
        #expect(refused.status == 64, "exit \(refused.status): \(refused.stderr)")
        #expect(refused.stderr.lowercased().contains("payload"), "stderr does not name what differs: \(refused.stderr)")
        let sent = try sandbox.deliveries().count
        #expect(sent == 0, "the refused resume sent \(sent) notifications")
        #expect(
            try String(contentsOfFile: run.resultsFile, encoding: .utf8) == before,
            "the refused resume changed the results file"
        )
    }

    /// A run killed mid-way whose journal is then deleted: the resume is refused (nothing sent,
    /// the file unchanged), naming the journal and how many may have been in flight; with
    /// --resume-without-journal it finishes, every token with one result.
    @Test func aResumeWithoutItsJournalIsRefusedUntilTheRiskIsTaken() throws {
        let bulk = try BulkSetting(
            gateway: ["--latency-ms", "3", "--max-concurrent-streams", "50"],
            tokens: 8_000,
            seed: 61
        )
        let (gateway, tokens, resultsFile) = (bulk.gateway, bulk.tokens, bulk.resultsFile)
        try bulk.killMidRun(after: 2_000)
        let firstRun = try Self.results(resultsFile).count
        #expect(firstRun >= 2_000 && firstRun < tokens.count, "killed mid-run: \(firstRun) results")
        #expect(unlink(resultsFile + ".journal") == 0, "the kill left a journal, which is now deleted")
        let before = try Data(contentsOf: URL(fileURLWithPath: resultsFile))
        let deliveredBefore = try gateway.deliveries().count

        let refused = try bulk.run(["--resume", resultsFile], timeout: 120)
        #expect(refused.status == 1, "exit \(refused.status): \(refused.stderr)")
        #expect(refused.stderr.contains("results.jsonl.journal) is missing"), "\(refused.stderr)")
        #expect(refused.stderr.contains("up to 1000 notifications"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--resume-without-journal"), "the hint names the way on: \(refused.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: resultsFile)) == before, "the refusal changed the results")
        #expect(!FileManager.default.fileExists(atPath: resultsFile + ".journal"))
        #expect(try gateway.deliveries().count == deliveredBefore, "the refusal sent nothing")

        let resumed = try bulk.run(["--resume", resultsFile, "--resume-without-journal"])
        #expect(resumed.status == 0, "exit \(resumed.status): \(resumed.stderr)")
        let results = try Self.results(resultsFile)
        BulkSendTests.expectOneResultPerLine(results, lines: bulk.lines)
        #expect(results.count == tokens.count)
        let delivered = try BulkOneRunTests.delivered(gateway)
        #expect(Set(delivered.keys) == Set(tokens), "every token delivered")
        let twice = delivered.values.filter { $0 > 1 }.count
        #expect(twice <= 50, "at most what was in flight (50 streams) is delivered twice: \(twice)")
        let text = try String(contentsOfFile: resultsFile, encoding: .utf8)
        #expect(text.hasSuffix("}}\n") && text.split(separator: "\n").last?.hasPrefix(#"{"end":"#) == true)
    }
}
