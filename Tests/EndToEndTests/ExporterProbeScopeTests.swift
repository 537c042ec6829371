import Foundation
import LocalGateway
import TestSupport
import Testing

/// A probe of an environment the credential does not serve fails, saying why, whatever the
/// gateway would answer: `--gateway` names one gateway for both environments, so a probe of
/// sandbox reached the local gateway's production side, which accepted a production-only
/// certificate that APNs' sandbox refuses (403 BadCertificateEnvironment).
struct ExporterProbeScopeTests {
    static func value(_ families: [String: Monitoring.Family], _ name: String) -> Double? {
        Monitoring.samples(families, name).first?.value
    }

    @Test func aProductionCertificateProbedAgainstSandboxFailsWithTheReason() async throws {
        let folder = try TemporaryFolder()
        let store = try Monitoring.store(in: folder, [("prodonly", "com.example.prod", 40, [.production])])
        let gateway = try await RunningGateway.start(.production)
        defer { Task { try? await gateway.gateway.stop() } }
        let exporter = try ExporterProcess(
            folder,
            store: store,
            arguments: ["--gateway", "127.0.0.1:\(gateway.port)", "--ca", gateway.caFile]
        )

        let answer = try exporter.get("/probe?credential=prodonly&environment=sandbox")
        #expect(answer.status == 200, "a probe that fails is an answer: \(answer.body)")
        let probe = try Monitoring.parse(answer.body)
        #expect(Self.value(probe, "probe_success") == 0, "\(answer.body)")
        let error = try #require(Monitoring.samples(probe, "apnsctl_probe_error").first, "\(answer.body)")
        #expect(error.labels == ["phase": "setup", "code": "environment_mismatch"], "\(error.labels)")
        #expect(Monitoring.samples(probe, "apnsctl_probe_auth_status").isEmpty, "no answer was asked for")
        #expect(gateway.gateway.statistics.connections == 0, "no connection for a probe APNs would refuse")
        // The log names the credential, the environment and what to do.
        #expect(waitUntil { exporter.log.contains("environment_mismatch") })
        #expect(
            exporter.log.contains("probe prodonly sandbox: not connected (environment_mismatch)"),
            "\(exporter.log)"
        )
        #expect(exporter.log.contains("for production only"), "\(exporter.log)")
        #expect(exporter.log.contains("probe environment=production"), "\(exporter.log)")

        // Against the environment it serves, the same gateway accepts it: what failed was the
        // environment asked for, not the credential or the set-up.
        let served = try Monitoring.parse(try exporter.get("/probe?credential=prodonly&environment=production").body)
        #expect(Self.value(served, "probe_success") == 1)
        #expect(Monitoring.samples(served, "apnsctl_probe_error").isEmpty)
        #expect(exporter.stop() == 0)
    }

    /// What the store records is judged before connecting; what only APNs knows (a key Apple
    /// restricted to one environment, recorded as serving both) is APNs' answer, with its reason.
    @Test func aTokenKeyOutsideItsRecordedEnvironmentIsNotConnectedAndAppleRestrictionsAreAPNsAnswer()
        async throws
    {
        let folder = try TemporaryFolder()
        let store = folder.path("store")
        try CLI.run([
            "import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", Fixtures.teamID, "--topic",
            "com.example.app", "--environment", "sandbox", "--alias", "key", "--store", store,
        ]).succeeded()
        // The gateway knows the key as one Apple restricted to sandbox.
        let gateway = try await RunningGateway.start(.production) {
            var key = Fixtures.tokenKey
            key.environment = .sandbox
            $0.tokenKeys = [key]
        }
        defer { Task { try? await gateway.gateway.stop() } }
        // Every scrape probes anew, so that the second one sees the key's new record.
        let exporter = try ExporterProcess(
            folder,
            store: store,
            arguments: [
                "--gateway", "127.0.0.1:\(gateway.port)", "--ca", gateway.caFile, "--min-probe-interval", "0",
            ]
        )

        let recorded = try Monitoring.parse(try exporter.get("/probe?credential=key&environment=production").body)
        #expect(Self.value(recorded, "probe_success") == 0)
        let error = try #require(Monitoring.samples(recorded, "apnsctl_probe_error").first)
        #expect(error.labels == ["phase": "setup", "code": "environment_mismatch"], "\(error.labels)")
        #expect(gateway.gateway.statistics.connections == 0)

        // Recorded (wrongly) as serving both: the probe connects, and APNs' reason is the answer.
        try CLI.run(["update", "key", "--environment", "both", "--store", store]).succeeded()
        let apple = try Monitoring.parse(try exporter.get("/probe?credential=key&environment=production").body)
        #expect(Self.value(apple, "probe_success") == 0)
        let rejected = try #require(Monitoring.samples(apple, "apnsctl_probe_auth_status").first)
        #expect(rejected.labels["verdict"] == "rejected", "\(rejected.labels)")
        #expect(rejected.labels["reason"] == "BadEnvironmentKeyInToken", "\(rejected.labels)")
        #expect(rejected.labels["status"] == "403")
        #expect(gateway.gateway.statistics.connections == 1)
        #expect(exporter.stop() == 0)
    }
}
