import Foundation
import TestSupport
import Testing

/// The shipped alert rules and systemd units, checked by the tools that will read them, and
/// x509-certificate-exporter's own expiry rules evaluated on apnsctl's output.
struct MonitoringRulesTests {
    static func monitoring(_ name: String) -> String {
        CLI.packageRoot.appendingPathComponent("monitoring/\(name)").path
    }

    @Test func promtoolAcceptsTheRulesAndTheirTestsPass() throws {
        let checked = try CLI.runProgram("promtool", ["check", "rules", Self.monitoring("apnsctl.rules.yml")])
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        #expect(checked.stdout.contains("SUCCESS: 11 rules found"), "\(checked.stdout)")
        // At the documented days and not a minute before; the day counts overridden too.
        for test in ["apnsctl.rules.test.yml", "expiry-days-override.test.yml"] {
            let tested = try CLI.runProgram(
                "promtool",
                ["test", "rules", Self.monitoring("tests/\(test)")],
                timeout: 300
            )
            #expect(tested.status == 0, "\(test): \(tested.stdout)\(tested.stderr)")
            #expect(tested.stdout.contains("SUCCESS"))
        }
    }

    /// enix's chart rules, unchanged, on the series `check --format prometheus` wrote for a
    /// certificate: CertificateRenewal once fewer than 28 days are left (for 15 minutes),
    /// CertificateExpiration once fewer than 14, not before. Time in promtool starts at 0, so
    /// the series is shifted to start when the check ran: not_after - check time.
    @Test func x509CertificateExportersStockRulesFireOnApnsctlsSeries() throws {
        let folder = try TemporaryFolder()
        let certificate = try TestPKI.mint(in: folder, name: "renew", bundle: "com.example.renew", days: 29)
        let output = folder.path("apnsctl.prom")
        #expect(try CLI.run(["check", "--format", "prometheus", "--output", output, certificate]).status == 0)
        let families = try Monitoring.parse(try String(contentsOfFile: output, encoding: .utf8))
        let series = try #require(Monitoring.samples(families, "x509_cert_not_after").first)
        let checked = try #require(Monitoring.samples(families, "apnsctl_check_timestamp_seconds").first?.value)
        let secondsLeft = Int(series.value - checked)
        #expect(abs(secondsLeft - 29 * 86400) < 3600)

        let rules = folder.path("x509-certificate-exporter.rules.yml")
        try """
        groups:
          - name: x509-certificate-exporter.rules
            rules:
              - alert: CertificateRenewal
                expr: ((x509_cert_not_after - time()) / 86400) < 28
                for: 15m
                labels:
                  severity: warning
              - alert: CertificateExpiration
                expr: ((x509_cert_not_after - time()) / 86400) < 14
                for: 15m
                labels:
                  severity: critical
        """.write(toFile: rules, atomically: true, encoding: .utf8)

        func labels(_ severity: String, _ alert: String) throws -> String {
            // Prometheus drops empty labels, as if x509-certificate-exporter had not set them.
            var all = series.labels.filter { !$0.value.isEmpty }
            all["severity"] = severity
            return String(
                decoding: try JSONSerialization.data(
                    withJSONObject: all,
                    options: [.sortedKeys, .withoutEscapingSlashes]
                ),
                as: UTF8.self
            )
        }
        let selector =
            "x509_cert_not_after{"
            + series.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\(Self.escape($0.value))\"" }
            .joined(separator: ",") + "}"
        // The first minute with fewer than N days left, then 15 minutes pending.
        let warningStarts = (secondsLeft - 28 * 86400) / 60 + 1
        let criticalStarts = (secondsLeft - 14 * 86400) / 60 + 1
        let test = folder.path("x509-certificate-exporter.test.yml")
        try """
        rule_files:
          - \(rules)
        evaluation_interval: 1m
        tests:
          - interval: 1m
            input_series:
              - series: '\(selector.replacingOccurrences(of: "'", with: "''"))'
                values: '\(secondsLeft)+0x\(secondsLeft / 60 + 60)'
            alert_rule_test:
              - eval_time: \(warningStarts + 14)m
                alertname: CertificateRenewal
                exp_alerts: []
              - eval_time: \(warningStarts + 15)m
                alertname: CertificateRenewal
                exp_alerts:
                  - exp_labels: \(try labels("warning", "CertificateRenewal"))
              - eval_time: \(warningStarts + 15)m
                alertname: CertificateExpiration
                exp_alerts: []
              - eval_time: \(criticalStarts + 14)m
                alertname: CertificateExpiration
                exp_alerts: []
              - eval_time: \(criticalStarts + 15)m
                alertname: CertificateExpiration
                exp_alerts:
                  - exp_labels: \(try labels("critical", "CertificateExpiration"))
        """.write(toFile: test, atomically: true, encoding: .utf8)
        // Fifteen days of one-minute evaluations: promtool needs a while on a busy machine.
        let tested = try CLI.runProgram("promtool", ["test", "rules", test], timeout: 600)
        #expect(tested.status == 0, "\(tested.stdout)\(tested.stderr)")
        #expect(tested.stdout.contains("SUCCESS"))
        // Proof the two tiers are 14 days apart in the evaluation, as the chart means them.
        #expect(criticalStarts - warningStarts == 14 * 1440)
    }

    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }

    @Test func theSystemdUnitsVerifyAndNameTheirUserAndStore() throws {
        let folder = try TemporaryFolder()
        var units: [String] = []
        for name in ["apnsctl-check.service", "apnsctl-check.timer", "apnsctl-exporter.service"] {
            let text = try String(contentsOfFile: Self.monitoring(name), encoding: .utf8)
            if name.hasSuffix(".service") {
                #expect(text.contains("\nUser=apnsctl\n"), "\(name) runs as its own user")
                #expect(text.contains("--store /var/lib/apnsctl/store"), "\(name) names the store")
                #expect(text.contains("ExecStart=/usr/bin/apnsctl "))
            }
            // systemd-analyze checks that ExecStart's binary exists: the one under test stands in.
            let unit = folder.path(name)
            try text.replacingOccurrences(of: "/usr/bin/apnsctl", with: CLI.binary)
                .write(toFile: unit, atomically: true, encoding: .utf8)
            units.append(unit)
        }
        let verified = try CLI.runProgram("systemd-analyze", ["verify", "--man=no"] + units)
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        #expect(verified.stderr.isEmpty, "no warning: \(verified.stderr)")

        // The check unit's command, run as written against an empty store, writes the file.
        let check = try String(contentsOfFile: Self.monitoring("apnsctl-check.service"), encoding: .utf8)
        let command = try #require(check.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        let arguments = command.dropFirst("ExecStart=/usr/bin/apnsctl ".count).split(separator: " ").map(String.init)
            .map {
                $0.replacingOccurrences(of: "/var/lib/apnsctl/store", with: folder.path("store"))
                    .replacingOccurrences(of: "/var/lib/prometheus/node-exporter", with: folder.path(""))
            }
        let ran = try CLI.run(arguments)
        #expect(ran.status == 2, "an empty store: \(ran.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.path("apnsctl.prom")))
    }
}
