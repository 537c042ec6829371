import Foundation
import LocalGateway
import TestSupport
import Testing

/// The exporter's status page at `/`, seen in a real browser: Debian's chromium, headless, driven
/// by Selenium (Tests/Browser/status-page.py) over TLS with basic authentication. It shows each
/// app's verdict, marks the one whose certificate expires within days, lists the last probes
/// with their answers, and holds neither the device token a probe sent nor any secret.
struct StatusPageBrowserTests {
    /// The base64 SHA-256 of the certificate's public key: what chromium's
    /// --ignore-certificate-errors-spki-list accepts, this one self-signed certificate only.
    static func spki(_ certificate: String) throws -> String {
        let hashed = try CLI.runProgram(
            "sh",
            [
                "-c",
                "openssl x509 -in \"$1\" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
                "sh", certificate,
            ]
        )
        try #require(hashed.status == 0, "\(hashed.stderr)")
        return hashed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aBrowserSeesEachAppsVerdictTheExpiringOneAndTheLastProbesButNoDeviceToken() async throws {
        let folder = try TemporaryFolder()
        let store = try Monitoring.store(
            in: folder,
            [
                ("myapp", "com.example.app", 400, [.sandbox, .production]),
                ("soon", "com.example.soon", 6, [.sandbox, .production]),
                ("devonly", "com.example.dev", 40, [.sandbox]),
            ]
        )
        // The gateway records every notification it accepts, with its device token.
        let delivered = folder.path("delivered.jsonl")
        let gateway = try await RunningGateway.start(.production) { $0.logFile = delivered }
        defer { Task { try? await gateway.gateway.stop() } }

        let (cert, _) = try ExporterWebConfigTests.serverCertificate(in: folder)
        let user = ExporterWebConfigTests.user
        let password = ExporterWebConfigTests.password
        let hash = try ExporterWebConfigTests.bcryptHash(user, password)
        let config = folder.path("web.yml")
        try """
        tls_server_config:
          cert_file: server.pem
          key_file: server-key.pem
        basic_auth_users:
          \(user): \(hash)
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let exporter = try ExporterProcess(
            folder,
            store: store,
            arguments: [
                "--web.config.file", config, "--gateway", "127.0.0.1:\(gateway.port)", "--ca", gateway.caFile,
            ],
            waitUntilServing: false
        )
        let serving = try await eventually(timeout: 60) {
            exporter.log.contains("serving") || !exporter.process.isRunning
        }
        try #require(serving && exporter.process.isRunning, "\(exporter.log)")
        let base = "https://127.0.0.1:\(exporter.port)"

        // Two probes: one accepted, one rejected for its environment.
        for credential in ["myapp", "devonly"] {
            let status = try ExporterWebConfigTests.status(
                "\(base)/probe?credential=\(credential)&environment=production",
                cert: cert,
                credentials: "\(user):\(password)"
            )
            #expect(status == 200, "\(credential)")
        }
        let tokens = try String(contentsOfFile: delivered, encoding: .utf8).split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["device_token"] as? String
        }
        try #require(!tokens.isEmpty, "the gateway recorded the probe's device token")

        let python = CLI.packageRoot.appendingPathComponent(".venv/bin/python").path
        let script = CLI.packageRoot.appendingPathComponent("Tests/Browser/status-page.py").path
        let browsed = try CLI.runProgram(
            python,
            [script, base + "/", try Self.spki(cert), user, "myapp"],
            stdin: password + "\n",
            timeout: 300
        )
        try #require(browsed.status == 0, "\(browsed.stderr.suffix(3000))")
        let page = try #require(
            try JSONSerialization.jsonObject(with: Data(browsed.stdout.utf8)) as? [String: Any],
            "\(browsed.stdout.prefix(2000))"
        )
        let source = page["source"] as? String ?? ""
        let text = page["text"] as? String ?? ""

        // Behind the web configuration: over TLS, and nothing without the password.
        #expect((page["url"] as? String)?.hasPrefix("https://") == true)
        let unauthenticated = page["unauthenticated"] as? String ?? ""
        #expect(
            !unauthenticated.contains("com.example") && !unauthenticated.contains("Last probes"),
            "\(unauthenticated)"
        )
        #expect(try ExporterWebConfigTests.status(base + "/", cert: cert, credentials: nil) == 401)

        #expect(page["title"] as? String == "apnsctl status")
        #expect((page["store"] as? String)?.contains("Read at") == true, "\(page["store"] ?? "")")
        #expect((page["store"] as? String)?.contains("3 credentials") == true)
        let apps = page["apps"] as? [[String: String]] ?? []
        func app(_ name: String, _ environment: String) -> [String: String]? {
            apps.first { $0["app"] == name && $0["environment"] == environment }
        }
        for environment in ["sandbox", "production"] {
            let ready = app("com.example.app", environment)
            #expect(ready?["class"] == "ready" && ready?["text"]?.contains("ready") == true, "\(apps)")
            // Six days from now is five whole days and some hours: `check` says 5 days left too.
            let soon = app("com.example.soon", environment)
            #expect(soon?["class"] == "expiring", "\(apps)")
            #expect(soon?["text"]?.contains("expires soon: 5 days left") == true, "\(soon ?? [:])")
        }
        #expect(app("com.example.dev", "sandbox")?["class"] == "ready")
        #expect(app("com.example.dev", "production") == nil, "a development app is not listed for production")

        let probes = page["probes"] as? [[String: String]] ?? []
        let accepted = probes.first { $0["credential"] == "myapp" }
        #expect(accepted?["class"] == "ready", "\(probes)")
        #expect(accepted?["text"]?.contains("success: accepted") == true, "\(probes)")
        #expect(accepted?["text"]?.contains("tls ") == true, "its phases: \(probes)")
        let rejected = probes.first { $0["credential"] == "devonly" }
        #expect(rejected?["class"] == "failure", "\(probes)")
        #expect(rejected?["text"]?.contains("403 BadCertificateEnvironment") == true, "\(probes)")

        // Its links and form work in the browser, behind the same authentication.
        let links = page["links"] as? [String] ?? []
        #expect(links.contains("\(base)/metrics"), "\(links)")
        #expect(links.contains("\(base)/probe?credential=myapp&environment=production"), "\(links)")
        #expect((page["metrics"] as? String)?.contains("apnsctl_app_ready{") == true)
        #expect((page["probe_url"] as? String)?.contains("/probe?credential=myapp&environment=production") == true)
        #expect((page["probe"] as? String)?.contains("probe_success 1") == true, "\(page["probe"] ?? "")")

        // No device token, no secret, no script.
        for token in tokens {
            #expect(!source.lowercased().contains(token.lowercased()), "the probe's device token is on the page")
        }
        #expect(source.range(of: "[0-9A-Fa-f]{64}", options: .regularExpression) == nil, "nothing like a device token")
        #expect(!source.contains(password) && !source.contains("PRIVATE KEY"))
        #expect(!source.contains("<script"))
        #expect(!text.isEmpty)
        #expect(exporter.stop() == 0)
    }
}
