import Foundation
import TestSupport
import Testing

/// `apnsctl send --tokens` against stock nginx: a server that answers every request and then
/// resets its stream with RST_STREAM NO_ERROR. Those resets are normal completions; a client
/// that counts them as abuse kills its own connection every few hundred notifications and has
/// to resend what was in flight.
@Suite(.serialized)
struct NginxBulkSendTests {
    static let password = "apnsctl-test"

    @Test func twoHundredThousandNotificationsToNginxGoOverOneConnectionWithNothingUncertain() throws {
        let nginx = try NginxProcess()
        defer { nginx.stop() }
        let folder = try TemporaryFolder()
        let (tokens, lines, tokenFile) = try BulkSendTests.makeTokens(200_000, seed: 12, in: folder)
        let resultsFile = folder.path("results.jsonl")
        // A universal certificate of the test PKI, issued by the CA nginx checks clients against.
        let run = try CLI.runProgram(
            CLI.throughputBinary,
            [
                "send", CLI.cert("p12/3des-only.p12"), "--password-env", "P12_PASSWORD",
                "--tokens", tokenFile, "--results", resultsFile, "--json", "--alert", "hi",
            ]
                + nginx.connection,
            environment: ["P12_PASSWORD": Self.password],
            timeout: 300
        ).succeeded()

        let results = try BulkSendTests.results(resultsFile).filter { $0["line"] != nil }
        #expect(results.count == tokens.count)
        BulkSendTests.expectOneResultPerLine(results, lines: lines)
        let uncertain = results.filter { $0["uncertain"] as? Bool == true }.count
        #expect(uncertain == 0, "\(uncertain) results are uncertain")
        #expect(results.allSatisfy { $0["status"] as? Int == 200 })

        let summary = try #require(run.json()["summary"] as? [String: Any], "\(run.stdout)")
        #expect(summary["connections"] as? Int == 1, "\(summary)")
        #expect(summary["uncertain"] as? Int == 0, "\(summary)")
    }
}
