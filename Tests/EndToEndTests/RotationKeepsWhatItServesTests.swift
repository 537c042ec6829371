import Foundation
import TestSupport
import Testing

/// A rotation keeps what the replaced credential served: a token key put in another's place takes
/// its team, topics and environments, and one that would serve less is refused. And a whole-store
/// check for one environment follows the per-app verdict.
@Suite(.needsSecretService)
struct RotationKeepsWhatItServesTests {
    typealias Store = StoreCommandTests.Store

    /// A new P-256 key as `AuthKey_KEYID.p8`, with its public key beside it for the gateway.
    static func newKey(_ keyID: String, in folder: TemporaryFolder) throws -> (key: String, publicKey: String) {
        let key = folder.path("AuthKey_\(keyID).p8")
        let publicKey = folder.path("AuthKey_\(keyID).pub.pem")
        try TestPKI.tokenKey(at: key, publicKey: publicKey)
        return (key, publicKey)
    }

    @Test func aTokenKeyRotationKeepsTheAppReadyEverywhere() throws {
        let store = try Store()
        let folder = try TemporaryFolder()
        let old = CLI.cert("keys/AuthKey_ABC123DEFG.p8")
        try store.run([
            "import", old, "--team-id", "ABCDE12345", "--topic", "com.example.rot", "--environment", "both",
        ]).succeeded()
        let new = try Self.newKey("NEWKEY0001", in: folder)

        // The command `team remove` prints, with no --topic: what the old key served is kept.
        let rotated = try store.run(["import", new.key, "--replace", "token-ABC123DEFG"])
            .succeeded(stdout: "kept token-ABC123DEFG's topics, environments and team")
        // The alias names the old key: kept for the scripts that use it, and said.
        #expect(rotated.stdout.contains("names key ABC123DEFG but now holds key NEWKEY0001"), "\(rotated.stdout)")
        let entry = try #require(try store.listJSON().first)
        #expect(entry["credential"] as? String == "token-ABC123DEFG")
        #expect(entry["key_id"] as? String == "NEWKEY0001")
        #expect(entry["team_id"] as? String == "ABCDE12345")
        #expect(topicNames(entry["topics"]) == ["com.example.rot"])
        #expect(entry["environments"] as? [String] == ["sandbox", "production"])

        // check: the app is ready in both environments.
        for environment in ["sandbox", "production"] {
            try store.run(["check", "--environment", environment])
                .succeeded(stdout: "✓ com.example.rot: token-ABC123DEFG")
        }
        // The metrics: apnsctl_app_ready for the app.
        let metrics = try Monitoring.parse(try store.run(["check", "--format", "prometheus"]).stdout)
        let ready = Monitoring.samples(metrics, "apnsctl_app_ready")
        #expect(ready.contains { $0.labels["app"] == "com.example.rot" && $0.value == 1 }, "\(ready)")
        // preflight against a gateway that knows only the new key: the app is ready with it.
        let gateway = try GatewayProcess(
            folder,
            name: "gateway",
            arguments: ["--token-key", "NEWKEY0001=\(new.publicKey)", "--team-id", "ABCDE12345"]
        )
        let preflight = try store.run(
            ["preflight", "--environment", "production", "--json"] + gateway.connection
        ).succeeded()
        let report = try preflight.json()
        let apps = try #require(report["apps"] as? [[String: Any]])
        #expect(apps.map { $0["app"] as? String } == ["com.example.rot"])
        #expect(apps.first?["ready"] as? Bool == true)
    }

    @Test func aTokenKeyThatWouldServeLessIsRefusedUnlessForced() throws {
        let store = try Store()
        let folder = try TemporaryFolder()
        try store.run([
            "import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345", "--topic",
            "com.example.rot", "--topic", "com.example.watch", "--environment", "both",
        ]).succeeded()
        let before = try store.listJSON()
        let new = try Self.newKey("NEWKEY0002", in: folder)
        let refusals: [([String], String)] = [
            (["--environment", "sandbox"], "also serves production"),
            (["--topic", "com.example.rot"], "not recorded for com.example.watch"),
            (["--team-id", "ZZZZZ12345"], "belongs to team ZZZZZ12345"),
        ]
        for (options, words) in refusals {
            let refused = try store.run(["import", new.key, "--replace", "token-ABC123DEFG"] + options)
            // A refusal: exit 1, as every refused rotation; nothing changed.
            #expect(refused.status == 1, "\(options): \(refused.stderr)")
            #expect(refused.stderr.contains(words), "\(refused.stderr)")
            #expect(refused.stderr.contains("--force"), "\(refused.stderr)")
            #expect(try store.listJSON().map { $0["key_id"] as? String } == before.map { $0["key_id"] as? String })
        }
        // More is fine; and a forced narrower one is taken.
        try store.run([
            "import", new.key, "--replace", "token-ABC123DEFG", "--topic", "com.example.rot", "--topic",
            "com.example.watch", "--topic", "com.example.new",
        ]).succeeded()
        #expect(topicNames(try store.listJSON().first?["topics"])?.count == 3)
        let other = try Self.newKey("NEWKEY0003", in: folder)
        try store.run([
            "import", other.key, "--replace", "token-ABC123DEFG", "--environment", "sandbox", "--force",
        ]).succeeded()
        #expect(try store.listJSON().first?["environments"] as? [String] == ["sandbox"])
    }

    @Test func aRefusedImportExitsOneLikeEveryRefusal() throws {
        let store = try Store()
        let folder = try TemporaryFolder()
        let first = try TestPKI.mint(in: folder, name: "first", bundle: "com.example.same", days: 300)
        let second = try TestPKI.mint(in: folder, name: "second", bundle: "com.example.same", days: 400)
        #expect(try store.run(["import", first]).status == 0)
        // The same app and environments without --replace: refused, nothing changed, exit 1.
        try store.run(["import", second]).exited(1, stderr: "--replace")
        // Already stored: the same.
        #expect(try store.run(["import", first]).status == 1)
        // A mistyped alias is not a refusal but a credential that is not there: 2, in preflight too.
        #expect(try store.run(["import", second, "--replace", "com.example.typo"]).status == 2)
        #expect(try store.run(["preflight", "com.example.typo", "--environment", "production"]).status == 2)
        #expect(try store.run(["check", "com.example.typo"]).status == 2)
    }

    @Test func aWholeStoreCheckForOneEnvironmentFollowsThePerAppVerdict() throws {
        let store = try Store()
        let folder = try TemporaryFolder()
        let credentials = [
            try TestPKI.mint(in: folder, name: "universal", bundle: "com.example.u", days: 300),
            try TestPKI.mint(in: folder, name: "prod", bundle: "com.example.p", days: 300, environments: [.production]),
            try TestPKI.mint(in: folder, name: "s-dev", bundle: "com.example.s", days: 300, environments: [.sandbox]),
            try TestPKI.mint(
                in: folder,
                name: "s-prod",
                bundle: "com.example.s",
                days: 300,
                environments: [.production]
            ),
        ]
        for credential in credentials { #expect(try store.run(["import", credential]).status == 0) }
        try store.importTokenKey(topic: "com.example.t")

        let production = try store.run(["check", "--environment", "production"]).succeeded(
            stdout: "com.example.s-sandbox [other environment]",
            "served in production by com.example.s-production"
        )
        #expect(!production.stdout.contains("problem:"), "\(production.stdout)")
        let report = try store.run(["check", "--environment", "production", "--json"]).succeeded().json()
        let skipped = try #require(report["skipped"] as? [[String: Any]])
        #expect(skipped.map { $0["credential"] as? String } == ["com.example.s-sandbox"])

        // Sandbox: com.example.p has nothing for it, so its production certificate is a problem.
        try store.run(["check", "--environment", "sandbox"])
            .exited(1, stdout: "✗ com.example.p-production", "com.example.s-production [other environment]")
    }
}
