import Foundation
import TestSupport
import Testing

/// A failure is rendered once: the same code, message and hint on standard error and, under
/// `--json`, in exactly one error document on standard output.
struct ErrorReportTests {
    /// Standard output holds one JSON document, the error, and nothing else.
    static func onlyError(_ result: CLI.Result) throws -> [String: Any] {
        #expect(result.stdout.components(separatedBy: "\"schema_version\"").count == 2, "\(result.stdout)")
        let document = try JSONContractTests.json(result.stdout)
        #expect(Set(document.keys) == ["schema_version", "error"], "\(document)")
        #expect(document["schema_version"] as? Int == 1)
        return try #require(document["error"] as? [String: Any])
    }

    @Test func theCommandLinesOwnFailureIsOneErrorDocument() throws {
        let store = try StoreCommandTests.Store()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: true)
        let result = try store.run(["check", "--json"])
        try JSONContractTests.expectFailure(result, status: 2, code: "failed")
        let error = try Self.onlyError(result)
        // Its own words, not "standard error says why", and the same on standard error.
        let message = try #require(error["message"] as? String)
        #expect(message.hasSuffix("is empty: nothing to check."), "\(message)")
        let hint = try #require(error["hint"] as? String)
        #expect(result.stderr == "error: \(message)\n  hint: \(hint)\n", "\(result.stderr)")
    }

    @Test func aBulkRunErrorIsOneErrorDocumentWithTheCommandLinesHint() throws {
        let folder = try TemporaryFolder()
        let tokens = folder.path("tokens.txt")
        try String(repeating: "ab", count: 32).write(toFile: tokens, atomically: true, encoding: .utf8)
        let results = folder.path("sent.jsonl")
        try "".write(toFile: results, atomically: true, encoding: .utf8)
        let result = try CLI.run(
            [
                "send", CLI.cert("p12/openssl3-default.p12"), "--password-env", "P", "--environment", "sandbox",
                "--gateway", "127.0.0.1:1", "--ca", CLI.cert("ca/gateway-test-ca.pem"),
                "--tokens", tokens, "--results", results, "--alert", "x", "--json",
            ],
            environment: ["P": "apnsctl-test"]
        )
        try JSONContractTests.expectFailure(result, status: 1, code: "results_exist")
        let error = try Self.onlyError(result)
        #expect(error["message"] as? String == "\(results): The results file already exists.")
        // The library says what to do in words; the command line names its option.
        #expect(error["hint"] as? String == "Continue that run with --resume, or choose another results file.")
        #expect(
            result.stderr.contains(
                "error: \(results): The results file already exists.\n  hint: Continue that run with --resume"
            ),
            "\(result.stderr)"
        )
    }
}
