import Foundation
import TestSupport
import Testing

/// Exit codes, JSON failures, day counts and help text, as the README promises them everywhere.
struct OutputContractTests {
    @Test func pastDayCountsRoundTowardZero() throws {
        // certs/identities/expired.pem expires 2026-10-18T03:08:01Z: two days and four seconds later.
        let result = try CLI.run([
            "check", CLI.cert("identities/expired.pem"), "--at", "2026-10-20T03:08:05Z", "--json",
        ]).exited(1)
        let report = try JSONContractTests.json(result.stdout)
        let credential = try #require((report["credentials"] as? [[String: Any]])?.first)
        #expect(credential["days_left"] as? Int == -2)
        #expect(result.stdout.contains("Expired 2 days ago"))
    }

    @Test func conflictingOutputOptionsAreAUsageError() throws {
        let result = try CLI.run(["check", "--json", "--format", "prometheus"])
        try JSONContractTests.expectFailure(result, status: 64, code: "usage")
    }

    @Test func aHandshakeFailureIsATopLevelError() throws {
        let result = try CLI.run(
            [
                "handshake", CLI.cert("p12/openssl3-default.p12"), "--password-env", "P", "--gateway", "127.0.0.1:1",
                "--ca", CLI.cert("ca/gateway-test-ca.pem"), "--environment", "sandbox", "--json",
            ],
            environment: ["P": "apnsctl-test"]
        ).exited(2)
        try JSONContractTests.expectValid("handshake", result)
        let error = try #require(try JSONContractTests.json(result.stdout)["error"] as? [String: Any])
        #expect(error["code"] as? String == "connection_refused")
    }

    @Test func requestHelpGivesTheCommonNameDefaultOnce() throws {
        let help = try CLI.run(["request", "--help"])
        #expect(help.stdout.components(separatedBy: "apnsctl push key").count - 1 == 1, "\(help.stdout)")
    }
}
