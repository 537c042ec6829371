import Foundation
import TestSupport
import Testing

/// The printed resume command, built from what the run recorded, pasted into a shell as printed:
/// paths with spaces, quotes and `$`, and an alert text that starts with `-`, still name the same
/// files and the same notification, so the resume is accepted and every token is sent once.
@Suite(.serialized)
struct BulkResumeCommandTests {
    static func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    @Test func theCommandPrintedAfterACredentialStopRunsAsPrintedWithOddPathsAndText() throws {
        let pki = try BulkSendTests.pki.get()
        let folder = try TemporaryFolder()
        let name = "odd-\(UUID().uuidString.prefix(8))"
        let production = try GatewayProcess(
            pki.folder,
            name: name,
            arguments: ["--environment", "production", "--client-ca", pki.clientCA],
            binary: CLI.throughputBinary
        )
        let (tokens, _, made) = try BulkSendTests.makeTokens(1_500, seed: 61, in: folder)
        try FileManager.default.createDirectory(atPath: folder.path("odd dir"), withIntermediateDirectories: true)
        let tokenFile = "odd dir/it's a \"list\" $(x).txt"
        try FileManager.default.moveItem(atPath: made, toPath: folder.path(tokenFile))
        let resultsFile = "out $HOME 'r'.jsonl"
        let alert = "-50% today: \"it's\" `date` ✓"
        let words =
            [
                CLI.throughputBinary, "send", pki.identity("sandbox"), "--environment", "sandbox", "--alert=" + alert,
                "--tokens", tokenFile, "--password-env", "MINT", "--results", resultsFile,
            ] + production.connection
        let stopped = try BulkSendTests.runInShell(words.map(Self.quoted).joined(separator: " "), in: folder)
        #expect(stopped.status == 2, "exit \(stopped.status): \(stopped.stderr)")
        let printed = try #require(
            BulkSendTests.resumeCommand(in: stopped.stderr),
            "no resume command: \(stopped.stderr)"
        )
        #expect(stopped.stderr.contains("in place of"), "the credential to change is named: \(stopped.stderr)")
        let header =
            try String(contentsOfFile: folder.path(resultsFile), encoding: .utf8)
            .split(separator: "\n").first.map(String.init) ?? ""
        #expect(header.contains(#""version":5"#) && header.contains(#""password-env":["MINT"]"#), "\(header)")
        #expect(!header.contains(GatewayCommandTests.password), "no secret in the header")
        production.stop()
        try? FileManager.default.removeItem(atPath: pki.folder.path("\(name).port"))
        let sandbox = try GatewayProcess(
            pki.folder,
            name: name,
            arguments: [
                "--environment", "sandbox", "--client-ca", pki.clientCA, "--port", String(production.port), "--force",
            ],
            binary: CLI.throughputBinary
        )

        let resumed = try BulkSendTests.runInShell(printed, in: folder)
        #expect(resumed.status == 0, "exit \(resumed.status): \(printed)\n\(resumed.stderr)")
        let results = try BulkStopAndResumeTests.results(folder.path(resultsFile))
        try BulkOneRunTests.expectEachTokenOnce(tokens, results: results, gateway: sandbox)
        let payloads = try sandbox.deliveries().compactMap { $0["payload"] as? [String: Any] }.map { "\($0)" }
        #expect(payloads.count == Set(tokens).count)
        #expect(payloads.allSatisfy { $0.contains("-50% today") }, "the same alert text: \(payloads.prefix(1))")
    }

    /// A results file whose header the version before wrote (version 3, its `command` a fixed set
    /// of keys) still resumes: the lines it has no result for are sent, and only those.
    @Test func aResultsFileOfTheVersionBeforeStillResumes() throws {
        let bulk = try BulkSetting(tokens: 200, seed: 73, results: "r.jsonl")
        let (pki, tokens, tokenFile, resultsFile) = (bulk.pki, bulk.tokens, bulk.tokenFile, bulk.resultsFile)
        let first = try bulk.run(["--results", resultsFile])
        #expect(first.status == 0, "exit \(first.status): \(first.stderr)")
        // The header as the version before wrote it, and half the results gone with a journal
        // that holds nothing in flight: a run stopped between two groups.
        let lines = try String(contentsOfFile: resultsFile, encoding: .utf8).split(separator: "\n").map(String.init)
        var line = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        var header = try #require(line["run"] as? [String: Any])
        header["version"] = 3
        header["command"] = [
            "credential": pki.identity("sandbox"), "environment": "sandbox", "password_env": "MINT",
            "payload": ["alert": "bulk"], "results": resultsFile, "tokens": tokenFile, "connections": 2,
        ]
        line["run"] = header
        let old = String(
            decoding: try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]),
            as: UTF8.self
        )
        try ([old] + lines[1...100]).map { $0 + "\n" }.joined().write(
            toFile: resultsFile,
            atomically: true,
            encoding: .utf8
        )
        try Data().write(to: URL(fileURLWithPath: resultsFile + ".journal"))
        let kept = Set(try BulkSendTests.results(resultsFile).compactMap { $0["token"] as? String })
        #expect(kept.count == 100)

        let resumed = try bulk.run(["--resume", resultsFile])
        #expect(resumed.status == 0, "exit \(resumed.status): \(resumed.stderr)")
        let results = try BulkSendTests.results(resultsFile)
        #expect(results.count == 200 && Set(results.compactMap { $0["token"] as? String }) == Set(tokens))
        let counts = try BulkOneRunTests.delivered(bulk.gateway)
        #expect(
            tokens.allSatisfy { counts[$0] == (kept.contains($0) ? 1 : 2) },
            "only the lines without a result again"
        )
    }
}
