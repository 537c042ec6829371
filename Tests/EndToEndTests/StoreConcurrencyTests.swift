import Foundation
import PushStore
import TestSupport
import Testing

/// The store under concurrent commands and through a symbolic link, on a store that holds
/// several apps (certificates for three apps in different environments and a token key).
@Suite(.needsSecretService)
struct StoreConcurrencyTests {
    typealias Store = StoreCommandTests.Store

    /// Certificates for com.example.alpha (both environments), .beta (sandbox) and .gamma
    /// (production), and a token key for alpha.
    static func severalApps(_ store: Store, pki: TemporaryFolder) throws {
        let apps: [(String, TestPKI.Environments)] = [
            ("com.example.alpha", [.sandbox, .production]), ("com.example.beta", [.sandbox]),
            ("com.example.gamma", [.production]),
        ]
        for (bundle, environments) in apps {
            let file = try TestPKI.mint(in: pki, name: bundle, bundle: bundle, days: 200, environments: environments)
            try store.run(["import", file]).succeeded()
        }
        try store.importTokenKey(topic: "com.example.alpha")
    }

    @Test func checkDuringRemovalsAndRotationsReportsNothingFalse() throws {
        let store = try Store()
        let pki = try TemporaryFolder()
        try Self.severalApps(store, pki: pki)
        var replacements: [(alias: String, file: String)] = []
        for number in 0..<10 {
            let removed = try TestPKI.mint(in: pki, name: "rm\(number)", bundle: "com.example.rm\(number)", days: 150)
            #expect(try store.run(["import", removed]).status == 0)
            let bundle = "com.example.rot\(number)"
            let old = try TestPKI.mint(in: pki, name: "rot\(number)-old", bundle: bundle, days: 150)
            #expect(try store.run(["import", old]).status == 0)
            let new = try TestPKI.mint(in: pki, name: "rot\(number)-new", bundle: bundle, days: 400)
            replacements.append(("\(bundle)-universal", new))
        }
        let path = store.path
        var commands: [[String]] = []
        for number in 0..<10 {
            commands.append(["remove", "com.example.rm\(number)-universal", "--store", path])
            commands.append([
                "import", replacements[number].file, "--replace", replacements[number].alias, "--store", path,
            ])
            commands.append(["check", "--store", path])
        }
        let results = CLI.runTogether(commands)
        #expect(results.count == 30)
        for result in results {
            let result = try #require(result)
            #expect(result.status == 0, "\(result.arguments): \(result.stdout)\(result.stderr)")
            #expect(!result.stdout.contains("missing from the Secret Service"), "\(result.stdout)")
        }
        // Afterwards: the three apps, the token key and the ten rotated credentials under their
        // old aliases, and nothing else, in the index, the folder and the Secret Service.
        let aliases = Set(try store.listJSON().compactMap { $0["credential"] as? String })
        let expected = Set(
            [
                "com.example.alpha-universal", "com.example.beta-sandbox", "com.example.gamma-production",
                "token-ABC123DEFG",
            ]
                + (0..<10).map { "com.example.rot\($0)-universal" }
        )
        #expect(aliases == expected)
        try StoreInterruptionTests.expectClean(store, entries: expected.count)
    }

    @Test func aStoreReachedThroughALinkIsTheStoreItLeadsTo() throws {
        let folder = try TemporaryFolder()
        let real = folder.path("real")
        let link = folder.path("link")
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real")
        let resolved = try #require(
            realpath(real, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            }
        )
        let bundle = try TestPKI.mint(in: folder, name: "alpha", bundle: "com.example.alpha", days: 200)
        #expect(try CLI.run(["import", bundle, "--store", link]).status == 0)
        let beta = try TestPKI.mint(
            in: folder,
            name: "beta",
            bundle: "com.example.beta",
            days: 200,
            environments: [.sandbox]
        )
        #expect(try CLI.run(["import", beta, "--store", real]).status == 0)
        for store in [real, link] {
            try CLI.run(["check", "--store", store]).succeeded(context: "\(store)")
            let json = try CLI.run(["list", "--json", "--store", store]).json()
            #expect(json["store"] as? String == resolved)
        }
        // The Secret Service knows the store by its real path only.
        let items = try StoreCommandTests.secretTool(["search", "--all", "application", "apnsctl", "store", resolved])
        let output = items.stdout + items.stderr
        #expect(output.components(separatedBy: "attribute.alias = ").count - 1 == 2, "\(output)")

        // A request made through the link is completed through the real path, and the reverse.
        for (requestStore, importStore) in [(link, real), (real, link)] {
            let csr = folder.path("push-\(UUID().uuidString.prefix(6)).csr")
            try CLI.run(["request", "--out", csr, "--store", requestStore]).succeeded()
            let app = "com.example.req\(UUID().uuidString.prefix(4).lowercased())"
            let certificate = try TestPKI.issue(csr: csr, bundle: app, in: folder, name: app)
            try CLI.run(["import", certificate, "--store", importStore]).succeeded()
            #expect(try CLI.run(["check", "\(app)-universal", "--store", link]).status == 0)
        }
        try CLI.run(["remove", "com.example.alpha-universal", "--store", link]).succeeded()
        #expect(try CLI.run(["check", "--store", real]).status == 0)
        #expect(try CLI.run(["remove", "--orphans", "--store", real]).stdout.contains("no orphaned secrets"))
    }

    @Test func rotationKeepsTheAliasScriptsSendWith() throws {
        let store = try Store()
        let pki = try TemporaryFolder()
        try Self.severalApps(store, pki: pki)
        let bundle = "com.example.delta"
        let old = try TestPKI.mint(in: pki, name: "delta-old", bundle: bundle, days: 100, environments: [.sandbox])
        let new = try TestPKI.mint(in: pki, name: "delta-new", bundle: bundle, days: 400, environments: [.sandbox])
        #expect(try store.run(["import", old, "--alias", "delta-push"]).status == 0)
        let gateway = try GatewayProcess(
            pki,
            name: "gateway",
            arguments: ["--environment", "sandbox", "--client-ca", CLI.cert("ca/wwdr-test-ca.pem")]
        )
        func send() throws -> CLI.Result {
            try store.run(
                [
                    "send", "delta-push", "--environment", "sandbox", "--token", GatewayCommandTests.token, "--alert",
                    "hi",
                ]
                    + gateway.connection
            )
        }
        try send().succeeded()

        // A same-app import without --replace is refused, under any alias, and changes nothing.
        try store.run(["import", new, "--alias", "delta-push-2028"]).exited(1, stderr: "--replace delta-push")
        #expect(try store.listJSON().count == 5)

        try store.run(["import", new, "--replace", "delta-push"]).succeeded(stdout: "Imported delta-push")
        let entry = try #require(try store.listJSON().first { $0["credential"] as? String == "delta-push" })
        #expect((entry["days_left"] as? Int ?? 0) > 300)
        try send().succeeded()
        let deliveries = try gateway.deliveries().filter { $0["device_token"] as? String == GatewayCommandTests.token }
        #expect(deliveries.count == 2)
        try StoreInterruptionTests.expectClean(store, entries: 5)

        // --force keeps both on purpose.
        let third = try TestPKI.mint(in: pki, name: "delta-third", bundle: bundle, days: 410, environments: [.sandbox])
        try store.run(["import", third, "--alias", "delta-spare", "--force"]).succeeded()
        #expect(try store.listJSON().count == 6)
    }

    @Test func aTakenAliasAndANonPushCertificateAreRefused() throws {
        let store = try Store()
        let pki = try TemporaryFolder()
        try Self.severalApps(store, pki: pki)
        let other = try TestPKI.mint(in: pki, name: "epsilon", bundle: "com.example.epsilon", days: 200)
        try store.run(["import", other, "--alias", "com.example.beta-sandbox"])
            .exited(1, stderr: "already has something named com.example.beta-sandbox")
        #expect(try store.listJSON().count == 4)
        try store.run([
            "import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345", "--alias", "gamma",
            "--replace", "token-ABC123DEFG",
        ]).succeeded()
        #expect(try store.run(["import", other, "--alias", "gamma"]).status == 1)

        // A TLS server certificate with its key: refused, saying what it is, unless forced.
        let server = CLI.cert("gateway/server.pem")
        try store.run(["import", server, "--key", CLI.cert("gateway/server.key")])
            .exited(1, stderr: "not an Apple push certificate", "localhost", "--force")
        #expect(try store.listJSON().count == 4)
        let files = try FileManager.default.contentsOfDirectory(atPath: store.path + "/credentials")
        #expect(files.count == 3)
        try store.run(["import", server, "--key", CLI.cert("gateway/server.key"), "--force"]).succeeded()
    }

    /// Apple may issue a second certificate for a request that was already completed: it pairs
    /// with the key the stored credential holds, as that credential's replacement.
    @Test func aSecondCertificateForACompletedRequestPairsWithItsKey() throws {
        let store = try Store()
        let pki = try TemporaryFolder()
        try Self.severalApps(store, pki: pki)
        let csr = pki.path("push.csr")
        let requested = try store.run(["request", "--out", csr]).succeeded()
        // The store holds certificates for other apps: the next step names --replace for each.
        #expect(
            requested.stdout.contains("import aps.cer --replace com.example.alpha-universal"),
            "\(requested.stdout)"
        )
        let first = try TestPKI.issue(csr: csr, bundle: "com.example.zeta", in: pki, name: "first")
        #expect(try store.run(["import", first]).status == 0)
        let second = try TestPKI.issue(csr: csr, bundle: "com.example.zeta", in: pki, name: "second")
        let refused = try store.run(["import", second]).exited(1, stderr: "--replace com.example.zeta-universal")
        #expect(!refused.stderr.contains("--key"), "\(refused.stderr)")
        try store.run(["import", second, "--replace", "com.example.zeta-universal"]).succeeded()
        #expect(try store.run(["check", "com.example.zeta-universal"]).status == 0)
        try StoreInterruptionTests.expectClean(store, entries: 5)
    }

    /// Secrets an earlier version recorded under the link's path are still found through the
    /// link, and a removal through it takes them too.
    @Test func secretsRecordedUnderALinkByAnEarlierVersionAreStillFound() async throws {
        let folder = try TemporaryFolder()
        let real = folder.path("real")
        let link = folder.path("link")
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real")
        let bundle = try TestPKI.mint(in: folder, name: "alpha", bundle: "com.example.alpha", days: 200)
        #expect(try CLI.run(["import", bundle, "--store", real]).status == 0)
        let store = CredentialStore(root: URL(fileURLWithPath: real))
        let credential = try await #require(try store.list().first)
        // Move the secret to the attributes an earlier version wrote through the link.
        let current = credential.secretItem(store: store.path)
        let secret = try #require(try await store.secrets.lookup(current))
        var legacy = current
        legacy.store = URL(fileURLWithPath: link).standardizedFileURL.path
        try await store.secrets.store(secret, for: legacy)
        try await store.secrets.remove(current)

        try CLI.run(["check", "--store", link]).succeeded()
        try CLI.run(["remove", credential.alias, "--store", link]).succeeded(
            stdout: "its secret, kept in the Secret Service (label \"apnsctl: \(credential.alias)\")"
        )
        #expect(try await store.secrets.lookup(legacy) == nil)
    }
}
