import Foundation
import TestSupport
import Testing

/// A token key Apple scoped to several apps, as `check --format prometheus` publishes it: one
/// series per app it serves, so that each app's dashboards and alerts see the key, and a problem
/// with it is each app's problem.
struct MonitoringTokenKeyTests {
    static let apps = ["com.acme.app3", "com.acme.app4"]

    /// The `app` label of each sample named `name`, sorted.
    static func apps(_ families: [String: Monitoring.Family], _ name: String) -> [String] {
        Monitoring.samples(families, name).compactMap { $0.labels["app"] }.sorted()
    }

    /// promtool's own reading of the text: it parses and lints it as Prometheus would.
    static func promtoolAccepts(_ text: String) throws {
        let checked = try CLI.runProgram("promtool", ["check", "metrics"], stdin: text)
        #expect(checked.status == 0, "promtool check metrics: \(checked.stdout)\(checked.stderr)")
    }

    @Test func aKeyForTwoAppsIsPublishedUnderBothAndItsProblemIsBoths() throws {
        let store = try StoreCommandTests.Store()
        try store.run([
            "import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345", "--topic", Self.apps[0],
            "--topic", Self.apps[1], "--environment", "both", "--alias", "acme-key",
        ]).succeeded()

        let skipped = try store.run(["check", "--skip-secrets", "--format", "prometheus"])
        #expect(skipped.status == 0, "\(skipped.stderr)")
        try Self.promtoolAccepts(skipped.stdout)
        let families = try Monitoring.parse(skipped.stdout)
        let info = Monitoring.samples(families, "apnsctl_token_key_info")
        #expect(info.map { $0.labels["app"] ?? "" }.sorted() == Self.apps, "\(info.map(\.labels))")
        #expect(info.allSatisfy { $0.labels["scope"] == "topics" && $0.labels["key_id"] == "ABC123DEFG" })
        let help = try #require(families["apnsctl_token_key_info"]?.help)
        #expect(help.contains("one series per app") && !help.contains("the app label's"), "\(help)")
        for name in ["apnsctl_credential_problem", "apnsctl_credential_warning", "apnsctl_credential_check_error"] {
            #expect(Self.apps(families, name) == Self.apps, "\(name)")
            #expect(Monitoring.samples(families, name).allSatisfy { $0.value == 0 }, "\(name)")
        }
        let ready = Monitoring.samples(families, "apnsctl_app_ready").filter { $0.value == 1 }
        #expect(Set(ready.compactMap { $0.labels["app"] }) == Set(Self.apps), "\(ready.map(\.labels))")

        // The exporter publishes the same series.
        let exporter = try ExporterProcess(store.folder, store: store.path, arguments: ["--skip-secrets"])
        let scraped = try exporter.get("/metrics")
        #expect(scraped.status == 200)
        try Self.promtoolAccepts(scraped.body)
        let exported = try Monitoring.parse(scraped.body)
        for name in ["apnsctl_token_key_info", "apnsctl_credential_problem", "apnsctl_credential_check_error"] {
            #expect(Self.apps(exported, name) == Self.apps, "exporter: \(name)")
        }
        #expect(exporter.stop() == 0)

        // The key's secret removed behind apnsctl's back: a problem of the key, under both apps.
        let cleared = try StoreCommandTests.secretTool([
            "clear", "application", "apnsctl", "store", store.path, "alias", "acme-key",
        ])
        #expect(cleared.status == 0, "\(cleared.stderr)")
        let checked = try store.run(["check", "--format", "prometheus"])
        try Self.promtoolAccepts(checked.stdout)
        let missing = try Monitoring.parse(checked.stdout)
        let problems = Monitoring.samples(missing, "apnsctl_credential_problem")
        #expect(problems.map { $0.labels["app"] ?? "" }.sorted() == Self.apps, "\(problems.map(\.labels))")
        #expect(problems.allSatisfy { $0.value == 1 }, "\(problems.map(\.value))")
        let findings = Monitoring.samples(missing, "apnsctl_credential_findings").filter {
            $0.labels["finding"] == "secret_missing"
        }
        #expect(findings.map { $0.labels["app"] ?? "" }.sorted() == Self.apps, "\(findings.map(\.labels))")
        let notReady = Monitoring.samples(missing, "apnsctl_app_ready").filter { $0.value == 0 }
        #expect(Set(notReady.compactMap { $0.labels["app"] }) == Set(Self.apps), "\(notReady.map(\.labels))")
    }
}
