import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every example in every command's `--help` is run as printed, through a shell, in one working
/// folder, in the order a user meets them: make a test identity, serve the local gateway, then
/// inspect, import, list, update, check, handshake, send, preflight, export and remove. Each must
/// exit 0.
///
/// What the test provides, and the only changes it makes to the printed text:
///
/// | printed                  | what the test does                                                       |
/// |--------------------------|--------------------------------------------------------------------------|
/// | `2197` (gateway port)    | replaced by a free port, as tests run side by side                        |
/// | `AuthKey_ABC123DEFG.p8`  | the test PKI's token key, copied into the folder under that name          |
/// | `tokens.txt`             | three made-up device tokens, written into the folder                      |
/// | `P12_PASSWORD`           | set in the environment, as the help says                                  |
/// | the store                | `APNSCTL_STORE` names a throw-away store in the folder                    |
/// | `apnsctl gateway serve`  | started in the background and stopped when the other examples are done   |
/// | `aps.cer`                | made from the `push.csr` the request example wrote, signed by the test    |
/// |                          | PKI's stand-in Apple CA for com.example.onboarded, as Apple's portal would |
/// | `<CHANNEL-ID>`           | the channel ID the `apnsctl channels create` example printed              |
/// | `push-credentials.git`   | an empty bare repository made in the folder with `git init --bare`        |
@Suite(.needsPrivateSecretService)
struct HelpExamplesTests {
    /// The commands, in the order their examples run; every command of the binary must be here.
    static let order: [[String]] = [
        ["gateway"], ["gateway", "mint-identity"], ["gateway", "serve"], ["request"], ["inspect"], ["import"],
        ["list"], ["update"], ["check"], ["handshake"], ["send"], ["results"], ["results", "summary"],
        ["results", "tokens"], ["channels"], ["channels", "create"],
        ["channels", "list"], ["channels", "show"], ["channels", "delete"], ["preflight"], ["trust"], ["exporter"],
        ["export"], ["store"], ["store", "copy"],
        ["remove"],
        ["team"], ["team", "init"], ["team", "join"], ["team", "add"], ["team", "remove"], ["team", "sync"],
        ["team", "status"],
    ]

    /// The examples of a help text: the lines after "Examples" that start with `apnsctl`, each with
    /// the lines it continues onto (a trailing backslash), as printed without their indentation.
    static func examples(inHelp help: String) -> [String] {
        var examples: [String] = []
        var inExamples = false
        var continuing = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("Examples") {
                inExamples = true
                continue
            }
            guard inExamples else { continue }
            if continuing, let last = examples.popLast() {
                examples.append(last + "\n" + text)
            } else if line.hasPrefix("  apnsctl ") {
                examples.append(text)
            } else if text.isEmpty || !examples.isEmpty {
                // The introduction ends at the first example; the examples end at a blank line.
                inExamples = false
            }
            continuing = text.hasSuffix("\\")
        }
        return examples
    }

    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// An OpenBao dev server (root token `examples-root`) with Transit mounted, for the examples
    /// that name a store in Vault.
    static func startVault(in folder: TemporaryFolder) throws -> (process: Process, address: String) {
        let bao = CLI.packageRoot.appendingPathComponent(".venv/bin/bao").path
        try #require(FileManager.default.isExecutableFile(atPath: bao), "OpenBao is not installed: run scripts/setup")
        let port = try unusedLoopbackPort()
        let address = "http://127.0.0.1:\(port)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: bao)
        process.arguments = [
            "server", "-dev", "-dev-root-token-id=examples-root", "-dev-listen-address=127.0.0.1:\(port)",
            "-dev-no-store-token",
        ]
        process.environment = ["HOME": folder.path("."), "PATH": "/usr/bin:/bin"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let client = ["BAO_ADDR": address, "BAO_TOKEN": "examples-root"]
        waitUntil {
            !process.isRunning || (try? CLI.runProgram(bao, ["status"], environment: client))?.status == 0
        }
        let transit = try CLI.runProgram(bao, ["secrets", "enable", "transit"], environment: client)
        try #require(transit.status == 0, "\(transit.stderr)")
        return (process, address)
    }

    @Test func everyExampleInEveryHelpWorksAsPrinted() throws {
        let folder = try TemporaryFolder()
        let port = try unusedLoopbackPort()
        let binaryFolder = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path
        var environment = [
            "PATH": binaryFolder + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "APNSCTL_STORE": folder.path("store"),
            "P12_PASSWORD": "examples-\(UUID().uuidString)",
        ]
        try FileManager.default.copyItem(
            atPath: CLI.cert("keys/AuthKey_ABC123DEFG.p8"),
            toPath: folder.path("AuthKey_ABC123DEFG.p8")
        )
        let bare = try CLI.runProgram("git", ["init", "--quiet", "--bare", folder.path("push-credentials.git")])
        try #require(bare.status == 0, "\(bare.stderr)")
        try (1...3).map { String(repeating: String(format: "%02x", $0), count: 32) }.joined(separator: "\n")
            .write(toFile: folder.path("tokens.txt"), atomically: true, encoding: .utf8)

        // Every command of the binary has examples, and is in the order above.
        let commands = try PackagingTests.commandPaths().filter { $0.count > 1 }.map { Array($0.dropFirst()) }
        #expect(Set(commands) == Set(Self.order), "commands without a place in the order: \(commands)")

        var seen: Set<String> = []
        var gateway: Process?
        var vault: Process?
        defer {
            for process in [gateway, vault].compactMap({ $0 }) {
                kill(process.processIdentifier, SIGTERM)
                process.waitUntilExit()
            }
        }
        var ran = 0
        var channel: String?
        for command in Self.order {
            let help = try CLI.run(command + ["--help"])
            #expect(help.status == 0)
            let examples = Self.examples(inHelp: help.stdout)
            #expect(!examples.isEmpty, "apnsctl \(command.joined(separator: " ")) --help has no examples")
            #expect(
                examples.contains { $0.contains("apnsctl \(command.joined(separator: " "))") }
                    || command == ["gateway"],
                "no example of apnsctl \(command.joined(separator: " ")) is of it"
            )
            for printed in examples where seen.insert(printed).inserted {
                let example = printed.replacingOccurrences(of: "2197", with: String(port))
                    .replacingOccurrences(of: "<CHANNEL-ID>", with: channel ?? "<CHANNEL-ID>")
                    .replacingOccurrences(of: "~/.local/share/apnsctl", with: folder.path("store"))
                // A store in Vault: an OpenBao dev server, as an operator would have one.
                if example.contains("vault:"), vault == nil {
                    let started = try Self.startVault(in: folder)
                    vault = started.process
                    environment["VAULT_ADDR"] = started.address
                    environment["VAULT_TOKEN"] = "examples-root"
                }
                if example.hasPrefix("apnsctl exporter") {
                    try Self.runExporter(example, in: folder, environment: environment)
                    ran += 1
                    continue
                }
                if example.hasPrefix("apnsctl gateway serve") {
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: "/bin/sh")
                    process.arguments = ["-c", "exec " + example]
                    process.currentDirectoryURL = folder.url
                    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
                    process.standardOutput = FileHandle.nullDevice
                    process.standardError = FileHandle.nullDevice
                    try process.run()
                    gateway = process
                    var listening = false
                    waitUntil {
                        listening = Self.accepts(port: port)
                        return listening || !process.isRunning
                    }
                    try #require(listening, "the gateway of \(printed) did not start listening")
                    continue
                }
                let result = try CLI.runProgram(
                    "/bin/sh",
                    ["-c", "cd \"$1\" || exit 99\n" + example, "sh", folder.url.path],
                    environment: environment
                )
                ran += 1
                #expect(result.status == 0, "\(printed)\nexit \(result.status)\n\(result.stdout)\n\(result.stderr)")
                if example.contains("apnsctl channels create"),
                    let id = result.stdout.firstMatch(of: /created channel (\S+)/)
                {
                    channel = String(id.1)
                }
                // Apple's portal, played by the test: the CSR the request example wrote comes back as aps.cer.
                if example.contains("apnsctl request --out push.csr") {
                    _ = try TestPKI.issue(
                        csr: folder.path("push.csr"),
                        bundle: "com.example.onboarded",
                        in: folder
                    )
                }
            }
        }
        #expect(ran >= 20)
        // What the examples did: the gateway delivered, export wrote its files, remove removed.
        for written in ["app.p12", "app.pem", "app-legacy.p12", "sent.jsonl", "apnsctl.prom"] {
            #expect(FileManager.default.fileExists(atPath: folder.path(written)), "\(written) was not written")
        }
        let list = try CLI.run(["list", "--json"], environment: environment)
        #expect(list.stdout.contains("com.example.app-universal"))
        #expect(!list.stdout.contains("token-ABC123DEFG"))
        #expect(list.stdout.contains("com.example.onboarded-universal"), "aps.cer completed the request")
        #expect(channel != nil, "channels create printed no channel ID")
    }

    /// A long-running example: started, scraped until it serves the store's series (and, with a
    /// gateway, a probe succeeds), then stopped with SIGTERM, which must end it with status 0.
    static func runExporter(_ printed: String, in folder: TemporaryFolder, environment: [String: String]) throws {
        let port = try unusedLoopbackPort()
        let example = printed.replacingOccurrences(of: "9797", with: String(port))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exec " + example.replacingOccurrences(of: "\\\n", with: " ")]
        process.currentDirectoryURL = folder.url
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        try Monitoring.waitUntilServing("http://127.0.0.1:\(port)/", process: process)
        let metrics = try Monitoring.get("http://127.0.0.1:\(port)/metrics")
        #expect(metrics.status == 200, "\(printed)")
        #expect(metrics.body.contains("x509_cert_not_after{"), "\(printed): \(metrics.body)")
        if example.contains("--gateway") {
            let probe = try Monitoring.get(
                "http://127.0.0.1:\(port)/probe?credential=com.example.app-universal&environment=sandbox"
            )
            #expect(probe.body.contains("probe_success 1"), "\(printed): \(probe.body)")
        }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(printed) stops cleanly on SIGTERM")
    }
}
