import Foundation
import TestSupport
import Testing

/// Results on a small tmpfs that fills mid-run: the run stops with exit 2, the stop message's
/// counts match the gateway's record, and once space is freed the printed resume delivers
/// every token, each shown once.
@Suite(.serialized)
struct BulkDiskFullTests {
    /// The first number before `word` in `text` ("1,234 accepted" → 1234).
    static func number(before word: String, in text: String) -> Int? {
        guard let range = text.range(of: " " + word) else { return nil }
        let digits = text[..<range.lowerBound].reversed().prefix { $0.isNumber || $0 == "," }
        return Int(String(digits.reversed()).replacingOccurrences(of: ",", with: ""))
    }

    @Test func aFullDiskStopsTheRunTrulyAndTheResumeSendsEveryTokenOnce() throws {
        let folder = try TemporaryFolder()
        let small = folder.path("small")
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        let mounted = try CLI.runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=700k", "tmpfs", small])
        guard mounted.status == 0 else {
            // Only where mounting is impossible (not root, no CAP_SYS_ADMIN): said, not hidden.
            print(
                "skipped: a tmpfs cannot be mounted here (\(mounted.stderr.trimmingCharacters(in: .whitespacesAndNewlines)))"
            )
            return
        }
        defer { _ = try? CLI.runProgram("/bin/umount", ["-l", small]) }
        let bulk = try BulkSetting(gateway: ["--max-concurrent-streams", "50"], tokens: 8_000, seed: 61)
        let (gateway, tokens) = (bulk.gateway, bulk.tokens)
        let resultsFile = small + "/results.jsonl"

        let full = try bulk.run(["--results", resultsFile])
        #expect(full.status == 2, "exit \(full.status): \(full.stderr)")
        #expect(full.stderr.contains("no space left"), "\(full.stderr)")
        let accepted = Self.number(before: "accepted", in: full.stderr)
        let record = try gateway.deliveries().count
        #expect(accepted == record, "the stop says \(accepted ?? -1) accepted; the gateway recorded \(record)")
        let written = Self.number(before: "results written", in: full.stderr)
        let inFile = try BulkStopAndResumeTests.results(resultsFile).count
        #expect(written == inFile, "the stop says \(written ?? -1) results written; the file has \(inFile)")
        #expect(record < tokens.count, "the disk filled before the end")

        let grown = try CLI.runProgram("/bin/mount", ["-o", "remount,size=50m", small])
        #expect(grown.status == 0, "\(grown.stderr)")
        let resumed = try bulk.run(["--resume", resultsFile])
        #expect([0, 1].contains(resumed.status), "exit \(resumed.status): \(resumed.stderr)")
        let results = try BulkStopAndResumeTests.results(resultsFile)
        try BulkOneRunTests.expectEachTokenOnce(tokens, results: results, gateway: gateway)
        // Every send of the first run was answered (the gateway answers all), so the resume
        // sends the rest, and again, with the same apns-id and collapse ID, exactly the lines
        // whose results the full disk kept from the file (the journal cannot tell them from
        // lines in flight): each of those reached the gateway twice, and is shown once.
        let resent = results.filter { $0["uncertain_because"] as? String == "outcome_unknown" }.count
        #expect(try gateway.deliveries().count == tokens.count + resent)
    }
}
