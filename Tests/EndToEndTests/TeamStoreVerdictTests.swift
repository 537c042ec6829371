import Foundation
import TestSupport
import Testing

/// `check` and `preflight` on a real team's store: one verdict per app, the rotation's
/// predecessor and other apps' credentials skipped and never probed.
@Suite(
    .serialized,
    .enabled(if: ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] != nil, "needs a Secret Service")
)
struct TeamStoreVerdictTests {
    typealias Team = TeamStore

    @Test func checkGivesOneVerdictPerApp() throws {
        let team = try TeamStore()
        // Named apps: each judged on its own credentials.
        let named = try team.run(
            ["check", "--json", "--environment", "production"] + Team.apps.flatMap { ["--topic", $0] }
        )
        try JSONContractTests.expectValid("check", named)
        let verdicts = Team.verdicts(try named.json())
        #expect(verdicts[Team.product]?["state"] as? String == "ready")
        #expect(verdicts[Team.product]?["fit"] as? [String] == [Team.productUniversal])
        #expect(verdicts[Team.companion]?["state"] as? String == "ready")
        #expect(verdicts[Team.legacy]?["state"] as? String == "ready")
        #expect(Set(verdicts[Team.legacy]?["unfit"] as? [String] ?? []) == [Team.legacyExpired, Team.untaggedKey])
        // A development app named for production fails: it has no production credential.
        #expect(verdicts[Team.qa]?["state"] as? String == "not_ready")
        #expect(named.status == 1, "\(named.stdout)")

        let skipped = verdicts[Team.product]?["skipped"] as? [[String: Any]] ?? []
        let reasons = Dictionary(
            skipped.map { ($0["credential"] as? String ?? "", $0["reason"] as? String ?? "") },
            uniquingKeysWith: { first, _ in first }
        )
        #expect(reasons[Team.productPredecessor] == "superseded")
        #expect(reasons[Team.productSandbox] == "other_environment")
        #expect(reasons[Team.qaSandbox] == "other_app")
        // The predecessor and the other apps' credentials were not judged.
        let judged = try named.json()["credentials"] as? [[String: Any]] ?? []
        #expect(!judged.contains { $0["credential"] as? String == Team.productPredecessor })

        try team.run(["check", "--environment", "production", "--topic", Team.product]).succeeded(
            stdout: "1 fit credential for \(Team.product) (production): \(Team.productUniversal)",
            "\(Team.productPredecessor) [superseded]"
        )

        // The whole store, strictly per credential (an expired one fails it), with each app's verdict.
        let whole = try team.run(["check", "--json", "--environment", "production"]).exited(1)
        try JSONContractTests.expectValid("check", whole)
        let storeVerdicts = Team.verdicts(try whole.json())
        #expect(Set(storeVerdicts.keys) == Set(Team.apps))
        #expect(storeVerdicts[Team.qa]?["state"] as? String == "sandbox_only")
        #expect(storeVerdicts[Team.product]?["state"] as? String == "ready")

        // Sandbox: the legacy app's only sandbox-capable credential is expired.
        let sandbox = try team.run(
            ["check", "--json", "--environment", "sandbox"] + Team.apps.flatMap { ["--topic", $0] }
        ).exited(1)
        let inSandbox = Team.verdicts(try sandbox.json())
        #expect(inSandbox[Team.qa]?["fit"] as? [String] == [Team.qaSandbox])
        #expect(inSandbox[Team.legacy]?["state"] as? String == "not_ready")
        #expect(
            Set(inSandbox[Team.product]?["fit"] as? [String] ?? []) == [Team.productUniversal, Team.productSandbox]
        )

        let metrics = try team.run(["check", "--skip-secrets", "--format", "prometheus", "--environment", "production"])
        // A development-only app has no production series: an alert on `apnsctl_app_ready == 0`
        // would otherwise fire for it for ever. It is ready where it is meant to be.
        #expect(!metrics.stdout.contains("apnsctl_app_ready{app=\"\(Team.qa)\",environment=\"production\"}"))
        let everywhere = try team.run(["check", "--skip-secrets", "--format", "prometheus"])
        #expect(everywhere.stdout.contains("apnsctl_app_ready{app=\"\(Team.qa)\",environment=\"sandbox\"} 1"))
        #expect(metrics.stdout.contains("apnsctl_app_ready{app=\"\(Team.product)\",environment=\"production\"} 1"))
    }

    @Test func preflightJudgesEveryAppAndProbesOnlyItsOwnCredentials() throws {
        let team = try TeamStore()
        let gateway = try team.gateway("production")
        let preflight = try team.run(["preflight", "--environment", "production", "--json"] + gateway.connection)
        try JSONContractTests.expectValid("preflight", preflight)
        let report = try preflight.json()
        #expect(preflight.status == 0, "\(preflight.stdout)")
        let verdicts = Team.verdicts(report)
        #expect(verdicts[Team.product]?["state"] as? String == "ready")
        #expect(verdicts[Team.qa]?["state"] as? String == "sandbox_only")
        #expect(
            Set(verdicts[Team.companion]?["fit"] as? [String] ?? []) == [Team.companionKey, Team.companionProduction]
        )
        #expect(verdicts[Team.legacy]?["fit"] as? [String] == [Team.legacyProduction])
        #expect(report["ready"] as? Bool == true)

        // Every probe the gateway saw used a credential of the app it was for.
        let records = try gateway.deliveries()
        #expect(!records.isEmpty)
        for record in records {
            let topic = record["topic"] as? String ?? ""
            if let subject = record["certificate_subject"] as? String {
                #expect(
                    subject.contains(": \(topic)") || subject.contains("=\(topic)"),
                    "\(topic) probed with \(subject)"
                )
            }
        }
        let subjects = records.compactMap { $0["certificate_subject"] as? String }
        #expect(!subjects.contains { $0.contains(Team.qa) }, "a sandbox-only certificate was probed for production")

        let text = try team.run(["preflight", "--environment", "production"] + gateway.connection).succeeded(
            stdout: "\(Team.qa)  sandbox only",
            "skipped: superseded by \(Team.productUniversal)",
            "3 of 4 apps ready for production (1 sandbox only)"
        )
        // Other apps' credentials are one line under each app found in the store, not a line
        // each under every app (hundreds in a store of many apps); JSON lists them all.
        #expect(!text.stdout.contains("not for \(Team.product)"), "\(text.stdout)")
        #expect(text.stdout.contains("credentials of other apps skipped (--json lists them)"), "\(text.stdout)")
    }

    @Test func preflightForNamedAppsAndEnvironments() throws {
        let team = try TeamStore()
        let production = try team.gateway("production")
        let before = try production.deliveries().count
        try team.run(
            ["preflight", "--environment", "production", "--topic", Team.product, "--json"] + production.connection
        ).succeeded()
        let records = try production.deliveries().dropFirst(before)
        #expect(!records.isEmpty)
        for record in records {
            #expect(record["topic"] as? String == Team.product)
            if let subject = record["certificate_subject"] as? String { #expect(subject.contains(Team.product)) }
        }
        // A development app named for production is not ready.
        try team.run(["preflight", "--environment", "production", "--topic", Team.qa] + production.connection)
            .exited(1)

        let sandbox = try team.gateway("sandbox")
        let all = try team.run(["preflight", "--environment", "sandbox", "--json"] + sandbox.connection).exited(1)
        let verdicts = Team.verdicts(try all.json())
        #expect(verdicts[Team.qa]?["fit"] as? [String] == [Team.qaSandbox])
        #expect(verdicts[Team.legacy]?["state"] as? String == "not_ready")
        #expect(verdicts[Team.product]?["state"] as? String == "ready")
    }

    @Test func preflightThatCannotReachTheGatewayExitsTwo() throws {
        let team = try TeamStore()
        let gateway = try team.gateway("production")
        let ca = gateway.caFile
        // A port nothing listens on: a listener opened and closed again.
        let closed = try CLI.run([
            "preflight", "--environment", "production", "--topic", Team.product, "--json",
            "--gateway", "127.0.0.1:1", "--ca", ca, "--store", team.store.path,
        ]).exited(2)
        try JSONContractTests.expectValid("preflight", closed)
        let report = try closed.json()
        let verdict = Team.verdicts(report)[Team.product]
        #expect(verdict?["state"] as? String == "could_not_check")
        let entries = report["credentials"] as? [[String: Any]] ?? []
        #expect(!entries.isEmpty)
        // Every credential probed carries its network error; the untagged key is judged unprobed.
        let probed = entries.filter { $0["credential"] as? String != Team.untaggedKey }
        #expect(!probed.isEmpty)
        #expect(probed.allSatisfy { ($0["error"] as? [String: Any])?["code"] != nil })

        let unresolvable = try CLI.run([
            "preflight", "--environment", "production", "--topic", Team.product,
            "--gateway", "no-such-gateway.invalid:2197", "--ca", ca, "--store", team.store.path,
        ]).exited(2)
        // Not cut: the hint is whole even in a pipe.
        #expect(unresolvable.stdout.contains("could not connect"))
        #expect(!unresolvable.stdout.contains("…"))
    }
}
