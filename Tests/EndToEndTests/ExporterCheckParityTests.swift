import Foundation
import PushStore
import TestSupport
import Testing

/// The exporter's /metrics and `check --format prometheus` are one library call: the same
/// series for the same store, its orphaned secret included.
@Suite(.needsPrivateSecretService)
struct ExporterCheckParityTests {
    /// Every sample but the check's own timestamp, as comparable lines.
    static func lines(_ families: [String: Monitoring.Family]) -> Set<String> {
        var lines = Set<String>()
        for family in families.values {
            for (name, samples) in family.samples where name != "apnsctl_check_timestamp_seconds" {
                for sample in samples {
                    let labels = sample.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                    lines.insert("\(name){\(labels.joined(separator: ","))} \(sample.value)")
                }
            }
        }
        return lines
    }

    @Test func theExporterServesWhatCheckWrites() async throws {
        let folder = try TemporaryFolder()
        let store = try Monitoring.store(
            in: folder,
            [
                ("shop", "com.example.shop", 400, [.sandbox, .production]),
                ("soon", "com.example.soon", 10, [.sandbox, .production]),
                ("devonly", "com.example.dev", 40, [.sandbox]),
            ]
        )
        // A secret of this store that no entry names: both report it.
        let library = CredentialStore(root: URL(fileURLWithPath: store))
        try await library.secrets.store(
            SecretBytes("not a key"),
            for: SecretItem(store: library.path, alias: "gone", kind: .tokenKey, identifier: "GONE000001")
        )

        let checked = try CLI.run(["check", "--format", "prometheus", "--store", store])
        #expect(checked.status == 0, "\(checked.stderr)")
        let written = try Monitoring.parse(checked.stdout)

        let exporter = try ExporterProcess(folder, store: store, arguments: [])
        let scrape = try exporter.get("/metrics")
        #expect(scrape.status == 200)
        let served = try Monitoring.parse(scrape.body)
        #expect(exporter.stop() == 0)

        #expect(Self.lines(served) == Self.lines(written))
        let problems = Monitoring.samples(served, "apnsctl_credential_problem")
        #expect(problems.contains { $0.labels["credential"] == "gone (orphaned secret)" && $0.value == 1 })
        #expect(Monitoring.samples(served, "apnsctl_check_credentials").first?.value == 4)
        let ready = Monitoring.samples(served, "apnsctl_app_ready")
        #expect(
            ready.contains { $0.labels == ["app": "com.example.shop", "environment": "production"] && $0.value == 1 }
        )
    }
}
