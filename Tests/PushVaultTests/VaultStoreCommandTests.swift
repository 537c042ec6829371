import Foundation
import NIOHTTP1
import TestSupport
import Testing

@testable import PushVault

/// The command line on a store in OpenBao (`--store vault:secret/PREFIX`), as an engineer, a
/// server and the exporter use it, each with the policy docs/vault-policies gives its role.
@Suite(
    "Every command on a store in Vault",
    .enabled(if: BaoDevServer.isAvailable, Comment(rawValue: BaoDevServer.missingMessage)),
    .baoDevServer,
    // One command at a time against the one dev server: its answers stay well within the 3.5 s
    // apnsctl allows a request, even on a loaded machine.
    .serialized,
    .timeLimit(.minutes(10))
)
struct VaultStoreCommandTests {
    static let keyID = Fixtures.keyID
    static let teamID = Fixtures.teamID
    static let p12 = Fixtures.cert("p12/3des-only.p12")
    static let p8 = Fixtures.cert("keys/AuthKey_ABC123DEFG.p8")
    /// The fixtures' bundle password, given to apnsctl in its environment, never its arguments.
    static let password = "apnsctl-test"

    /// A store of its own on the suite's server, with a token for each role.
    struct Bench {
        let server: BaoDevServer
        let prefix: String
        let folder: TemporaryFolder
        let writer: String
        let reader: String
        let exporter: String
        var location: String { "vault:secret/\(prefix)" }

        init(_ server: BaoDevServer) async throws {
            self.server = server
            try await server.enableTransit()
            prefix = "apnsctl-\(UUID().uuidString.prefix(8).lowercased())"
            folder = try TemporaryFolder()
            writer = try await server.token(policy: "writer-\(prefix)", hcl: Self.policy("writer", prefix: prefix))
            reader = try await server.token(policy: "reader-\(prefix)", hcl: Self.policy("reader", prefix: prefix))
            exporter = try await server.token(
                policy: "exporter-\(prefix)",
                hcl: Self.policy("exporter", prefix: prefix)
            )
        }

        /// The role's policy as docs/vault-policies gives it, for this store's prefix.
        static func policy(_ role: String, prefix: String) throws -> String {
            let file = CLI.packageRoot.appendingPathComponent("docs/vault-policies/\(role).hcl").path
            return try String(contentsOfFile: file, encoding: .utf8).replacingOccurrences(
                of: "/apnsctl/",
                with: "/\(prefix)/"
            )
        }

        /// Runs apnsctl on this store with `token`; as a server (`server: true`) it runs with a
        /// HOME of its own and no D-Bus session: only the Vault address and token.
        func run(
            _ arguments: [String],
            token: String,
            server asServer: Bool = false,
            environment: [String: String] = [:],
            timeout: TimeInterval = 90
        ) throws -> CLI.Result {
            var environment = environment
            environment["VAULT_ADDR"] = server.address
            environment["VAULT_TOKEN"] = token
            var removed = ["APNSCTL_STORE", "BAO_ADDR", "BAO_TOKEN", "VAULT_TOKEN_FILE", "APNSCTL_IDENTITY"]
            if asServer {
                let home = folder.path("server-home")
                try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
                environment["HOME"] = home
                removed += ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "XDG_DATA_HOME"]
            }
            let result = try CLI.run(
                arguments + ["--store", location],
                environment: environment,
                removeEnvironment: removed,
                timeout: timeout
            )
            for secret in [writer, reader, exporter, BaoDevServer.rootToken] {
                #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret), "a token in the output")
            }
            return result
        }

        /// Imports the universal bundle and the token key as an engineer (the writer).
        func importBoth() throws {
            try run(
                ["import", VaultStoreCommandTests.p12, "--password-env", "P12_PASSWORD", "--alias", "app"],
                token: writer,
                environment: ["P12_PASSWORD": VaultStoreCommandTests.password]
            ).succeeded()
            try run(
                [
                    "import", VaultStoreCommandTests.p8, "--team-id", VaultStoreCommandTests.teamID, "--topic",
                    "com.example.app", "--environment", "both", "--alias", "key",
                ],
                token: writer
            ).succeeded()
        }

        /// Every entry under the store's prefix, with its fields (read with the root token).
        func entries() async throws -> [String: [String: String]] {
            let kv = try server.rootClient().kv()
            var found: [String: [String: String]] = [:]
            var folders = [prefix]
            while let folder = folders.popLast() {
                for name in try await kv.list(folder) {
                    if name.hasSuffix("/") {
                        folders.append(folder + "/" + name.dropLast())
                    } else if let entry = try await kv.readIfPresent(folder + "/" + name) {
                        found[folder + "/" + name] = entry.data
                    }
                }
            }
            return found
        }

        func indexVersion() async throws -> Int {
            try await server.rootClient().kv().metadata("\(prefix)/files/index.json").currentVersion
        }
    }

    @Test("An engineer imports; a server with only Vault's address and a reader token sends with both credentials")
    func engineerImportsAndAServerSends() async throws {
        let bench = try await Bench(try server())
        try bench.importBoth()
        try bench.run(["list"], token: bench.writer).succeeded(stdout: "app", "key")
        try bench.run(["check", "--json"], token: bench.writer).succeeded()
        // APNSCTL_STORE names it as --store does; team commands refuse it (Vault's policies share it).
        let vault = ["VAULT_ADDR": bench.server.address, "VAULT_TOKEN": bench.reader]
        try CLI.run(
            ["list"],
            environment: vault.merging(["APNSCTL_STORE": bench.location]) { $1 }
        ).succeeded(stdout: "key")
        try CLI.run(["team", "status", "--store", bench.location], environment: vault)
            .exited(64, stderr: "shared through git")

        let log = bench.folder.path("gateway.jsonl")
        let gateway = try await RunningGateway.start(.sandbox) { $0.logFile = log }
        defer { Task { await gateway.stop() } }
        let connection = ["--gateway", "127.0.0.1:\(gateway.port)", "--ca", gateway.caFile]
        try bench.run(["preflight", "--environment", "sandbox"] + connection, token: bench.reader).succeeded()

        // The server: no keyring, no store folder, no file of the credentials; Vault only.
        for alias in ["app", "key"] {
            try bench.run(
                ["send", alias, "--environment", "sandbox", "--token", Fixtures.token.hex, "--alert", "hi"]
                    + connection,
                token: bench.reader,
                server: true
            ).succeeded(context: "\(alias)")
        }
        // A bulk run long enough to be watched: no process's arguments hold a token, and the
        // server's HOME holds no file with one.
        let tokens = bench.folder.path("tokens.txt")
        try (0..<1000).map { String(format: "%064x", $0) }.joined(separator: "\n")
            .write(toFile: tokens, atomically: true, encoding: .utf8)
        // (The dev server's own root token is on its command line, which the test wrote.)
        let watcher = CommandLineWatcher(secrets: [bench.reader, bench.writer])
        let bulk = try bench.run(
            [
                "send", "key", "--environment", "sandbox", "--tokens", tokens, "--results",
                bench.folder.path("sent.jsonl"),
                "--alert", "bulk",
            ] + connection,
            token: bench.reader,
            server: true,
            timeout: 300
        )
        let seen = watcher.stop()
        #expect(bulk.status == 0, "\(bulk.stdout)\(bulk.stderr)")
        #expect(seen.looked > 0 && seen.found.isEmpty, "a token in a command line: \(seen.found)")
        for file in FileManager.default.enumerator(atPath: bench.folder.path("server-home"))?.allObjects ?? [] {
            let path = bench.folder.path("server-home/\(file)")
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            #expect(!text.contains(bench.reader), "the token in \(path)")
        }
        let records = try await Self.records(log)
        #expect(records.contains { $0["auth"] as? String == "certificate" })
        // The gateway verified the ES256 token against the .p8's public key (else 403).
        #expect(records.contains { $0["auth"] as? String == "token" && $0["key_id"] as? String == Self.keyID })
        #expect(!FileManager.default.fileExists(atPath: bench.folder.path("server-home/.local/share/apnsctl")))

        // The key is in Transit, not exportable, and in no KV entry; exporting it is refused.
        let transit = try CLI.runProgram(
            BaoDevServer.binary,
            ["read", "-format=json", "transit/keys/apns-\(Self.keyID)"],
            environment: ["BAO_ADDR": bench.server.address, "BAO_TOKEN": BaoDevServer.rootToken]
        )
        let key = try JSONSerialization.jsonObject(with: Data(transit.stdout.utf8)) as? [String: Any]
        let data = key?["data"] as? [String: Any]
        #expect(data?["exportable"] as? Bool == false, "\(transit.stdout)\(transit.stderr)")
        try bench.run(["export", "key", "--format", "pem"], token: bench.writer)
            .exited(2, stderr: "cannot be exported")
        let der = try Fixtures.providerKey().pkcs8.withUnsafeBytes { Data($0) }
        let pem = try String(contentsOfFile: Self.p8, encoding: .utf8)
        for (path, fields) in try await bench.entries() {
            for value in fields.values {
                let decoded = Data(base64Encoded: value) ?? Data()
                #expect(
                    !value.contains(der.base64EncodedString()) && decoded.range(of: der) == nil
                        && !value.contains(pem.split(separator: "\n")[1]),
                    "the .p8 in \(path)"
                )
            }
        }

        // The reader's policy lets it send, not change the store: refused naming path and capability.
        let refused = try bench.run(["remove", "app"], token: bench.reader)
            .exited(2, stderr: "secret/data/\(bench.prefix)/")
        #expect(refused.stderr.contains("\"create\"") || refused.stderr.contains("\"update\""), "\(refused.stderr)")
        #expect(try bench.run(["list"], token: bench.writer).stdout.contains("app"))
    }

    @Test("A rotation keeps the alias and adds a version; of two imports to one alias, one wins")
    func rotationAndConcurrentImports() async throws {
        let bench = try await Bench(try server())
        try bench.importBoth()
        let before = try await bench.indexVersion()
        try bench.run(
            [
                "import", Fixtures.cert("p12/openssl3-default.p12"), "--password-env", "P", "--replace", "app",
                "--force",
            ],
            token: bench.writer,
            environment: ["P": VaultStoreCommandTests.password]
        ).succeeded()
        #expect(try await bench.indexVersion() == before + 1)
        let listed = try bench.run(["list", "--json"], token: bench.writer)
        #expect(listed.stdout.contains("\"credential\" : \"app\""), "\(listed.stdout)")
        // The version before the rotation is still there for an operator to read.
        let kv = try bench.server.rootClient().kv()
        let old = try await kv.read("\(bench.prefix)/files/index.json", version: before)
        #expect(
            Data(base64Encoded: old.data["value"] ?? "").map { String(decoding: $0, as: UTF8.self) }?.contains("3des")
                == true
        )

        let results = Self.together(
            [
                ["import", Fixtures.cert("p12/expiring.p12"), "--password-env", "P", "--alias", "same", "--force"],
                ["import", Fixtures.cert("p12/voip.p12"), "--password-env", "P", "--alias", "same", "--force"],
            ],
            bench: bench,
            environment: ["P": VaultStoreCommandTests.password]
        )
        try bench.run(["update", "key", "--environment", "sandbox"], token: bench.writer).succeeded()
        let statuses = results.map(\.status).sorted()
        // The loser is refused whichever way it lost: waiting on the lock while the index moved,
        // or finding the alias taken once the winner was done.
        #expect(statuses.count == 2 && statuses.first == 0 && statuses.last != 0, "\(results.map { $0.stderr })")
        let loser = results.first { $0.status != 0 }
        #expect(loser?.stderr.contains("nothing was") == true, "\(loser?.stderr ?? "")")
        try bench.run(["remove", "same"], token: bench.writer).succeeded()
        let left = try bench.run(["list", "--json"], token: bench.writer).stdout
        #expect(!left.contains("\"same\"") && left.contains("\"sandbox\""), "\(left)")
    }

    @Test("Two servers present one provider token; once it is old, five mint exactly one")
    func serversShareTheProviderToken() async throws {
        let bench = try await Bench(try server())
        try bench.importBoth()
        let log = bench.folder.path("gateway.jsonl")
        let gateway = try await RunningGateway.start(.sandbox) { $0.logFile = log }
        defer { Task { await gateway.stop() } }
        let send = [
            "send", "key", "--environment", "sandbox", "--token", Fixtures.token.hex, "--alert", "hi", "--gateway",
            "127.0.0.1:\(gateway.port)", "--ca", gateway.caFile,
        ]
        for _ in 0..<2 {
            try bench.run(send, token: bench.reader, server: true).succeeded()
        }
        let first = try await Self.records(log).compactMap { $0["token_iat"] as? Int }
        #expect(first.count == 2 && Set(first).count == 1, "\(first)")

        // The shared token made older than the refresh age: the next five sends mint one.
        let kv = try bench.server.rootClient().kv()
        let path = "\(bench.prefix)/tokens/\(Self.keyID)"
        let entry = try await kv.read(path)
        var aged = entry.data
        aged["iat"] = String(Int(Date().timeIntervalSince1970) - 41 * 60)
        try await kv.write(path, data: aged, cas: entry.version)
        // A token minted within the first one's second would carry its iat and look the same
        // in the gateway's log: the five sends start in the next second.
        try await eventually { Int(Date().timeIntervalSince1970) > first.first ?? 0 }
        let results = Self.together(Array(repeating: send, count: 5), bench: bench, token: bench.reader)
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
        let after = try await Self.records(log).compactMap { $0["token_iat"] as? Int }.dropFirst(2)
        #expect(after.count == 5 && Set(after).count == 1 && after.first != first.first, "\(after)")
        #expect(try await kv.read(path).version == entry.version + 2, "one write to age it, one mint")
    }

    @Test("The exporter reads a store in Vault with its own policy: /metrics and /probe")
    func exporterOnVault() async throws {
        let bench = try await Bench(try server())
        try bench.importBoth()
        let gateway = try await RunningGateway.start(.sandbox)
        defer { Task { await gateway.stop() } }
        let port = try unusedLoopbackPort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = [
            "exporter", "--listen", "127.0.0.1:\(port)", "--skip-secrets", "--store", bench.location, "--gateway",
            "127.0.0.1:\(gateway.port)", "--ca", gateway.caFile,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["VAULT_ADDR"] = bench.server.address
        environment["VAULT_TOKEN"] = bench.exporter
        environment.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let metrics = try await Self.get(
            "http://127.0.0.1:\(port)/metrics",
            until: { $0.contains("x509_cert_not_after") }
        )
        #expect(metrics.contains("x509_cert_not_after"), "\(metrics)")
        #expect(metrics.contains("apnsctl_check_success"), "\(metrics)")
        let probe = try await Self.get(
            "http://127.0.0.1:\(port)/probe?credential=key&environment=sandbox",
            until: { $0.contains("probe_success") }
        )
        #expect(probe.contains("probe_success 1"), "\(probe)")
    }

    @Test("A sealed server and a stopped one: exit 2 within seconds, naming the address")
    func sealedAndStopped() async throws {
        let own = try await BaoDevServer.start()
        defer { own.stop() }
        let bench = try await Bench(own)
        try bench.importBoth()
        try await own.admin(.PUT, "sys/seal")
        // "Within seconds" is the process's own deadline: a command still running after it is
        // recorded as not finishing (the client's timeouts are 3 s to connect, 3.5 s a request).
        let sealed = try bench.run(["list"], token: bench.writer, timeout: 30).exited(2, stderr: own.address)
        #expect(sealed.stderr.contains("sealed"), "\(sealed.stderr)")
        own.stop()
        try bench.run(["check"], token: bench.writer, timeout: 30).exited(2, stderr: own.address)
    }

    @Test("store copy from a team store into Vault: every credential there, the same verdicts")
    func copyIntoVault() async throws {
        let bench = try await Bench(try server())
        let bare = bench.folder.path("team.git")
        #expect(try CLI.runProgram("git", ["init", "--quiet", "--bare", bare]).status == 0)
        let team = bench.folder.path("team-store")
        try CLI.run(["team", "init", bare, "--name", "alice", "--store", team]).succeeded()
        try CLI.run(
            ["import", Self.p12, "--password-env", "P", "--alias", "app", "--store", team],
            environment: ["P": Self.password]
        ).succeeded()
        try CLI.run([
            "import", Self.p8, "--team-id", Self.teamID, "--topic", "com.example.app", "--environment", "both",
            "--alias", "key", "--store", team,
        ]).succeeded()
        let before = try Self.verdicts(try CLI.run(["check", "--json", "--store", team]).stdout)
        #expect(before.keys.sorted() == ["app", "key"], "\(before)")

        let vault = ["VAULT_ADDR": bench.server.address, "VAULT_TOKEN": bench.writer]
        let copied = try CLI.run(["store", "copy", team, bench.location, "--json"], environment: vault).succeeded()
        #expect(copied.stdout.components(separatedBy: "\"outcome\" : \"copied\"").count == 3, "\(copied.stdout)")
        // The report follows its published schema, checked by a validator no one here wrote.
        try CLI.runProgram(
            CLI.packageRoot.appendingPathComponent(".venv/bin/python").path,
            [CLI.packageRoot.appendingPathComponent("scripts/validate-json").path, "store-copy"],
            stdin: copied.stdout
        ).succeeded()
        let checked = try bench.run(["check", "--json"], token: bench.reader).succeeded()
        #expect(try Self.verdicts(checked.stdout) == before, "the same findings in Vault as in the team store")

        // Run again, the copy finds both there; asked to, it removes the moved key from the source.
        try CLI.run(["store", "copy", team, bench.location], environment: vault)
            .succeeded(stdout: "already there")
        let keyring = bench.folder.path("keyring-store")
        #expect(try CLI.run(["import", Self.p8, "--team-id", Self.teamID, "--store", keyring]).status == 0)
        let other = try await Bench(bench.server)
        try CLI.run(
            ["store", "copy", keyring, other.location, "--remove-moved-keys"],
            environment: ["VAULT_ADDR": other.server.address, "VAULT_TOKEN": other.writer]
        ).succeeded(stdout: "its key was removed from")
        #expect(!(try CLI.run(["list", "--store", keyring]).stdout.contains(Self.keyID)))
    }

    // MARK: Helpers

    static func records(_ log: String) async throws -> [[String: Any]] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// Each credential's findings (their codes, sorted) in `check --json`.
    static func verdicts(_ json: String) throws -> [String: [String]] {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        var verdicts: [String: [String]] = [:]
        for result in object?["credentials"] as? [[String: Any]] ?? [] {
            guard let name = result["credential"] as? String else { continue }
            let findings = result["findings"] as? [[String: Any]] ?? []
            verdicts[name] = findings.compactMap { $0["code"] as? String }.sorted()
        }
        return verdicts
    }

    /// Runs the commands at once on the bench's store, each on a thread of its own.
    static func together(
        _ commands: [[String]],
        bench: Bench,
        token: String? = nil,
        environment: [String: String] = [:]
    ) -> [CLI.Result] {
        let lock = NSLock()
        nonisolated(unsafe) var results: [CLI.Result] = []
        let group = DispatchGroup()
        for command in commands {
            group.enter()
            Thread {
                let result = try? bench.run(
                    command,
                    token: token ?? bench.writer,
                    server: token != nil,
                    environment: environment
                )
                lock.withLock { if let result { results.append(result) } }
                group.leave()
            }.start()
        }
        group.wait()
        return results
    }

    /// The body of a GET (curl's), asked again until `until` holds (the bound only ends a hung test).
    static func get(_ url: String, until: (String) -> Bool) async throws -> String {
        var last = ""
        try await eventually {
            last = (try? CLI.runProgram("/usr/bin/curl", ["-s", "--max-time", "5", url]).stdout) ?? ""
            return until(last)
        }
        return last
    }
}

/// Scans every process's command line (`/proc/*/cmdline`) until stopped, for secrets.
final class CommandLineWatcher: @unchecked Sendable {
    private let lock = NSLock()
    private var running = true
    private var found: [String] = []
    private var looked = 0

    init(secrets: [String]) {
        let watcher = self
        Thread {
            while watcher.lock.withLock({ watcher.running }) {
                let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
                for pid in pids where pid.allSatisfy(\.isNumber) {
                    guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { continue }
                    let line = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\0", with: " ")
                    watcher.lock.withLock {
                        watcher.looked += 1
                        if secrets.contains(where: line.contains) { watcher.found.append(line) }
                    }
                }
                usleep(20_000)
            }
        }.start()
    }

    /// Stops scanning; how many command lines were looked at and those that held a secret.
    func stop() -> (looked: Int, found: [String]) {
        lock.withLock {
            running = false
            return (looked, found)
        }
    }
}
