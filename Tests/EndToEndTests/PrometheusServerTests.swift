import Foundation
import Glibc
import LocalGateway
import TestSupport
import Testing

/// A real Prometheus server (Debian's package) on loopback scrapes node_exporter's textfile
/// collector, `apnsctl exporter`'s /metrics and /probe, and blackbox_exporter probing the same
/// local gateway; its HTTP API then answers for the series dashboards and alerts use.
struct PrometheusServerTests {
    final class Server: @unchecked Sendable {
        let process = Process()
        let port: Int

        init(_ program: String, _ arguments: [String], port: Int, log: String) throws {
            self.port = port
            FileManager.default.createFile(atPath: log, contents: nil)
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            try process.run()
        }

        deinit {
            if process.isRunning {
                kill(process.processIdentifier, SIGTERM)
                process.waitUntilExit()
            }
        }
    }

    /// The query's result vector: labels and value, once Prometheus has it (bounded wait).
    /// Asks until the answer is non-empty and `complete` holds (Prometheus fills in series scrape by scrape).
    static func query(
        _ port: Int,
        _ expression: String,
        until complete: ([([String: String], Double)]) -> Bool = { _ in true }
    ) throws -> [([String: String], Double)] {
        let encoded = expression.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? expression
        var last: [([String: String], Double)] = []
        try waitUntil {
            let answer = try Monitoring.get("http://127.0.0.1:\(port)/api/v1/query?query=\(encoded)")
            if answer.status == 200,
                let json = try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any],
                let data = json["data"] as? [String: Any], let result = data["result"] as? [[String: Any]],
                !result.isEmpty
            {
                last = result.map { entry in
                    let value = (entry["value"] as? [Any])?.last as? String ?? "NaN"
                    return (entry["metric"] as? [String: String] ?? [:], Double(value) ?? .nan)
                }
                if complete(last) { return true }
            }
            return false
        }
        if last.isEmpty { Issue.record("Prometheus never had a result for \(expression)") }
        return last
    }

    @Test func prometheusScrapesTheTextfileTheExporterAndTheProbesUnderTheUsualNames() async throws {
        let folder = try TemporaryFolder()
        let store = try Monitoring.store(in: folder, [("myapp", "com.example.app", 40, [.sandbox, .production])])
        let textfiles = folder.path("textfiles")
        try FileManager.default.createDirectory(atPath: textfiles, withIntermediateDirectories: true)
        try CLI.run([
            "check", "--skip-secrets", "--store", store, "--format", "prometheus", "--output",
            textfiles + "/apnsctl.prom",
        ]).succeeded()

        let gateway = try await RunningGateway.start(.production)
        defer { Task { try? await gateway.gateway.stop() } }
        let exporter = try ExporterProcess(
            folder,
            store: store,
            arguments: ["--gateway", "127.0.0.1:\(gateway.port)", "--ca", gateway.caFile]
        )

        // blackbox_exporter: TLS to the same gateway with the same client certificate.
        let blackboxConfig = folder.path("blackbox.yml")
        try """
        modules:
          apns_tls:
            prober: tcp
            timeout: 5s
            tcp:
              tls: true
              tls_config:
                ca_file: \(gateway.caFile)
                cert_file: \(folder.path("myapp.pem"))
                key_file: \(folder.path("myapp.key"))
        """.write(toFile: blackboxConfig, atomically: true, encoding: .utf8)
        let blackboxPort = try unusedLoopbackPort()
        let blackbox = try Server(
            "/usr/bin/prometheus-blackbox-exporter",
            ["--config.file=\(blackboxConfig)", "--web.listen-address=127.0.0.1:\(blackboxPort)"],
            port: blackboxPort,
            log: folder.path("blackbox.log")
        )
        try Monitoring.waitUntilServing("http://127.0.0.1:\(blackboxPort)/metrics", process: blackbox.process)

        let nodePort = try unusedLoopbackPort()
        let node = try Server(
            "/usr/bin/prometheus-node-exporter",
            [
                "--web.listen-address=127.0.0.1:\(nodePort)", "--collector.disable-defaults", "--collector.textfile",
                "--collector.textfile.directory=\(textfiles)",
            ],
            port: nodePort,
            log: folder.path("node.log")
        )
        try Monitoring.waitUntilServing("http://127.0.0.1:\(nodePort)/metrics", process: node.process)

        // The same names for what both probes measure, read by Prometheus' own parser.
        let target = "127.0.0.1:\(gateway.port)"
        let theirs = try Monitoring.parse(
            try Monitoring.get("http://127.0.0.1:\(blackboxPort)/probe?module=apns_tls&target=\(target)").body
        )
        let ours = try Monitoring.parse(try exporter.get("/probe?credential=myapp&environment=production").body)
        #expect(Monitoring.samples(theirs, "probe_success").first?.value == 1, "blackbox_exporter reached the gateway")
        for name in [
            "probe_success", "probe_duration_seconds", "probe_ssl_earliest_cert_expiry", "probe_tls_version_info",
        ] {
            #expect(theirs[name] != nil && ours[name] != nil, "\(name) in both")
            #expect(theirs[name]?.type == ours[name]?.type, "\(name): the same type")
            #expect(
                Set(Monitoring.samples(theirs, name).flatMap(\.labels.keys))
                    == Set(Monitoring.samples(ours, name).flatMap(\.labels.keys)),
                "\(name): the same label names"
            )
        }
        #expect(
            Monitoring.samples(theirs, "probe_ssl_earliest_cert_expiry").first?.value
                == Monitoring.samples(ours, "probe_ssl_earliest_cert_expiry").first?.value,
            "the same server chain, the same expiry"
        )
        #expect(
            Monitoring.samples(theirs, "probe_tls_version_info").first?.labels
                == Monitoring.samples(ours, "probe_tls_version_info").first?.labels
        )

        let prometheusPort = try unusedLoopbackPort()
        let config = folder.path("prometheus.yml")
        try """
        global:
          scrape_interval: 1s
          evaluation_interval: 1s
        scrape_configs:
          - job_name: node
            static_configs: [{ targets: ["127.0.0.1:\(nodePort)"] }]
          - job_name: apnsctl
            static_configs: [{ targets: ["127.0.0.1:\(exporter.port)"] }]
          - job_name: apns-probe
            scrape_interval: 5s
            scrape_timeout: 5s
            metrics_path: /probe
            params: { credential: [myapp], environment: [production] }
            static_configs: [{ targets: ["127.0.0.1:\(exporter.port)"] }]
          - job_name: blackbox
            metrics_path: /probe
            params: { module: [apns_tls], target: ["\(target)"] }
            static_configs: [{ targets: ["127.0.0.1:\(blackboxPort)"] }]
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let prometheus = try Server(
            "/usr/bin/prometheus",
            [
                "--config.file=\(config)", "--storage.tsdb.path=\(folder.path("tsdb"))",
                "--web.listen-address=127.0.0.1:\(prometheusPort)",
            ],
            port: prometheusPort,
            log: folder.path("prometheus.log")
        )
        try Monitoring.waitUntilServing("http://127.0.0.1:\(prometheusPort)/-/ready", process: prometheus.process)

        let fromTextfile = try Self.query(prometheusPort, "x509_cert_not_after{job=\"node\"}")
        #expect(fromTextfile.first?.0["subject_CN"] == "Apple Push Services: com.example.app")
        let fromExporter = try Self.query(prometheusPort, "x509_cert_not_after{job=\"apnsctl\"}")
        #expect(fromExporter.first?.1 == fromTextfile.first?.1, "the same certificate, the same expiry")
        // The chart's CertificateRenewal expression, as Prometheus evaluates it: 40 days, not yet.
        let daysLeft = try Self.query(prometheusPort, "(x509_cert_not_after - time()) / 86400")
        #expect(daysLeft.allSatisfy { $0.1 > 39 && $0.1 < 41 }, "\(daysLeft)")

        let ready = try Self.query(prometheusPort, "apnsctl_app_ready") { $0.count == 2 }
        #expect(Set(ready.compactMap { $0.0["environment"] }) == ["sandbox", "production"])
        #expect(ready.allSatisfy { $0.0["app"] == "com.example.app" && $0.1 == 1 })

        // A probe scrape of a debug build on a loaded machine may take longer than one second.
        let probes = try Self.query(prometheusPort, "probe_success") { Set($0.compactMap { $0.0["job"] }).count == 2 }
        #expect(Set(probes.compactMap { $0.0["job"] }) == ["apns-probe", "blackbox"], "\(probes)")
        #expect(probes.allSatisfy { $0.1 == 1 })
        let success = try Self.query(prometheusPort, "apnsctl_check_success") {
            Set($0.compactMap { $0.0["job"] }).count == 2
        }
        #expect(Set(success.compactMap { $0.0["job"] }) == ["node", "apnsctl"])
        // Scraped every second, but the answers come from one probe per --min-probe-interval.
        let cached = try Self.query(prometheusPort, "apnsctl_probe_cached{job=\"apns-probe\"}") { $0.first?.1 == 1 }
        #expect(cached.first?.1 == 1, "\(cached)")
    }
}
