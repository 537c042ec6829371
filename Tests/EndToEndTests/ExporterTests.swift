import Foundation
import LocalGateway
import TestSupport
import Testing

/// `apnsctl exporter` against the local gateway: /probe in blackbox_exporter's names with APNs'
/// reason, the rate limit per target, 400s for what it cannot serve, and a clean stop.
struct ExporterTests {
    static let credentials: [(alias: String, bundle: String, days: Int, environments: TestPKI.Environments)] = [
        ("myapp", "com.example.app", 40, [.sandbox, .production]),
        ("devonly", "com.example.dev", 40, [.sandbox]),
    ]

    static func value(_ families: [String: Monitoring.Family], _ name: String) -> Double? {
        Monitoring.samples(families, name).first?.value
    }

    @Test func probesAnswerInBlackboxNamesWithAPNsReasonAndOneConnectionPerInterval() async throws {
        let folder = try TemporaryFolder()
        let store = try Monitoring.store(in: folder, Self.credentials)
        let gateway = try await RunningGateway.start(.production)
        defer { Task { try? await gateway.gateway.stop() } }
        let exporter = try ExporterProcess(
            folder,
            store: store,
            arguments: ["--gateway", "127.0.0.1:\(gateway.port)", "--ca", gateway.caFile]
        )

        let first = try exporter.get("/probe?credential=myapp&environment=production")
        #expect(first.status == 200)
        let probe = try Monitoring.parse(first.body)
        #expect(Self.value(probe, "probe_success") == 1, "\(first.body)")
        #expect(Self.value(probe, "apnsctl_probe_cached") == 0)
        let phases = Set(Monitoring.samples(probe, "probe_http_duration_seconds").compactMap { $0.labels["phase"] })
        #expect(phases == ["resolve", "connect", "tls", "processing"])
        #expect((Self.value(probe, "probe_duration_seconds") ?? 0) > 0)
        let serverExpiry = try #require(Self.value(probe, "probe_ssl_earliest_cert_expiry"))
        #expect(serverExpiry > Date().timeIntervalSince1970, "the gateway's chain expires in the future")
        let version = Monitoring.samples(probe, "probe_tls_version_info").first?.labels["version"]
        #expect(version == "TLS 1.3" || version == "TLS 1.2", "\(version ?? "none")")
        let auth = try #require(Monitoring.samples(probe, "apnsctl_probe_auth_status").first)
        #expect(auth.labels["verdict"] == "accepted")
        for family in probe.values { #expect(!family.help.isEmpty && family.type == "gauge") }

        // A scrape within --min-probe-interval gets the cached answer: no new connection.
        let connections = gateway.gateway.statistics.connections
        #expect(connections == 1)
        let second = try Monitoring.parse(try exporter.get("/probe?credential=myapp&environment=production").body)
        #expect(Self.value(second, "apnsctl_probe_cached") == 1)
        #expect(Self.value(second, "probe_success") == 1)
        #expect(gateway.gateway.statistics.connections == connections, "two scrapes, one connection")

        // A development certificate against the production gateway, which APNs would refuse
        // (403 BadCertificateEnvironment): not connected, and the probe says why.
        let wrong = try Monitoring.parse(try exporter.get("/probe?credential=devonly&environment=production").body)
        #expect(Self.value(wrong, "probe_success") == 0)
        let mismatch = try #require(Monitoring.samples(wrong, "apnsctl_probe_error").first)
        #expect(mismatch.labels == ["phase": "setup", "code": "environment_mismatch"], "\(mismatch.labels)")
        #expect(Monitoring.samples(wrong, "apnsctl_probe_auth_status").isEmpty)
        #expect(gateway.gateway.statistics.connections == connections, "no connection for a probe APNs would refuse")

        // What it cannot serve is a 400 that says what to send.
        let refusals: [(String, String)] = [
            ("/probe?credential=nobody&environment=production", "No credential \"nobody\""),
            ("/probe?credential=myapp&environment=prod", "environment=prod is not an environment"),
            ("/probe?credential=myapp", "Missing environment="),
            ("/probe?environment=production", "Missing credential="),
            ("/probe?credential=myapp&environment=production&target=x", "Unknown parameter \"target\""),
            // A path is not a stored alias: nobody who can scrape may make it read files.
            ("/probe?credential=\(store)/index.json&environment=production", "No credential"),
        ]
        for (path, message) in refusals {
            let answer = try exporter.get(path)
            #expect(answer.status == 400, "\(path)")
            #expect(answer.body.contains(message), "\(path): \(answer.body)")
        }
        #expect(try exporter.get("/nothing").status == 404)

        // /metrics: the check series, in x509-certificate-exporter's names too.
        let metrics = try exporter.get("/metrics")
        #expect(metrics.status == 200)
        let check = try Monitoring.parse(metrics.body)
        let notAfter = Monitoring.samples(check, "x509_cert_not_after")
        #expect(Set(notAfter.compactMap { $0.labels["subject_CN"] }).count == 2)
        #expect(notAfter.allSatisfy { $0.labels["filepath"]?.hasPrefix(store) == true })
        let ready = Monitoring.samples(check, "apnsctl_app_ready")
        #expect(
            ready.contains { $0.labels == ["app": "com.example.dev", "environment": "sandbox"] && $0.value == 1 }
        )
        #expect(!ready.contains { $0.labels["app"] == "com.example.dev" && $0.labels["environment"] == "production" })
        #expect(Self.value(check, "apnsctl_check_success") == 1)
        #expect(Self.value(check, "apnsctl_check_credentials") == 2)

        #expect(exporter.stop() == 0, "SIGTERM stops it cleanly")
        #expect(exporter.log.contains("probe devonly production: not connected (environment_mismatch)"))
        #expect(!exporter.log.contains("PRIVATE KEY"))
    }

    @Test func aRefusedClientCertificateAndAnUnreachableGatewayFailTheProbeNotTheExporter() async throws {
        let folder = try TemporaryFolder()
        let store = try Monitoring.store(in: folder, [Self.credentials[0]])
        // A gateway that trusts another CA than the one the credential was issued by.
        let refusing = try await RunningGateway.start(.production) {
            $0.clientCAFiles = [CLI.cert("ca/gateway-test-ca.pem")]
        }
        defer { Task { try? await refusing.gateway.stop() } }
        let exporter = try ExporterProcess(
            folder,
            store: store,
            arguments: ["--gateway", "127.0.0.1:\(refusing.port)", "--ca", refusing.caFile]
        )
        let refused = try Monitoring.parse(try exporter.get("/probe?credential=myapp&environment=production").body)
        #expect(Self.value(refused, "probe_success") == 0)
        #expect(Monitoring.samples(refused, "apnsctl_probe_auth_status").first?.labels["verdict"] == "rejected")
        let error = try #require(Monitoring.samples(refused, "apnsctl_probe_error").first)
        #expect(error.labels["code"] == "client_certificate_rejected", "\(error.labels)")
        #expect(exporter.stop() == 0)

        let closed = try ProxyCommandTests.closedPort()
        let unreachable = try ExporterProcess(
            folder,
            store: store,
            arguments: ["--gateway", "127.0.0.1:\(closed)", "--ca", refusing.caFile, "--timeout", "5"]
        )
        let failed = try Monitoring.parse(try unreachable.get("/probe?credential=myapp&environment=production").body)
        #expect(Self.value(failed, "probe_success") == 0)
        let failure = try #require(Monitoring.samples(failed, "apnsctl_probe_error").first)
        #expect(failure.labels["code"] == "connection_refused", "\(failure.labels)")
        #expect(failure.labels["phase"] == "tcp")
        #expect(Self.value(failed, "probe_ssl_earliest_cert_expiry") == nil, "no chain was seen")
        // The exporter goes on serving.
        #expect(try unreachable.get("/metrics").status == 200)
        #expect(unreachable.process.isRunning)
        #expect(unreachable.stop() == 0)
    }
}
