import Foundation
import TestSupport
import Testing

let insideSecretService = ProcessInfo.processInfo.environment["APNSCTL_INSIDE_SECRET_SERVICE"] == "1"

extension Trait where Self == ConditionTrait {
    /// Runs a suite only inside the private Secret Service that scripts/test starts.
    static var needsSecretService: Self {
        .enabled(
            if: insideSecretService,
            "needs the private Secret Service that scripts/test starts (scripts/with-secret-service swift test)"
        )
    }
}

/// import, list, check, export and remove against the real gnome-keyring that `scripts/test`
/// starts on a private session bus. Each test has a store of its own; secrets are told apart by
/// the store's path, so tests can run side by side.
@Suite(.needsSecretService)
struct StoreCommandTests {
    static let password = "apnsctl-test"

    final class Store: @unchecked Sendable {
        let folder: TemporaryFolder
        var path: String { folder.path("store") }
        init() throws { folder = try TemporaryFolder() }

        @discardableResult
        func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> CLI.Result
        {
            let result = try CLI.run(arguments + ["--store", path], stdin: stdin, environment: environment)
            // Whatever the test, no secret travels in argv.
            #expect(!result.arguments.contains(where: { $0.contains(StoreCommandTests.password) }))
            return result
        }

        /// Imports the fixture token key (AuthKey_ABC123DEFG.p8, team ABCDE12345) for `topic` in
        /// `environment`, and expects it stored.
        func importTokenKey(topic: String = "com.example.app", environment: String = "both") throws {
            try run([
                "import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345", "--topic", topic,
                "--environment", environment,
            ]).succeeded()
        }

        func listJSON() throws -> [[String: Any]] {
            let json = try run(["list", "--json"]).succeeded().json()
            return try #require(json["credentials"] as? [[String: Any]])
        }

        /// The Secret Service's item for this store whose `attribute` is `value`, as secret-tool
        /// looks it up.
        func secret(_ value: String, attribute: String = "alias") throws -> CLI.Result {
            try StoreCommandTests.secretTool(["lookup", "application", "apnsctl", "store", path, attribute, value])
        }

        /// The whole store folder's bytes, for leak checks.
        func allBytes() throws -> Data {
            try OnboardingTests.allBytes(under: path).reduce(into: Data()) { $0.append($1.1) }
        }
    }

    static func secretTool(_ arguments: [String]) throws -> CLI.Result {
        try CLI.runProgram("secret-tool", arguments)
    }

    struct Fixture: Sendable, CustomTestStringConvertible {
        var path: String
        var password: String? = StoreCommandTests.password
        var alias: String
        /// For fixtures whose key goes to the Secret Service: the identity's key file.
        var identityKey: String? = nil
        /// What the Secret Service holds: the private key itself, or else the bundle's password.
        var secretKind: String { identityKey == nil ? "pkcs12-password" : "private-key" }
        var testDescription: String { path }
    }

    static let fixtures: [Fixture] = [
        Fixture(path: "p12/keychain-legacy.p12", alias: "com.example.app-sandbox"),
        Fixture(path: "p12/openssl3-default.p12", alias: "com.example.app-production"),
        Fixture(path: "p12/3des-only.p12", alias: "com.example.app-universal"),
        Fixture(path: "p12/no-mac.p12", alias: "com.example.app-sandbox"),
        Fixture(
            path: "p12/empty-password.p12",
            password: nil,
            alias: "com.example.app-universal",
            identityKey: "identities/universal.key"
        ),
        Fixture(
            path: "pem/sandbox-bag-attributes.pem",
            password: nil,
            alias: "com.example.app-sandbox",
            identityKey: "identities/sandbox.key"
        ),
        Fixture(path: "p12/voip.p12", alias: "com.example.app.voip-unknown"),
        Fixture(
            path: "pem/encrypted-key-bundle.pem",
            alias: "com.example.app-production",
            identityKey: "identities/production.key"
        ),
    ]

    @Test(arguments: fixtures)
    func certificateLifecycle(_ fixture: Fixture) throws {
        let store = try Store()
        let file = CLI.cert(fixture.path)
        let passwordArguments = fixture.password == nil ? [] : ["--password-stdin"]
        let stdin = fixture.password.map { $0 + "\n" }

        try store.run(["import", file] + passwordArguments, stdin: stdin).succeeded(stdout: fixture.alias)

        let listed = try store.listJSON()
        #expect(listed.compactMap { $0["credential"] as? String } == [fixture.alias])
        #expect(listed.first?["kind"] as? String == "certificate")

        try store.run(["check", fixture.alias]).succeeded()

        // The secret is where the documentation says, readable with secret-tool.
        let lookup = try store.secret(fixture.alias).succeeded()
        if let password = fixture.password {
            #expect(try store.allBytes().range(of: Data(password.utf8)) == nil)
        }
        let modes = try FileManager.default.attributesOfItem(atPath: store.path)[.posixPermissions] as? Int
        #expect(modes == 0o700)
        for name in try FileManager.default.contentsOfDirectory(atPath: store.path + "/credentials") {
            #expect(
                try FileManager.default.attributesOfItem(atPath: store.path + "/credentials/" + name)[.posixPermissions]
                    as? Int == 0o600
            )
        }
        if fixture.secretKind == "pkcs12-password" {
            #expect(lookup.stdout == fixture.password)
        } else {
            // The stored key is the identity's own (same public key), and it is nowhere on disk.
            let keyDER = try #require(Data(base64Encoded: lookup.stdout))
            try keyDER.write(to: URL(fileURLWithPath: store.folder.path("stored-key.der")))
            let identityKey = try #require(fixture.identityKey)
            #expect(
                try Self.publicKey(store.folder.path("stored-key.der"), inform: "DER", in: store.folder)
                    == Self.publicKey(CLI.cert(identityKey), inform: "PEM", in: store.folder)
            )
            #expect(try store.allBytes().range(of: keyDER) == nil)
        }
        let byKind = try Self.secretTool([
            "search", "application", "apnsctl", "store", store.path, "kind", fixture.secretKind,
        ])
        #expect(
            byKind.stdout.contains("label = apnsctl: \(fixture.alias)")
                || byKind.stderr.contains("label = apnsctl: \(fixture.alias)")
        )

        // Export as PEM: the key matches, the file is 0600, and our own inspect reads it back.
        let pem = store.folder.path("out.pem")
        #expect(try store.run(["export", fixture.alias, "--format", "pem", "--out", pem]).status == 0)
        let mode = try FileManager.default.attributesOfItem(atPath: pem)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let inspected = try CLI.run(["inspect", "--json", pem])
        #expect(inspected.stdout.contains("\"matches_certificate\" : true"))

        // Export as PKCS#12, modern and legacy, with a new password from the environment.
        for legacy in [false, true] {
            let p12 = store.folder.path("out-\(legacy).p12")
            try store.run(
                ["export", fixture.alias, "--format", "p12", "--out", p12, "--password-env", "NEW_PASS"]
                    + (legacy ? ["--legacy"] : []),
                environment: ["NEW_PASS": "new-secret-pass"]
            ).succeeded()
            try CLI.run(
                ["inspect", "--json", "--password-env", "NEW_PASS", p12],
                environment: ["NEW_PASS": "new-secret-pass"]
            ).succeeded(stdout: "\"uses_legacy_algorithms\" : \(legacy)")
        }

        try store.run(["remove", fixture.alias]).succeeded(stdout: "Secret Service")
        #expect(try store.listJSON().isEmpty)
        let gone = try store.secret(fixture.alias)
        #expect(gone.status != 0 || gone.stdout.isEmpty)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: store.path + "/credentials")
        #expect(leftovers.isEmpty)
    }

    @Test func tokenKeyLifecycle() throws {
        let store = try Store()
        let p8 = CLI.cert("keys/AuthKey_ABC123DEFG.p8")
        try store.importTokenKey()
        let entry = try #require(try store.listJSON().first)
        #expect(entry["kind"] as? String == "token_key")
        #expect(entry["key_id"] as? String == "ABC123DEFG")
        #expect(entry["team_id"] as? String == "ABCDE12345")

        #expect(try store.run(["check", "--environment", "production", "--topic", "com.example.app"]).status == 0)
        // Named, the key is judged strictly (alone, --topic judges only that app's credentials).
        try store.run(["check", "token-ABC123DEFG", "--topic", "com.example.other", "--json"])
            .exited(1, stdout: "topic_not_covered")

        // The private key is in the Secret Service, not in the store folder: the stored PKCS#8
        // has the fixture's public key, and neither its bytes nor the fixture's are on disk.
        let lookup = try store.secret("ABC123DEFG", attribute: "key-id")
        let keyDER = try #require(Data(base64Encoded: lookup.stdout))
        try keyDER.write(to: URL(fileURLWithPath: store.folder.path("stored.der")))
        let fixturePublic = try Self.publicKey(p8, inform: "PEM", in: store.folder)
        #expect(try Self.publicKey(store.folder.path("stored.der"), inform: "DER", in: store.folder) == fixturePublic)
        try CLI.runProgram(
            "openssl",
            ["pkey", "-in", p8, "-outform", "DER", "-out", store.folder.path("fixture.der")]
        ).succeeded()
        let fixtureDER = try Data(contentsOf: URL(fileURLWithPath: store.folder.path("fixture.der")))
        let onDisk = try store.allBytes()
        #expect(onDisk.range(of: keyDER) == nil)
        #expect(onDisk.range(of: fixtureDER) == nil)

        let exported = store.folder.path("key.p8")
        #expect(try store.run(["export", "token-ABC123DEFG", "--format", "pem", "--out", exported]).status == 0)
        #expect(try Self.publicKey(exported, inform: "PEM", in: store.folder) == fixturePublic)

        #expect(try store.run(["remove", "token-ABC123DEFG"]).status == 0)
        #expect(try store.secret("ABC123DEFG", attribute: "key-id").stdout.isEmpty)
    }

    @Test func tokenKeyValidation() throws {
        let store = try Store()
        try store.run(["import", CLI.cert("keys/AuthKey_ABC123DEFG.p8")]).exited(2, stderr: "--team-id")
        try store.run(["import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABC"])
            .exited(2, stderr: "10 upper-case letters and digits")
        try store.run(["import", CLI.cert("keys/AuthKey_RSA0000001.p8"), "--team-id", "ABCDE12345"])
            .exited(2, stderr: "P-256")
        try store.run(["import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345"]).succeeded()
        try store.run(["check", "--json"]).exited(1, stdout: "token_metadata_incomplete")
    }

    @Test func importRefusesWhatCannotAuthenticate() throws {
        let store = try Store()
        try store.run(
            ["import", "--password-stdin", CLI.cert("p12/cert-only.p12")],
            stdin: Self.password + "\n"
        ).exited(2, stderr: "no private key")
        try store.run(
            ["import", "--password-stdin", CLI.cert("p12/mismatched-key.p12")],
            stdin: Self.password + "\n"
        ).exited(2, stderr: "does not belong")
        #expect(try store.listJSON().isEmpty)

        #expect(try store.run(["import", CLI.cert("pem/sandbox-bag-attributes.pem")]).status == 0)
        try store.run(
            ["import", "--password-stdin", CLI.cert("p12/keychain-legacy.p12")],
            stdin: Self.password + "\n"
        ).exited(1, stderr: "already in the store")
        #expect(try store.listJSON().count == 1)
    }

    @Test func passwordAndKeyNeverLeak() throws {
        let store = try Store()
        let unique = "Leak-Canary-\(UUID().uuidString)"
        let folder = try TemporaryFolder()
        let bundle = folder.path("canary.p12")
        // A bundle with a password no fixture uses, made by the real openssl.
        try CLI.runProgram(
            "openssl",
            [
                "pkcs12", "-export", "-in", CLI.cert("identities/universal.pem"), "-inkey",
                CLI.cert("identities/universal.key"), "-out", bundle, "-passout", "env:CANARY",
            ],
            environment: ["CANARY": unique]
        ).succeeded()
        var outputs: [CLI.Result] = []
        outputs.append(
            try CLI.run(
                ["import", "--store", store.path, "--password-env", "CANARY", bundle, "--json"],
                environment: ["CANARY": unique]
            )
        )
        outputs.append(try store.run(["list"]))
        outputs.append(try store.run(["list", "--json"]))
        outputs.append(try store.run(["check"]))
        outputs.append(try store.run(["check", "--json"]))
        outputs.append(try store.run(["check", "--format", "prometheus"]))
        outputs.append(
            try CLI.run(["inspect", "--json", "--password-env", "CANARY", bundle], environment: ["CANARY": unique])
        )
        let wrongCanary = "Wrong-Canary-\(UUID().uuidString)"
        let wrong = try CLI.run(["inspect", "--password-env", "CANARY", bundle], environment: ["CANARY": wrongCanary])
            .exited(2)
        #expect(!wrong.stdout.contains(wrongCanary) && !wrong.stderr.contains(wrongCanary))
        for output in outputs {
            #expect(!output.stdout.contains(unique))
            #expect(!output.stderr.contains(unique))
            #expect(!output.arguments.contains { $0.contains(unique) })
        }
        #expect(outputs[0].status == 0)
        #expect(try store.allBytes().range(of: Data(unique.utf8)) == nil)

        // A PEM bundle's key must not be written to the store folder in any form.
        let pemStore = try Store()
        #expect(try pemStore.run(["import", CLI.cert("pem/sandbox-bag-attributes.pem")]).status == 0)
        try CLI.runProgram(
            "openssl",
            [
                "pkey", "-in", CLI.cert("identities/sandbox.key"), "-outform", "DER",
                "-out", folder.path("key.der"),
            ]
        ).succeeded()
        let keyDER = try Data(contentsOf: URL(fileURLWithPath: folder.path("key.der")))
        let bytes = try pemStore.allBytes()
        #expect(bytes.range(of: keyDER) == nil)
        #expect(bytes.range(of: Data(keyDER.base64EncodedString().prefix(64).utf8)) == nil)
        #expect(String(decoding: bytes, as: UTF8.self).contains("PRIVATE KEY") == false)
    }

    @Test func concurrentImportsKeepTheIndexConsistent() throws {
        let store = try Store()
        let first = CLI.cert("p12/keychain-legacy.p12")
        let second = CLI.cert("p12/openssl3-default.p12")
        for round in 0..<5 {
            let results = CLI.runTogether(
                [first, second].map { ["import", "--store", store.path, "--password-stdin", $0] },
                stdin: Self.password + "\n"
            )
            #expect(
                results.allSatisfy { $0?.status == 0 },
                "round \(round): \(results.map { $0?.stderr ?? "no result" })"
            )
            let aliases = try store.listJSON().compactMap { $0["credential"] as? String }.sorted()
            #expect(aliases == ["com.example.app-production", "com.example.app-sandbox"], "round \(round)")
            let files = try FileManager.default.contentsOfDirectory(atPath: store.path + "/credentials").sorted()
            #expect(files.count == 4)
            #expect(files.filter { $0.hasPrefix("com.example.app-production.") }.count == 2)
            #expect(files.filter { $0.hasPrefix("com.example.app-sandbox.") }.count == 2)
            #expect(try store.run(["check", "--skip-secrets"]).status == 0)
            // Two removes at once too.
            let removals = CLI.runTogether(aliases.map { ["remove", "--store", store.path, $0] })
            #expect(removals.allSatisfy { $0?.status == 0 })
            #expect(try store.listJSON().isEmpty)
        }
    }

    /// Holds the store's lock while every import starts and reads its password, waits until
    /// each of them has the lock file open (waiting for the lock), then releases it: their
    /// changes really overlap, however busy the machine.
    static func importsReleasedTogether(_ files: [String], store: String) throws -> [Int32] {
        let lock = try HeldStoreLock(store: store)
        var processes: [(Process, Pipe)] = []
        for file in files {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments = ["import", "--store", store, "--password-stdin", file]
            let input = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            processes.append((process, input))
        }
        for (_, input) in processes {
            input.fileHandleForWriting.write(Data((Self.password + "\n").utf8))
            try? input.fileHandleForWriting.close()
        }
        let cameToTheLock = lock.awaitWaiting(processes.map(\.0))
        lock.release()
        #expect(cameToTheLock, "the imports neither waited for the store's lock nor ended")
        return processes.map {
            $0.0.waitUntilExit()
            return $0.0.terminationStatus
        }
    }

    @Test func importsReleasedTogetherStayConsistent() throws {
        let store = try Store()
        let files = ["p12/keychain-legacy.p12", "p12/openssl3-default.p12", "p12/3des-only.p12", "p12/expiring.p12"]
            .map(CLI.cert)
        for _ in 0..<3 {
            #expect(try Self.importsReleasedTogether(files, store: store.path) == [0, 0, 0, 0])
            let aliases = try store.listJSON().compactMap { $0["credential"] as? String }
            #expect(
                aliases.sorted() == [
                    "com.example.app-production", "com.example.app-sandbox", "com.example.app-universal",
                    "com.example.soon-universal",
                ]
            )
            #expect(try FileManager.default.contentsOfDirectory(atPath: store.path + "/credentials").count == 8)
            for alias in aliases { #expect(try store.run(["remove", alias]).status == 0) }
        }
        // The same certificate three times at once: exactly one import wins.
        let same = Array(repeating: CLI.cert("p12/keychain-legacy.p12"), count: 3)
        let statuses = try Self.importsReleasedTogether(same, store: store.path)
        #expect(statuses.sorted() == [0, 1, 1])
        #expect(try store.listJSON().count == 1)
    }

    @Test func hintsThatNameACommandWorkPasted() throws {
        let store = try Store()
        let pem = CLI.cert("pem/sandbox-bag-attributes.pem")
        #expect(try store.run(["import", pem]).status == 0)
        let again = try store.run(["import", pem]).exited(1)
        // The hint names the alias and this store, so that the command acts on the same credential.
        let commands = again.stderr.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(
            \.element
        )
        let remove = try #require(commands.first { $0.hasPrefix("apnsctl remove ") }, "\(again.stderr)")
        #expect(remove.hasSuffix("--store \(store.path)"))
        try CLI.run(Array(remove.split(separator: " ").dropFirst().map(String.init))).succeeded()
        #expect(try store.listJSON().isEmpty)
        #expect(try store.run(["import", pem]).status == 0)
    }

    @Test func rotationReplacesOnlyWhenAsked() throws {
        let store = try Store()
        let folder = try TemporaryFolder()
        let old = try TestPKI.mint(in: folder, name: "old", bundle: "com.example.rotate", days: 10)
        let new = try TestPKI.mint(in: folder, name: "new", bundle: "com.example.rotate", days: 400)
        #expect(try store.run(["import", old]).status == 0)
        let oldSecret = try store.secret("com.example.rotate-universal")
        #expect(!oldSecret.stdout.isEmpty)

        try store.run(["import", new]).exited(1, stderr: "--replace com.example.rotate-universal")
        #expect(try store.listJSON().count == 1)

        try store.run(["import", new, "--replace", "com.example.rotate-universal"]).succeeded()
        let entries = try store.listJSON()
        #expect(entries.count == 1)
        #expect((entries.first?["days_left"] as? Int ?? 0) > 300)
        #expect(try store.run(["check"]).status == 0)
        let newSecret = try store.secret("com.example.rotate-universal")
        #expect(!newSecret.stdout.isEmpty)
        #expect(newSecret.stdout != oldSecret.stdout)
    }

    /// A rotation that cannot finish (here: the Secret Service is out of reach) loses nothing.
    @Test func failedRotationKeepsTheOldCredential() throws {
        let store = try Store()
        let folder = try TemporaryFolder()
        let old = try TestPKI.mint(in: folder, name: "old", bundle: "com.example.keep", days: 100)
        let new = try TestPKI.mint(in: folder, name: "new", bundle: "com.example.keep", days: 400)
        #expect(try store.run(["import", old]).status == 0)
        let before = try store.listJSON()
        try CLI.run(
            ["import", new, "--replace", "com.example.keep-universal", "--store", store.path],
            environment: ["XDG_RUNTIME_DIR": folder.path("none")],
            removeEnvironment: ["DBUS_SESSION_BUS_ADDRESS"]
        ).exited(2)
        let after = try store.listJSON()
        #expect(after.map { $0["sha256"] as? String } == before.map { $0["sha256"] as? String })
        #expect(try store.run(["check", "com.example.keep-universal"]).status == 0)
    }

    @Test func checkFindingsAndExitCodes() throws {
        let store = try Store()
        let folder = try TemporaryFolder()
        let expiring = try TestPKI.mint(in: folder, name: "soon", bundle: "com.example.soon2", days: 5)
        #expect(try store.run(["import", CLI.cert("pem/sandbox-bag-attributes.pem")]).status == 0)
        try store.run(
            ["import", CLI.cert("pem/encrypted-key-bundle.pem"), "--password-stdin"],
            stdin: Self.password + "\n"
        ).succeeded()

        // Valid, no expectations.
        #expect(try store.run(["check", "com.example.app-sandbox"]).status == 0)
        // Expiring: valid for fewer days than the threshold.
        let soon = try store.run(["check", expiring, "--json"]).exited(1)
        #expect(Self.findingCodes(soon) == ["expiring"])
        #expect(try store.run(["check", expiring, "--warn-days", "2"]).status == 0)
        // Expired.
        let expired = try store.run(
            ["check", "--password-stdin", CLI.cert("p12/expired.p12"), "--json"],
            stdin: Self.password + "\n"
        ).exited(1)
        #expect(Self.findingCodes(expired) == ["expired"])
        // Sandbox-only checked for production.
        let mismatch = try store.run(["check", "com.example.app-sandbox", "--environment", "production", "--json"])
            .exited(1)
        #expect(Self.findingCodes(mismatch) == ["environment_mismatch"])
        #expect(try store.run(["check", "com.example.app-sandbox", "--environment", "sandbox"]).status == 0)
        // Wrong topic.
        let topic = try store.run(["check", "com.example.app-production", "--topic", "com.other.app", "--json"])
            .exited(1)
        #expect(Self.findingCodes(topic) == ["topic_not_covered"])
        // The universal fixture's topics include the voip topic.
        #expect(try store.run(["check", CLI.cert("pem/universal.cer"), "--topic", "com.example.app.voip"]).status == 0)
        // All stored at once: one entry per credential.
        let json = try store.run(["check", "--json", "--environment", "production"]).json()
        #expect((json["credentials"] as? [Any])?.count == 2)
        #expect(json["schema_version"] as? Int == 1)
        // Something that cannot be checked.
        try store.run(["check", CLI.cert("bad/photo.jpg")]).exited(2)
    }

    /// The DER public key of a private key file, as openssl derives it.
    static func publicKey(_ path: String, inform: String, in folder: TemporaryFolder) throws -> Data {
        let out = folder.path("pub-\(UUID().uuidString).der")
        try CLI.runProgram(
            "openssl",
            ["pkey", "-inform", inform, "-in", path, "-pubout", "-outform", "DER", "-out", out]
        ).succeeded()
        return try Data(contentsOf: URL(fileURLWithPath: out))
    }

    static func findingCodes(_ result: CLI.Result) -> [String] {
        guard let json = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            let credentials = json["credentials"] as? [[String: Any]]
        else { return ["<unparseable>"] }
        return credentials.flatMap { ($0["findings"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String } }
    }

    /// Parsed by Prometheus' own Python client, not by eye.
    @Test func prometheusOutputParses() throws {
        let store = try Store()
        let folder = try TemporaryFolder()
        let expiring = try TestPKI.mint(in: folder, name: "soon", bundle: "com.example.soon3", days: 5)
        #expect(try store.run(["import", expiring]).status == 0)
        #expect(try store.run(["import", CLI.cert("pem/sandbox-bag-attributes.pem")]).status == 0)
        try store.importTokenKey()
        let metrics = try store.run(["check", "--format", "prometheus"])
        #expect(metrics.status == 0, "findings are in the metrics; the check itself succeeded")
        let file = folder.path("metrics.prom")
        try metrics.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let python = CLI.packageRoot.appendingPathComponent(".venv/bin/python").path
        let parsed = try CLI.runProgram(
            python,
            [
                "-c",
                """
                import sys, json
                from prometheus_client.parser import text_string_to_metric_families
                out = {}
                for family in text_string_to_metric_families(open(sys.argv[1]).read()):
                    for sample in family.samples:
                        out.setdefault(sample.name, []).append([sample.labels, sample.value])
                print(json.dumps(out))
                """, file,
            ]
        ).succeeded()
        let samples = try #require(
            try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? [String: [[Any]]]
        )
        let problems = try #require(samples["apnsctl_credential_problem"])
        #expect(problems.count == 3)
        let byName = Dictionary(
            uniqueKeysWithValues: problems.map {
                (($0[0] as? [String: String])?["credential"] ?? "", $0[1] as? Double ?? -1)
            }
        )
        // Expiring in 5 days is a warning, not a problem: the alert rules decide when it pages.
        #expect(byName["com.example.soon3-universal"] == 0)
        #expect(byName["com.example.app-sandbox"] == 0)
        #expect(byName["token-ABC123DEFG"] == 0)
        let warnings = try #require(samples["apnsctl_credential_warning"])
        #expect(
            warnings.contains {
                ($0[0] as? [String: String])?["credential"] == "com.example.soon3-universal" && $0[1] as? Double == 1
            }
        )
        #expect(samples["apnsctl_credential_seconds_left"] == nil, "rules compute the time left with time()")
        let soonExpiry =
            samples["apnsctl_credential_expiry_timestamp_seconds"]?.first {
                ($0[0] as? [String: String])?["credential"] == "com.example.soon3-universal"
            }?[1] as? Double ?? 0
        let soonLeft = soonExpiry - Date().timeIntervalSince1970
        #expect(soonLeft > 0 && soonLeft <= 5 * 86_400)
        #expect(samples["apnsctl_credential_expiry_timestamp_seconds"]?.count == 2)
        #expect(
            samples["apnsctl_credential_findings"]?.contains { ($0[0] as? [String: String])?["finding"] == "expiring" }
                == true
        )
    }
}

/// Runs outside any Secret Service: the documented messages, exit 2, and CI's no-store path.
struct NoSecretServiceTests {
    @Test func noSessionBusIsSaidPlainly() throws {
        let folder = try TemporaryFolder()
        try CLI.run(
            ["import", CLI.cert("pem/sandbox-bag-attributes.pem"), "--store", folder.path("store")],
            environment: ["XDG_RUNTIME_DIR": folder.path("no-runtime")],
            removeEnvironment: ["DBUS_SESSION_BUS_ADDRESS"],
            timeout: 30
        ).exited(2, stderr: "no D-Bus session bus", "--password-env")
        // Nothing half-written: the store was not even created.
        #expect(!FileManager.default.fileExists(atPath: folder.path("store")))
    }

    @Test func busWithoutProviderIsSaidPlainly() async throws {
        // A session bus that cannot start a Secret Service by activation.
        let bus = try SecretServiceFailureTests.PrivateBus()
        try #require(try await bus.started(), "dbus-daemon did not start")
        try CLI.run(
            ["import", CLI.cert("pem/sandbox-bag-attributes.pem"), "--store", bus.folder.path("store")],
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address],
            timeout: 30
        ).exited(2, stderr: "no program provides the Secret Service", "gnome-keyring")
    }

    @Test func ciNeedsNoStore() throws {
        try CLI.run(
            ["check", "--password-env", "P12", CLI.cert("p12/openssl3-default.p12"), "--environment", "production"],
            environment: ["P12": "apnsctl-test"],
            removeEnvironment: ["DBUS_SESSION_BUS_ADDRESS"]
        ).succeeded()
    }
}
