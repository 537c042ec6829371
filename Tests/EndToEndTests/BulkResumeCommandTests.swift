import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

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
        let stopped = try CLI.runProgram(
            "/bin/bash",
            ["-c", "cd \(Self.quoted(folder.path(""))) && " + words.map(Self.quoted).joined(separator: " ")],
            environment: ["MINT": GatewayCommandTests.password],
            timeout: 120
        )
        #expect(stopped.status == 2, "exit \(stopped.status): \(stopped.stderr)")
        let printed = try #require(
            stopped.stderr.split(separator: "\n").first { $0.contains("continue with: ") }.map {
                String($0[$0.range(of: "continue with: ")!.upperBound...])
            },
            "no resume command: \(stopped.stderr)"
        )
        #expect(stopped.stderr.contains("in place of"), "the credential to change is named: \(stopped.stderr)")
        let header =
            try String(contentsOfFile: folder.path(resultsFile), encoding: .utf8)
            .split(separator: "\n").first.map(String.init) ?? ""
        #expect(header.contains(#""version":3"#) && header.contains(#""password_env":"MINT""#), "\(header)")
        #expect(!header.contains(GatewayCommandTests.password), "no secret in the header")
        kill(production.process.processIdentifier, SIGTERM)
        production.process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: pki.folder.path("\(name).port"))
        let sandbox = try GatewayProcess(
            pki.folder,
            name: name,
            arguments: [
                "--environment", "sandbox", "--client-ca", pki.clientCA, "--port", String(production.port), "--force",
            ],
            binary: CLI.throughputBinary
        )

        let resumed = try CLI.runProgram(
            "/bin/bash",
            ["-c", "cd \(Self.quoted(folder.path(""))) && " + printed],
            environment: ["MINT": GatewayCommandTests.password],
            timeout: 120
        )
        #expect(resumed.status == 0, "exit \(resumed.status): \(printed)\n\(resumed.stderr)")
        let results = try BulkStopAndResumeTests.results(folder.path(resultsFile))
        try BulkOneRunTests.expectEachTokenOnce(tokens, results: results, gateway: sandbox)
        let payloads = try sandbox.deliveries().compactMap { $0["payload"] as? [String: Any] }.map { "\($0)" }
        #expect(payloads.count == Set(tokens).count)
        #expect(payloads.allSatisfy { $0.contains("-50% today") }, "the same alert text: \(payloads.prefix(1))")
    }
}
