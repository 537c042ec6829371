import Foundation
import TestSupport
import Testing

/// A credential's whole life in the store: rotation that cannot go backwards, token keys whose
/// metadata is fixed in place, and `check --topic` that answers for one app.
@Suite(.needsPrivateSecretService)
struct CredentialLifecycleTests {
    typealias Store = StoreCommandTests.Store

    static func day(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: date)
    }

    static func day(inDays days: Int) -> String { day(Date().addingTimeInterval(Double(days) * 86_400)) }

    /// The committed identity that expired before the tests ran, as a PEM bundle with its key.
    static func expiredBundle(in folder: TemporaryFolder) throws -> String {
        let path = folder.path("expired-bundle.pem")
        let text =
            try String(contentsOfFile: CLI.cert("identities/expired.pem"), encoding: .utf8)
            + String(contentsOfFile: CLI.cert("identities/expired.key"), encoding: .utf8)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func codes(_ result: CLI.Result) throws -> [String] {
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let credentials = try #require(json["credentials"] as? [[String: Any]])
        return credentials.flatMap { ($0["findings"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String } }
    }

    @Test func aRotationThatShortensExpiryIsRefusedUnlessForced() throws {
        let store = try Store()
        let folder = try TemporaryFolder()
        let long = try TestPKI.mint(in: folder, name: "long", bundle: "com.example.rot", days: 400)
        let short = try TestPKI.mint(in: folder, name: "short", bundle: "com.example.rot", days: 20)
        #expect(try store.run(["import", long]).status == 0)
        let before = try store.listJSON()

        let refused = try store.run(["import", short, "--replace", "com.example.rot-universal"])
        #expect(refused.status == 1, "\(refused.stderr)")
        // Both expiries, the new one's and the old one's (a day either way for the clock's hour).
        let newDays = [19, 20, 21].map(Self.day(inDays:))
        let oldDays = [399, 400, 401].map(Self.day(inDays:))
        #expect(newDays.contains { refused.stderr.contains($0) }, "\(refused.stderr)")
        #expect(oldDays.contains { refused.stderr.contains($0) }, "\(refused.stderr)")
        #expect(refused.stderr.contains("--force"))
        #expect(try store.listJSON().map { $0["sha256"] as? String } == before.map { $0["sha256"] as? String })
        #expect(try store.run(["check", "com.example.rot-universal"]).status == 0)

        let forced = try store.run(["import", short, "--replace", "com.example.rot-universal", "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        let after = try store.listJSON()
        #expect(after.count == 1)
        #expect((after.first?["days_left"] as? Int ?? 999) < 30)
    }

    @Test func aRotationThatServesLessIsRefusedUnlessForced() throws {
        let store = try Store()
        let folder = try TemporaryFolder()
        let universal = try TestPKI.mint(in: folder, name: "universal", bundle: "com.example.rot", days: 300)
        let sandboxOnly = try TestPKI.mint(
            in: folder,
            name: "sandbox",
            bundle: "com.example.rot",
            days: 400,
            environments: [.sandbox]
        )
        #expect(try store.run(["import", universal]).status == 0)
        let before = try store.listJSON()

        // Later expiry, so only what it serves can stop it: production would be lost.
        let refused = try store.run(["import", sandboxOnly, "--replace", "com.example.rot-universal"])
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("for sandbox only"), "\(refused.stderr)")
        #expect(refused.stderr.contains("com.example.rot-universal also serves production"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--force"))
        #expect(try store.listJSON().map { $0["sha256"] as? String } == before.map { $0["sha256"] as? String })
        let json = try store.run(["import", sandboxOnly, "--replace", "com.example.rot-universal", "--json"])
        #expect(json.status == 1)
        #expect(json.stdout.contains("\"narrower_coverage\""), "\(json.stdout)")

        // A renewal that serves as much is taken as it always was.
        let renewed = try TestPKI.mint(in: folder, name: "renewed", bundle: "com.example.rot", days: 500)
        #expect(try store.run(["import", renewed, "--replace", "com.example.rot-universal"]).status == 0)

        let forced = try store.run(["import", sandboxOnly, "--replace", "com.example.rot-universal", "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try store.listJSON().first?["environments"] as? [String] == ["sandbox"])
    }

    @Test func anExpiredCertificateIsRefusedUnlessForced() throws {
        let store = try Store()
        let folder = try TemporaryFolder()
        let expired = try Self.expiredBundle(in: folder)
        let refused = try store.run(["import", expired])
        #expect(refused.status == 1, "\(refused.stderr)")
        // The validity window and today.
        #expect(refused.stderr.contains("2025-10-18"), "\(refused.stderr)")
        #expect(refused.stderr.contains("2026-10-18"))
        #expect(refused.stderr.contains(Self.day(Date())) || refused.stderr.contains(Self.day(inDays: -1)))
        #expect(refused.stderr.contains("--force"))
        #expect(try store.listJSON().isEmpty)
        // Nothing half-written: no file of the store's making.
        let stored = (try? FileManager.default.contentsOfDirectory(atPath: store.path + "/credentials")) ?? []
        #expect(stored.isEmpty)

        let forced = try store.run(["import", expired, "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try store.listJSON().count == 1)
        let checked = try store.run(["check", "--json"])
        #expect(checked.status == 1)
        #expect(try Self.codes(checked) == ["expired"])
    }

    @Test func updateFixesATokenKeyInPlaceAndCheckThenPasses() throws {
        let store = try Store()
        let key = CLI.cert("keys/AuthKey_ABC123DEFG.p8")
        #expect(try store.run(["import", key, "--team-id", "ABCDE12345"]).status == 0)
        let deploy = ["--environment", "production", "--topic", "com.example.app"]
        let incomplete = try store.run(["check", "token-ABC123DEFG"] + deploy)
        #expect(incomplete.status == 1)
        #expect(incomplete.stdout.contains("apnsctl update token-ABC123DEFG"), "\(incomplete.stdout)")

        let updated = try store.run([
            "update", "token-ABC123DEFG", "--topic", "com.example.app", "--environment", "production",
        ])
        #expect(updated.status == 0, "\(updated.stderr)")
        #expect(try store.run(["check", "token-ABC123DEFG"] + deploy).status == 0)
        // Recorded, not assumed: the other environment and another app are findings.
        let sandbox = try store.run(["check", "--json", "token-ABC123DEFG", "--environment", "sandbox"])
        #expect(try Self.codes(sandbox) == ["environment_mismatch"])
        let other = try store.run(["check", "--json", "token-ABC123DEFG", "--topic", "com.example.other"])
        #expect(try Self.codes(other) == ["topic_not_covered"])
        // A derived topic of a recorded app is covered.
        #expect(try store.run(["check", "token-ABC123DEFG", "--topic", "com.example.app.voip"]).status == 0)
        // The key itself is untouched: it still signs (export reads it from the Secret Service).
        let entry = try #require(try store.listJSON().first)
        #expect(topicNames(entry["topics"]) == ["com.example.app"])
        #expect(entry["team_id"] as? String == "ABCDE12345")

        // Importing the key again as its own replacement redoes its metadata and keeps its secret.
        let again = try store.run([
            "import", key, "--team-id", "ABCDE12345", "--replace", "token-ABC123DEFG", "--topic", "com.example.app",
            "--environment", "both",
        ])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try store.run(["check", "token-ABC123DEFG", "--environment", "sandbox"]).status == 0)
        #expect(!(try InterruptedRemoveTests.secret(store, "token-ABC123DEFG")).isEmpty)

        // Certificates carry their own metadata.
        #expect(try store.run(["import", CLI.cert("pem/sandbox-bag-attributes.pem")]).status == 0)
        let refused = try store.run(["update", "com.example.app-sandbox", "--topic", "com.example.other"])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("is a certificate"))
        #expect(try store.run(["update", "token-ABC123DEFG"]).status == 64)
        #expect(try store.run(["update", "token-ABC123DEFG", "--team-id", "short"]).status == 2)
    }

    @Test func checkTopicJudgesOnlyThatAppsCredentials() throws {
        let store = try Store()
        let folder = try TemporaryFolder()
        let appA = try TestPKI.mint(
            in: folder,
            name: "a",
            bundle: "com.example.a",
            days: 300,
            environments: [.production]
        )
        let appASandbox = try TestPKI.mint(
            in: folder,
            name: "a-sandbox",
            bundle: "com.example.a",
            days: 300,
            environments: [.sandbox]
        )
        let appB = try TestPKI.mint(in: folder, name: "b", bundle: "com.example.b", days: 300, environments: [.sandbox])
        for bundle in [appA, appASandbox, appB] { #expect(try store.run(["import", bundle]).status == 0) }

        // Judging everything strictly fails on the sandbox-only certificates.
        #expect(try store.run(["check", "--environment", "production"]).status == 1)

        let scoped = try store.run(["check", "--environment", "production", "--topic", "com.example.a"])
        #expect(scoped.status == 0, "\(scoped.stdout)")
        #expect(scoped.stdout.contains("1 fit credential for com.example.a (production): com.example.a-production"))
        // The app's sandbox-only certificate could not serve it in production: skipped, not judged.
        #expect(scoped.stdout.contains("com.example.a-sandbox [other environment]"))
        #expect(scoped.stdout.contains("sandbox only"))
        #expect(scoped.stdout.contains("com.example.b-sandbox [other app]"))

        let json = try store.run(["check", "--json", "--environment", "production", "--topic", "com.example.a"])
        #expect(json.status == 0)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(report["fit"] as? [String] == ["com.example.a-production"])
        let judged = (report["credentials"] as? [[String: Any]] ?? []).compactMap { $0["credential"] as? String }
        #expect(Set(judged) == ["com.example.a-production"])
        let skipped = report["skipped"] as? [[String: Any]] ?? []
        #expect(skipped.first { $0["credential"] as? String == "com.example.b-sandbox" }?["judged"] as? Bool == false)

        // No credential that could serve the app there, or none for the app at all: exit 1.
        let none = try store.run(["check", "--environment", "production", "--topic", "com.example.b"])
        #expect(none.status == 1)
        #expect(none.stdout.contains("No stored credential is for com.example.b (production)"))
        #expect(none.stdout.contains("com.example.b-sandbox [other environment] for sandbox only"))
        let unknown = try store.run(["check", "--topic", "com.example.c"])
        #expect(unknown.status == 1)
        #expect(unknown.stdout.contains("No stored credential is for com.example.c"))
        // A credential named is still judged strictly.
        let named = try store.run([
            "check", "com.example.a-sandbox", "--environment", "production", "--topic", "com.example.a",
        ])
        #expect(named.status == 1)
        #expect(named.stdout.contains("problem:"))
    }

    @Test func warningsAndProblemsReadApart() throws {
        let store = try Store()
        let folder = try TemporaryFolder()
        let soon = try TestPKI.mint(in: folder, name: "soon", bundle: "com.example.soon", days: 5)
        #expect(try store.run(["import", soon]).status == 0)
        #expect(try store.run(["import", CLI.cert("pem/sandbox-bag-attributes.pem")]).status == 0)
        let result = try store.run(["check", "--environment", "production"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("warning: Expires in"))
        #expect(result.stdout.contains("problem: The certificate is for sandbox only"))
        // With --topic alone, an expiring credential is still fit (exit 0) and its warning shows.
        let scoped = try store.run(["check", "--topic", "com.example.soon"])
        #expect(scoped.status == 0, "\(scoped.stdout)")
        #expect(scoped.stdout.contains("warning: Expires in"))
    }
}
