import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The exporter under many probes at once on every kind of store: a member's team store (while
/// that member syncs), a CI clone with an identity in its environment, and a keyring store. Every
/// request is answered, the metrics after, and SIGTERM ends it at once with no child left: a
/// decryption's `age` children never hold one another's pipes.
@Suite(.serialized, .needsPrivateSecretService)
struct ExporterStoreKindsTests {
    @Test(arguments: ["team", "clone", "keyring"])
    func fiftyProbesAtOnceAreAnsweredAndSIGTERMEndsIt(_ kind: String) throws {
        let team = try TeamHygieneTests.Team()
        var store = team.alice.store
        var environment: [String: String] = [:]
        // Kept for the test's length: its folder goes with it.
        var keyringStore: StoreCommandTests.Store?
        switch kind {
        case "clone":
            store = team.ci.store
            environment = team.ci.environment
        case "keyring":
            let keyring = try StoreCommandTests.Store()
            let bundle = try TestPKI.mint(in: team.work, name: "ring", bundle: "com.example.links", days: 300)
            #expect(try keyring.run(["import", bundle, "--alias", TeamHygieneTests.Team.certificate]).status == 0)
            let imported = try keyring.run([
                "import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345", "--topic",
                "com.example.links", "--environment", "both",
            ])
            #expect(imported.status == 0, "\(imported.stderr)")
            store = keyring.path
            keyringStore = keyring
        default:
            break
        }
        let exporter = try ExporterProcess(
            team.work,
            store: store,
            arguments: team.gateway.connection,
            environment: environment
        )
        var urls: [String] = []
        for index in 0..<50 {
            let alias = index % 2 == 0 ? TeamHygieneTests.Team.certificate : TeamHygieneTests.Team.key
            let environment = index % 4 < 2 ? "sandbox" : "production"
            urls.append(exporter.url("/probe?credential=\(alias)&environment=\(environment)"))
        }
        urls.append(exporter.url("/metrics"))
        // One curl, all at once (a shell's `wait` would wait for ever: the test runner's
        // blocked SIGCHLD is inherited).
        let transfers = urls.flatMap { ["-o", "/dev/null", $0] }
        // The member syncs while the probes run (a team store only), on a thread of its own.
        let sync = Outcome()
        if kind == "team" {
            let syncing = ["team", "sync", "--store", store]
            Thread {
                sync.result = try? CLI.run(syncing)
                sync.done.signal()
            }.start()
        } else {
            sync.done.signal()
        }
        let answered = try CLI.runProgram(
            "curl",
            ["--parallel", "--parallel-immediate", "--parallel-max", "60", "-s", "-m", "30", "-w", "%{http_code}\n"]
                + transfers,
            timeout: 90
        )
        let codes = answered.stdout.split(separator: "\n")
        #expect(codes.count == 51, "\(answered.stdout)")
        #expect(codes.allSatisfy { $0 == "200" }, "\(answered.stdout)\n\(exporter.log.suffix(2000))")
        sync.done.wait()
        if kind == "team" { #expect(sync.result?.status == 0, "\(sync.result?.stderr ?? "no sync")") }
        let metrics = try exporter.get("/metrics")
        #expect(metrics.status == 200 && metrics.body.contains("apnsctl_check_success 1"), "\(metrics.body)")
        // The store as x509-certificate-exporter's source, of its kind (a clone is a team store too).
        let sourceKind = kind == "keyring" ? "keyring" : "team"
        #expect(metrics.body.contains("x509_source_up{source_kind=\"\(sourceKind)\",source_name=\""), "\(metrics.body)")
        let probe = try exporter.get("/probe?credential=\(TeamHygieneTests.Team.certificate)&environment=sandbox")
        #expect(probe.body.contains("probe_success 1"), "\(probe.body)\n\(exporter.log.suffix(2000))")

        _ = keyringStore
        let pid = exporter.process.processIdentifier
        let status = exporter.stop()
        #expect(status != -1, "SIGTERM did not end the exporter within 30 s")
        let children = try CLI.runProgram("pgrep", ["-P", String(pid)])
        #expect(children.stdout.isEmpty, "children left: \(children.stdout)")
    }
}

/// What a command run on another thread gave.
final class Outcome: @unchecked Sendable {
    var result: CLI.Result?
    let done = DispatchSemaphore(value: 0)
}
