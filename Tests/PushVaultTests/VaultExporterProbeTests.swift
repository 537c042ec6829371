import Foundation
import TestSupport
import Testing

/// `/probe` of a store in OpenBao with the exporter's policy from docs/vault-policies: a
/// certificate's probe reads its secret (the bundle's password, or the key of a bundle that had
/// none), a token key's signs with Transit; a policy narrowed to some aliases refuses the others'
/// probes as a permission the policy lacks, naming the path.
@Suite(
    "The exporter's Vault policy and /probe",
    .enabled(if: BaoDevServer.isAvailable, Comment(rawValue: BaoDevServer.missingMessage)),
    .baoDevServer,
    .serialized,
    .timeLimit(.minutes(10))
)
struct VaultExporterProbeTests {
    typealias Bench = VaultStoreCommandTests.Bench

    /// `apnsctl exporter --skip-secrets` on the bench's store with `token`, against `gateway`.
    final class Exporter {
        let process = Process()
        let port: Int
        let log: String

        init(_ bench: Bench, token: String, gateway: RunningGateway) throws {
            port = try unusedLoopbackPort()
            log = bench.folder.path("exporter-\(port).log")
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments = [
                "exporter", "--listen", "127.0.0.1:\(port)", "--skip-secrets", "--store", bench.location, "--gateway",
                "127.0.0.1:\(gateway.port)", "--ca", gateway.caFile,
            ]
            var environment = ProcessInfo.processInfo.environment
            environment["VAULT_ADDR"] = bench.server.address
            environment["VAULT_TOKEN"] = token
            // Vault only: no Secret Service to fall back on.
            environment.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            try process.run()
        }

        /// A probe's answer, parsed: each sample's name with its labels, and its value.
        func probe(_ credential: String) async throws -> [(name: String, labels: String, value: String)] {
            let url = "http://127.0.0.1:\(port)/probe?credential=\(credential)&environment=sandbox"
            let body = try await VaultStoreCommandTests.get(url, until: { $0.contains("probe_success") })
            return body.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
                let parts = line.split(separator: " ")
                let series = String(parts.first ?? "")
                let brace = series.firstIndex(of: "{") ?? series.endIndex
                return (String(series[..<brace]), String(series[brace...]), String(parts.last ?? ""))
            }
        }

        var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    static func value(_ samples: [(name: String, labels: String, value: String)], _ name: String) -> String? {
        samples.first { $0.name == name }?.value
    }

    /// The writer imports a bundle with a password (its secret: the password), a PEM bundle with
    /// its key in clear (its secret: the private key) and a token key (in Transit).
    static func importAll(_ bench: Bench) throws {
        try bench.importBoth()
        let bundle = try TestPKI.mint(in: bench.folder, name: "nopass", bundle: "com.example.nopass", days: 100)
        try bench.run(["import", bundle, "--alias", "nopass"], token: bench.writer).succeeded()
    }

    @Test("With the exporter's policy, /probe of certificates and of a token key: no permission error")
    func theExportersPolicyLetsEveryProbeRun() async throws {
        let bench = try await Bench(try server())
        try Self.importAll(bench)
        // Both kinds of a certificate's secret are in the store.
        let entries = try await bench.entries().keys
        #expect(entries.contains { $0.contains("/app/pkcs12-password/") }, "\(entries)")
        #expect(entries.contains { $0.contains("/nopass/private-key/") }, "\(entries)")
        let gateway = try await RunningGateway.start(.sandbox)
        defer { Task { await gateway.stop() } }
        let exporter = try Exporter(bench, token: bench.exporter, gateway: gateway)
        defer { exporter.stop() }
        for credential in ["app", "nopass", "key"] {
            let samples = try await exporter.probe(credential)
            #expect(Self.value(samples, "probe_success") == "1", "\(credential): \(samples)")
            #expect(!samples.contains { $0.name == "apnsctl_probe_error" }, "\(credential): \(samples)")
            #expect(
                samples.contains { $0.name == "apnsctl_probe_auth_status" && $0.labels.contains("accepted") },
                "\(credential): \(samples)"
            )
        }
        #expect(!exporter.logText.contains("permission"), "\(exporter.logText)")
    }

    @Test("A policy narrowed to one alias: its probe runs, another's is a permission error naming the path")
    func aNarrowedPolicyRefusesTheOthersProbesNamingThePath() async throws {
        let bench = try await Bench(try server())
        try Self.importAll(bench)
        // As docs/vault-policies/exporter.hcl says to narrow it: secrets/+/ALIAS/* for each alias probed.
        let shipped = try Bench.policy("exporter", prefix: bench.prefix)
        let lines = shipped.split(separator: "\n").filter { !$0.contains("/secrets/") }
        #expect(lines.count == shipped.split(separator: "\n").count - 2, "the two secrets lines of the policy")
        let narrowed =
            lines.joined(separator: "\n")
            + "\npath \"secret/data/\(bench.prefix)/secrets/+/app/*\" { capabilities = [\"read\"] }\n"
        let token = try await bench.server.token(policy: "exporter-app-\(bench.prefix)", hcl: narrowed)
        let gateway = try await RunningGateway.start(.sandbox)
        defer { Task { await gateway.stop() } }
        let exporter = try Exporter(bench, token: token, gateway: gateway)
        defer { exporter.stop() }

        #expect(Self.value(try await exporter.probe("app"), "probe_success") == "1")
        let refused = try await exporter.probe("nopass")
        #expect(Self.value(refused, "probe_success") == "0", "\(refused)")
        let error = refused.first { $0.name == "apnsctl_probe_error" }
        #expect(error?.labels == "{phase=\"setup\",code=\"vault_permission_denied\"}", "\(refused)")
        // The log names the path the policy must grant, and the capability.
        #expect(
            try await eventually { exporter.logText.contains("vault_permission_denied") },
            "\(exporter.logText)"
        )
        let line = exporter.logText.split(separator: "\n").first { $0.contains("probe nopass sandbox") } ?? ""
        #expect(line.contains("secret/data/\(bench.prefix)/secrets/") && line.contains("/nopass/"), "\(line)")
        #expect(line.contains("{ capabilities = [\"read\"] }"), "the policy line to add: \(line)")
        // A token key's probe needs no secret of the store: it signs with Transit.
        #expect(Self.value(try await exporter.probe("key"), "probe_success") == "1")
        try Self.shippedRulesDoNotPage(refused, folder: bench.folder)
    }

    /// monitoring/apnsctl.rules.yml on the refused probe's own series, scraped for half an hour
    /// (promtool test rules): APNsProbeFailing never fires for it; APNsProbeNotPermitted, a
    /// warning, says what to grant.
    static func shippedRulesDoNotPage(
        _ samples: [(name: String, labels: String, value: String)],
        folder: TemporaryFolder
    ) throws {
        let target = "job=\"apns-probe\",instance=\"nopass/sandbox\""
        let series = samples.filter {
            ["probe_success", "apnsctl_probe_cached", "apnsctl_probe_error"].contains($0.name)
        }
        .map { sample -> String in
            let labels = sample.labels.isEmpty ? "{\(target)}" : "{\(target)," + sample.labels.dropFirst()
            return "      - series: '\(sample.name)\(labels)'\n        values: '\(sample.value)x30'"
        }
        #expect(series.count == 3, "\(samples)")
        let rules = CLI.packageRoot.appendingPathComponent("monitoring/apnsctl.rules.yml").path
        let test = folder.path("forbidden-probe.test.yml")
        try """
        rule_files: ["\(rules)"]
        evaluation_interval: 1m
        tests:
          - interval: 1m
            input_series:
        \(series.joined(separator: "\n"))
            alert_rule_test:
              - eval_time: 30m
                alertname: APNsProbeFailing
                exp_alerts: []
              - eval_time: 30m
                alertname: APNsProbeNotPermitted
                exp_alerts:
                  - exp_labels:
                      { severity: warning, job: apns-probe, instance: nopass/sandbox, phase: setup, code: vault_permission_denied }
                    exp_annotations:
                      summary: "apnsctl exporter may not read what probe nopass/sandbox needs"
                      description: "The exporter's Vault token lacks a capability nopass/sandbox needs (read on a certificate's password or key, or Transit signing for a token key), so it is not probed. Give the exporter the policy of apnsctl's vault-policies/exporter.hcl, or stop probing this credential; the exporter's log names the path and the capability."

        """.write(toFile: test, atomically: true, encoding: .utf8)
        let tested = try CLI.runProgram("promtool", ["test", "rules", test], timeout: 120)
        #expect(tested.status == 0, "\(tested.stdout)\(tested.stderr)")
    }
}
