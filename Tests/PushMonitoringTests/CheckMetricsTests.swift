import Foundation
import PushChecks
import TestSupport
import Testing

@testable import PushMonitoring

/// The check's series as Prometheus' parser reads them: a credential is published under every
/// app it serves, once each.
struct CheckMetricsTests {
    struct Sample: Equatable {
        var labels: [String: String]
        var value: Double
    }

    /// Each sample of `name` in `text`, as prometheus_client reads it (``MetricsTextTests/parsed(_:)``).
    static func samples(_ text: String, _ name: String) throws -> [Sample] {
        try MetricsTextTests.parsed(text).compactMap { line in
            let prefix = "sample \(name) "
            guard line.hasPrefix(prefix) else { return nil }
            let rest = line.dropFirst(prefix.count)
            guard let split = rest.lastIndex(of: " "), let value = Double(rest[rest.index(after: split)...]) else {
                return nil
            }
            let labels = try JSONDecoder().decode([String: String].self, from: Data(rest[..<split].utf8))
            return Sample(labels: labels, value: value)
        }
    }

    /// A stored token key as the check judges it: `keyPresent` false is a missing secret.
    static func key(_ name: String, topics: [String], keyPresent: Bool = true) -> CheckResult {
        CredentialCheck.tokenKey(
            TokenKeyFacts(
                name: name,
                origin: "store",
                keyID: "ABC123DEFG",
                teamID: "ABCDE12345",
                topics: topics,
                environments: [.sandbox, .production]
            ),
            keyPresent: keyPresent,
            expectations: CheckExpectations()
        )
    }

    @Test func aKeyScopedToTwoAppsHasEverySeriesUnderEach() throws {
        // Its derived topic (.voip) is its first app's, not a third app.
        let key = Self.key("acme-key", topics: ["com.acme.app3", "com.acme.app4", "com.acme.app3.voip"])
        let text = CheckMetrics.render(CheckRun(date: Date(), results: [key], secretsAsked: true))
        let info = try Self.samples(text, "apnsctl_token_key_info")
        #expect(info.map { $0.labels["app"] } == ["com.acme.app3", "com.acme.app4"], "\(info)")
        #expect(info.allSatisfy { $0.labels["scope"] == "topics" && $0.labels["credential"] == "acme-key" })
        for name in ["apnsctl_credential_problem", "apnsctl_credential_warning", "apnsctl_credential_check_error"] {
            let samples = try Self.samples(text, name)
            #expect(samples.map { $0.labels["app"] } == ["com.acme.app3", "com.acme.app4"], "\(name): \(samples)")
            #expect(samples.allSatisfy { $0.value == 0 && $0.labels["kind"] == "token_key" }, "\(name): \(samples)")
        }
        #expect(!text.contains("the app label's"), "the HELP text names the scope as it is published")
        #expect(text.contains("one series per app it serves"))
        // Published once per app: the key secret's own series stay one per credential.
        #expect(try Self.samples(text, "apnsctl_token_key_present").count == 1)
    }

    @Test func aProblemWithASharedKeyIsEachAppsProblem() throws {
        let key = Self.key("acme-key", topics: ["com.acme.app3", "com.acme.app4"], keyPresent: false)
        let run = CheckRun(date: Date(), results: [key], secretsAsked: true)
        let text = CheckMetrics.render(run)
        let problems = try Self.samples(text, "apnsctl_credential_problem")
        #expect(problems.map { $0.labels["app"] } == ["com.acme.app3", "com.acme.app4"], "\(problems)")
        #expect(problems.allSatisfy { $0.value == 1 }, "\(problems)")
        let findings = try Self.samples(text, "apnsctl_credential_findings").filter {
            $0.labels["finding"] == "secret_missing"
        }
        #expect(findings.map { $0.labels["app"] } == ["com.acme.app3", "com.acme.app4"], "\(findings)")
        // Neither app has another credential: both are not ready, in both environments.
        let ready = try Self.samples(text, "apnsctl_app_ready")
        #expect(ready.count == 4 && ready.allSatisfy { $0.value == 0 }, "\(ready)")
    }

    @Test func aKeyOfTheWholeTeamIsOneSeriesWithNoApp() throws {
        let key = Self.key("team-key", topics: [])
        let text = CheckMetrics.render(CheckRun(date: Date(), results: [key], secretsAsked: false))
        let info = try Self.samples(text, "apnsctl_token_key_info")
        #expect(
            info.map(\.labels) == [
                [
                    "credential": "team-key", "key_id": "ABC123DEFG", "team_id": "ABCDE12345", "scope": "team",
                    "app": "",
                    "environment": "both",
                ]
            ]
        )
        #expect(try Self.samples(text, "apnsctl_credential_problem").map { $0.labels["app"] } == [""])
    }
}
