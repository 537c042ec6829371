import Foundation
import TestSupport
import Testing

/// x509-certificate-exporter's own Helm chart rules, as its chart renders them by default, in a
/// real Prometheus scraping `apnsctl exporter`: version 4's rules on the default names (an
/// expiring certificate, a certificate that cannot be read, a store that cannot be read), and
/// version 3's on `--x509-names v3`. Every `for:` is set to 0s, as the chart's
/// `prometheusRules.alertForOverrides` allows, so that the test waits seconds, not minutes.
@Suite(.serialized)
struct PrometheusX509RulesTests {
    /// The chart's v4 PrometheusRule (chart/templates/prometheusrule.yaml, default values:
    /// warningDaysLeft 28, criticalDaysLeft 14, no rulePrefix), its rules that apply to files.
    static let version4Rules = """
        groups:
          - name: x509-certificate-exporter.rules
            rules:
              - alert: SourceErrors
                expr: "sum without (reason) (increase(x509_source_errors_total[15m])) > 5"
                for: 0s
                labels: { severity: warning }
              - alert: SourceDown
                expr: "x509_source_up == 0"
                for: 0s
                labels: { severity: critical }
              - alert: KeystorePassphraseFailures
                expr: "(increase(x509_pkcs12_passphrase_failures_total[15m]) > 0) or (increase(x509_jks_passphrase_failures_total[15m]) > 0)"
                for: 0s
                labels: { severity: warning }
              - alert: CertificateError
                expr: "x509_cert_error > 0"
                for: 0s
                labels: { severity: warning }
              - alert: CertificateRenewal
                expr: "(x509_cert_not_after - time()) < (28 * 86400) and (x509_cert_not_after - time()) > 0"
                for: 0s
                labels: { severity: warning }
              - alert: CertificateExpiration
                expr: "(x509_cert_not_after - time()) < (14 * 86400)"
                for: 0s
                labels: { severity: critical }
        """

    /// The chart's v3 PrometheusRule, as it rendered by default.
    static let version3Rules = """
        groups:
          - name: x509-certificate-exporter.rules
            rules:
              - alert: X509ExporterReadErrors
                expr: delta(x509_read_errors[15m]) > 0
                for: 0s
                labels: { severity: warning }
              - alert: CertificateRenewal
                expr: ((x509_cert_not_after - time()) / 86400) < 28
                for: 0s
                labels: { severity: warning }
              - alert: CertificateExpiration
                expr: ((x509_cert_not_after - time()) / 86400) < 14
                for: 0s
                labels: { severity: critical }
        """

    /// A Prometheus with `rules`, scraping the exporter every second.
    static func prometheus(
        _ folder: TemporaryFolder,
        exporter: ExporterProcess,
        rules: String
    ) throws -> PrometheusServerTests.Server {
        let rulesFile = folder.path("x509-certificate-exporter.rules.yml")
        try rules.write(toFile: rulesFile, atomically: true, encoding: .utf8)
        let checked = try CLI.runProgram("promtool", ["check", "rules", rulesFile])
        try #require(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        let port = try unusedLoopbackPort()
        let config = folder.path("prometheus.yml")
        try """
        global:
          scrape_interval: 1s
          evaluation_interval: 1s
        rule_files: ["\(rulesFile)"]
        scrape_configs:
          - job_name: apnsctl
            static_configs: [{ targets: ["127.0.0.1:\(exporter.port)"] }]
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let server = try PrometheusServerTests.Server(
            "/usr/bin/prometheus",
            [
                "--config.file=\(config)", "--storage.tsdb.path=\(folder.path("tsdb"))",
                "--web.listen-address=127.0.0.1:\(port)",
            ],
            port: port,
            log: folder.path("prometheus.log")
        )
        try Monitoring.waitUntilServing("http://127.0.0.1:\(port)/-/ready", process: server.process)
        return server
    }

    /// The firing alerts' labels, once `until` holds for them (bounded wait).
    @discardableResult
    static func firing(
        _ port: Int,
        until complete: ([[String: String]]) -> Bool
    ) throws -> [[String: String]] {
        var last: [[String: String]] = []
        let done = try waitUntil(timeout: 120) {
            let answer = try Monitoring.get("http://127.0.0.1:\(port)/api/v1/alerts")
            guard answer.status == 200,
                let json = try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any],
                let data = json["data"] as? [String: Any], let alerts = data["alerts"] as? [[String: Any]]
            else { return false }
            last = alerts.filter { $0["state"] as? String == "firing" }.compactMap { $0["labels"] as? [String: String] }
            return complete(last)
        }
        if !done { Issue.record("the alerts never were as expected: \(last)") }
        return last
    }

    /// Whether `name` fires with the labels of `match` (a `subject_CN` by its end: the test
    /// PKI's names begin with the certificate's kind).
    static func fires(_ alerts: [[String: String]], _ name: String, _ match: [String: String] = [:]) -> Bool {
        alerts.contains { labels in
            labels["alertname"] == name
                && match.allSatisfy {
                    $0.key == "subject_CN" ? labels[$0.key]?.hasSuffix($0.value) == true : labels[$0.key] == $0.value
                }
        }
    }

    /// The stored certificate file of `alias` in a keyring store.
    static func certificateFile(_ store: String, _ alias: String) throws -> String {
        let folder = store + "/credentials"
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder).first {
                $0.hasPrefix(alias + ".") && $0.hasSuffix(".cert.pem")
            },
            "no certificate file of \(alias) in \(folder)"
        )
        return folder + "/" + name
    }

    @Test func version4RulesFireOnAnExpiringCertificateAnUnreadableOneAndAnUnreadableStore() throws {
        let folder = try TemporaryFolder()
        let store = try Monitoring.store(
            in: folder,
            [
                ("soon", "com.example.soon", 10, [.production]), ("later", "com.example.later", 200, [.production]),
                ("gone", "com.example.gone", 300, [.production]),
            ]
        )
        let exporter = try ExporterProcess(
            folder,
            store: store,
            arguments: ["--skip-secrets", "--store-refresh", "1", "--expose-per-cert-error-metrics"]
        )
        let health = try exporter.get("/healthz")
        #expect(health.status == 200 && health.body.contains("ok"), "\(health)")
        try #require(try waitUntil { try exporter.get("/readyz").status == 200 }, "ready once the store was read")
        let prometheus = try Self.prometheus(folder, exporter: exporter, rules: Self.version4Rules)

        let soon = ["subject_CN": ": com.example.soon"]
        var alerts = try Self.firing(prometheus.port) {
            Self.fires($0, "CertificateExpiration", soon) && Self.fires($0, "CertificateRenewal", soon)
        }
        #expect(!alerts.contains { $0["subject_CN"]?.hasSuffix("later") == true }, "\(alerts)")
        #expect(!Self.fires(alerts, "SourceDown") && !Self.fires(alerts, "SourceErrors"), "\(alerts)")
        let up = try PrometheusServerTests.query(prometheus.port, "x509_source_up")
        #expect(up.first?.0["source_kind"] == "keyring" && up.first?.0["source_name"] == store, "\(up)")
        #expect(up.first?.1 == 1)

        // A certificate whose file is gone: its error series, and the source's errors.
        let gone = try Self.certificateFile(store, "gone")
        try FileManager.default.removeItem(atPath: gone)
        alerts = try Self.firing(prometheus.port) {
            Self.fires($0, "CertificateError", ["filepath": gone]) && Self.fires($0, "SourceErrors")
        }
        #expect(Self.fires(alerts, "SourceErrors", ["source_kind": "keyring", "source_name": store]), "\(alerts)")
        let reasons = try PrometheusServerTests.query(prometheus.port, "increase(x509_source_errors_total[1m]) > 0")
        #expect(reasons.map { $0.0["reason"] } == ["not_found"], "\(reasons)")

        // A store that cannot be read: down, and the last good read's certificates kept.
        try "not an index".write(toFile: store + "/index.json", atomically: true, encoding: .utf8)
        alerts = try Self.firing(prometheus.port) { Self.fires($0, "SourceDown", ["source_kind": "keyring"]) }
        #expect(Self.fires(alerts, "CertificateExpiration", soon), "the last good series stay: \(alerts)")
        #expect(try exporter.get("/readyz").status == 200, "it was read once")
        let metrics = try exporter.get("/metrics").body
        #expect(metrics.contains("apnsctl_check_success 0"))
        #expect(!metrics.contains("x509_read_errors"), "no version 3 name")
    }

    @Test func version3RulesFireOnTheVersion3Names() throws {
        let folder = try TemporaryFolder()
        let store = try Monitoring.store(
            in: folder,
            [("soon", "com.example.soon", 10, [.production]), ("later", "com.example.later", 200, [.production])]
        )
        let exporter = try ExporterProcess(
            folder,
            store: store,
            arguments: ["--skip-secrets", "--store-refresh", "1", "--x509-names", "v3"]
        )
        let prometheus = try Self.prometheus(folder, exporter: exporter, rules: Self.version3Rules)
        let soon = ["subject_CN": ": com.example.soon"]
        try Self.firing(prometheus.port) {
            Self.fires($0, "CertificateExpiration", soon) && Self.fires($0, "CertificateRenewal", soon)
        }
        let notBefore = try PrometheusServerTests.query(prometheus.port, "count(x509_cert_not_before)")
        #expect(notBefore.first?.1 == 2, "version 3 gives not_before: \(notBefore)")
        try FileManager.default.removeItem(atPath: try Self.certificateFile(store, "later"))
        try Self.firing(prometheus.port) { Self.fires($0, "X509ExporterReadErrors") }
        let metrics = try exporter.get("/metrics").body
        #expect(metrics.contains("\nx509_read_errors 1\n"), "\(metrics)")
        #expect(!metrics.contains("x509_source_"), "no version 4 name")
    }
}
