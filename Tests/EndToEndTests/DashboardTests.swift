import Foundation
import LocalGateway
import TestSupport
import Testing

/// docs/monitoring/apnsctl-dashboard.json, Grafana's JSON model as an export has it, and every
/// panel's query run by `promtool query instant` against a real Prometheus (Debian's) scraping
/// the exporter and its probes: each returns data for a store with what the panels show (a
/// certificate, one for sandbox only, one expiring, one whose secret is gone, a token key).
@Suite(.needsPrivateSecretService)
struct DashboardTests {
    static let dashboard = CLI.packageRoot.appendingPathComponent("docs/monitoring/apnsctl-dashboard.json").path

    /// The dashboard's panels, rows left out, each with its title and its queries.
    static func panels() throws -> [(title: String, queries: [String])] {
        let data = try Data(contentsOf: URL(fileURLWithPath: dashboard))
        let model = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        // Importable: the data source is an input, as Grafana's export with "share externally" writes it.
        let inputs = try #require(model["__inputs"] as? [[String: Any]])
        #expect(
            inputs.contains { $0["name"] as? String == "DS_PROMETHEUS" && $0["pluginId"] as? String == "prometheus" }
        )
        #expect((model["schemaVersion"] as? Int ?? 0) >= 36)
        #expect(model["uid"] as? String == "apnsctl-apns")
        let panels = try #require(model["panels"] as? [[String: Any]])
        let ids = panels.compactMap { $0["id"] as? Int }
        #expect(Set(ids).count == panels.count, "every panel has its own id")
        var found: [(String, [String])] = []
        for panel in panels where panel["type"] as? String != "row" {
            let title = panel["title"] as? String ?? ""
            let source = panel["datasource"] as? [String: String]
            #expect(source?["uid"] == "${DS_PROMETHEUS}", "\(title): the imported data source")
            let targets = try #require(panel["targets"] as? [[String: Any]], "\(title) has queries")
            let queries = targets.compactMap { $0["expr"] as? String }
            #expect(!queries.isEmpty && queries.count == targets.count, "\(title)")
            #expect(queries.allSatisfy { !$0.contains("$") }, "\(title): no variable, so the query runs as written")
            found.append((title, queries))
        }
        return found
    }

    @Test func everyPanelsQueryReturnsDataFromARealPrometheus() async throws {
        let panels = try Self.panels()
        let titles = Set(panels.map(\.title))
        for wanted in [
            "Apps ready per environment", "Days left per app and credential", "Probe phases",
            "Auth reason of the last failed probes", "Problems by code",
        ] {
            #expect(titles.contains(wanted), "a panel \(wanted)")
        }

        let folder = try TemporaryFolder()
        let store = try Monitoring.store(
            in: folder,
            [
                ("myapp", "com.example.app", 40, [.sandbox, .production]),
                ("devonly", "com.example.dev", 40, [.sandbox]),
                ("soon", "com.example.soon", 10, [.sandbox, .production]),
                ("gone", "com.example.gone", 300, [.sandbox, .production]),
            ]
        )
        let key = try CLI.run([
            "import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--store", store, "--alias", "pushkey", "--team-id",
            "ABCDE12345", "--topic", "com.example.app", "--environment", "both",
        ])
        try #require(key.status == 0, "\(key.stderr)")
        // A secret removed behind apnsctl's back: a problem for the check, a setup error for a probe.
        let cleared = try StoreCommandTests.secretTool([
            "clear", "application", "apnsctl", "store", store, "alias", "gone",
        ])
        try #require(cleared.status == 0, "\(cleared.stderr)")

        // The gateway knows the token key as one Apple restricted to sandbox, while the store
        // records both environments: its production probe connects, and APNs refuses it with a
        // reason for the auth panel. (devonly's production probe is refused before connecting:
        // the store says it serves sandbox only.)
        let gateway = try await RunningGateway.start(.production) {
            var restricted = Fixtures.tokenKey
            restricted.environment = .sandbox
            $0.tokenKeys = [restricted]
        }
        defer { Task { try? await gateway.gateway.stop() } }
        let exporter = try ExporterProcess(
            folder,
            store: store,
            arguments: ["--gateway", "127.0.0.1:\(gateway.port)", "--ca", gateway.caFile]
        )
        // Probes made before Prometheus scrapes, so that their series are there at its first scrape.
        let targets = ["myapp", "devonly", "gone", "pushkey"]
        for credential in targets {
            #expect(try exporter.get("/probe?credential=\(credential)&environment=production").status == 200)
        }

        let prometheusPort = try unusedLoopbackPort()
        let config = folder.path("prometheus.yml")
        // The probes as docs/monitoring.md configures them: one target per credential and
        // environment, relabelled into /probe's parameters and kept as labels.
        try """
        global:
          scrape_interval: 1s
          evaluation_interval: 1s
        scrape_configs:
          - job_name: apnsctl
            static_configs: [{ targets: ["127.0.0.1:\(exporter.port)"] }]
          - job_name: apns-probe
            metrics_path: /probe
            scrape_interval: 5s
            scrape_timeout: 5s
            static_configs:
              - targets: [\(targets.map { "\"\($0)/production\"" }.joined(separator: ", "))]
            relabel_configs:
              - { source_labels: [__address__], regex: "(.+)/(.+)", target_label: __param_credential, replacement: "$1" }
              - { source_labels: [__address__], regex: "(.+)/(.+)", target_label: __param_environment, replacement: "$2" }
              - { source_labels: [__param_credential], target_label: credential }
              - { source_labels: [__param_environment], target_label: environment }
              - { source_labels: [__address__], target_label: instance }
              - { target_label: __address__, replacement: "127.0.0.1:\(exporter.port)" }
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let prometheus = try PrometheusServerTests.Server(
            "/usr/bin/prometheus",
            [
                "--config.file=\(config)", "--storage.tsdb.path=\(folder.path("tsdb"))",
                "--web.listen-address=127.0.0.1:\(prometheusPort)",
            ],
            port: prometheusPort,
            log: folder.path("prometheus.log")
        )
        try Monitoring.waitUntilServing("http://127.0.0.1:\(prometheusPort)/-/ready", process: prometheus.process)
        // Every probe target scraped at least once.
        let scraped = try PrometheusServerTests.query(prometheusPort, "up{job=\"apns-probe\"} == 1") {
            $0.count == targets.count
        }
        #expect(scraped.count == targets.count, "\(scraped)")

        for (title, queries) in panels {
            for query in queries {
                let rows = try Self.promtool(prometheusPort, query)
                #expect(!rows.isEmpty, "\(title): \(query) returned nothing")
            }
        }

        // What the panels show is what the store and the probes hold.
        let failed = try Self.promtool(prometheusPort, panels.first { $0.title.hasPrefix("Auth reason") }!.queries[0])
        #expect(failed.contains { $0.contains("BadEnvironmentKeyInToken") && $0.contains("pushkey") }, "\(failed)")
        let errors = try Self.promtool(prometheusPort, panels.first { $0.title.hasPrefix("Probe errors") }!.queries[0])
        #expect(errors.contains { $0.contains("gone") && $0.contains("phase=\"setup\"") }, "\(errors)")
        #expect(errors.contains { $0.contains("devonly") && $0.contains("environment_mismatch") }, "\(errors)")
        let problems = try Self.promtool(prometheusPort, panels.first { $0.title == "Problems by code" }!.queries[0])
        #expect(problems.contains { $0.contains("credential=\"gone\"") }, "\(problems)")
        let days = try Self.promtool(prometheusPort, panels.first { $0.title.hasPrefix("Days left") }!.queries[0])
        #expect(days.contains { $0.contains("credential=\"soon\"") && $0.contains("=> 9.") }, "\(days)")
        let phases = try Self.promtool(prometheusPort, panels.first { $0.title == "Probe phases" }!.queries[0])
        #expect(
            Set(["resolve", "connect", "tls", "processing"]).allSatisfy { phase in
                phases.contains { $0.contains("phase=\"\(phase)\"") }
            },
            "\(phases)"
        )
        #expect(exporter.stop() == 0)
    }

    /// `promtool query instant URL EXPR`, asked until it prints a result (Prometheus fills its
    /// series scrape by scrape; bounded): the result's lines, `{labels} => value @[time]`.
    static func promtool(_ port: Int, _ query: String) throws -> [String] {
        var lines: [String] = []
        _ = try waitUntil {
            let result = try CLI.runProgram(
                "/usr/bin/promtool",
                ["query", "instant", "http://127.0.0.1:\(port)", query],
                timeout: 30
            )
            try #require(result.status == 0, "promtool refused \(query): \(result.stderr)")
            lines = result.stdout.split(separator: "\n").map(String.init).filter { $0.contains("=>") }
            return !lines.isEmpty
        }
        return lines
    }
}
