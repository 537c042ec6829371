import Foundation
import TestSupport
import Testing

/// `apnsctl exporter --web.config.file` in exporter-toolkit's format, as node_exporter and
/// blackbox_exporter take it: TLS and basic authentication checked with curl, the bcrypt hash
/// made by htpasswd (Apache's implementation, not the one that verifies it), and files that
/// cannot be used refused at start.
struct ExporterWebConfigTests {
    static let user = "prometheus"
    static let password = "scrape-Pass-1"

    /// A self-signed server certificate for 127.0.0.1, made by the openssl CLI.
    static func serverCertificate(in folder: TemporaryFolder) throws -> (cert: String, key: String) {
        let cert = folder.path("server.pem")
        let key = folder.path("server-key.pem")
        let made = try CLI.runProgram(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=exporter.test",
                "-addext", "subjectAltName=IP:127.0.0.1",
            ]
        )
        try #require(made.status == 0, "\(made.stderr)")
        return (cert, key)
    }

    /// `htpasswd -niB USER`, the password on standard input: USER's bcrypt hash.
    static func bcryptHash(_ user: String, _ password: String) throws -> String {
        let made = try CLI.runProgram("htpasswd", ["-niB", "-C", "5", user], stdin: password + "\n")
        try #require(made.status == 0, "\(made.stderr)")
        let line = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let hash = String(line.dropFirst(user.count + 1))
        try #require(hash.hasPrefix("$2y$"), "\(line)")
        return hash
    }

    /// curl over HTTPS trusting `cert`, the user and password (if any) given on standard input
    /// so that no password is in an argument: the HTTP status.
    static func status(_ url: String, cert: String, credentials: String?) throws -> Int {
        let config = credentials.map { "user = \"\($0)\"\n" } ?? ""
        let result = try CLI.runProgram(
            "curl",
            ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", cert, "-K", "-", url],
            stdin: config,
            timeout: 30
        )
        return Int(result.stdout) ?? 0
    }

    @Test func tlsAndBasicAuthGuardTheExporter() async throws {
        let folder = try TemporaryFolder()
        let store = try Monitoring.store(in: folder, [ExporterTests.credentials[0]])
        let (cert, _) = try Self.serverCertificate(in: folder)
        let hash = try Self.bcryptHash(Self.user, Self.password)
        // Paths relative to the file, as exporter-toolkit reads them.
        let config = folder.path("web.yml")
        try """
        tls_server_config:
          cert_file: server.pem
          key_file: server-key.pem
          min_version: TLS12
        basic_auth_users:
          \(Self.user): \(hash)
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let exporter = try ExporterProcess(
            folder,
            store: store,
            arguments: ["--skip-secrets", "--web.config.file", config],
            waitUntilServing: false
        )
        let serving = try await eventually(timeout: 60) {
            exporter.log.contains("serving") || !exporter.process.isRunning
        }
        try #require(serving && exporter.process.isRunning, "\(exporter.log)")
        #expect(exporter.log.contains("https://127.0.0.1:\(exporter.port)/metrics"), "\(exporter.log)")
        #expect(!exporter.log.contains("warning"), "loopback: no warning: \(exporter.log)")

        let metrics = "https://127.0.0.1:\(exporter.port)/metrics"
        #expect(try Self.status(metrics, cert: cert, credentials: nil) == 401, "no credentials")
        #expect(try Self.status(metrics, cert: cert, credentials: "\(Self.user):wrong-pass") == 401)
        #expect(try Self.status(metrics, cert: cert, credentials: "nobody:\(Self.password)") == 401)
        #expect(try Self.status(metrics, cert: cert, credentials: "\(Self.user):\(Self.password)") == 200)
        let probe = "https://127.0.0.1:\(exporter.port)/probe?credential=nobody&environment=sandbox"
        #expect(try Self.status(probe, cert: cert, credentials: nil) == 401, "/probe is guarded too")
        // The health endpoints too, as x509-certificate-exporter guards its main port's.
        for path in ["/healthz", "/readyz"] {
            let url = "https://127.0.0.1:\(exporter.port)\(path)"
            #expect(try Self.status(url, cert: cert, credentials: nil) == 401, "\(path)")
            #expect(try Self.status(url, cert: cert, credentials: "\(Self.user):\(Self.password)") == 200, "\(path)")
        }
        // Plain HTTP gets no answer from a TLS port.
        #expect(try exporter.get("/metrics").status != 200)
        #expect(!exporter.log.contains(Self.password))
        #expect(exporter.stop() == 0)
    }

    @Test func aFileThatCannotBeUsedStopsItAtStartNamingTheField() throws {
        let folder = try TemporaryFolder()
        let store = try Monitoring.store(in: folder, [ExporterTests.credentials[0]])
        let (cert, key) = try Self.serverCertificate(in: folder)
        let cases: [(name: String, yaml: String, expected: [String])] = [
            (
                "missing-cert.yml", "tls_server_config:\n  cert_file: nowhere.pem\n  key_file: \(key)\n",
                ["missing-cert.yml", "tls_server_config.cert_file", "nowhere.pem"]
            ),
            (
                "no-key.yml", "tls_server_config:\n  cert_file: \(cert)\n",
                ["no-key.yml", "tls_server_config.key_file", "is missing"]
            ),
            ("bad.yml", "tls_server_config: [unclosed\n", ["bad.yml", "is not YAML"]),
            (
                "unknown.yml", "tls_server_config:\n  cert_file: \(cert)\n  key_file: \(key)\n  cert_fiel: x\n",
                ["unknown.yml", "tls_server_config.cert_fiel", "is not a known key"]
            ),
            ("top.yml", "basic_auth_user:\n  a: b\n", ["top.yml", "basic_auth_user", "is not a known key"]),
            (
                "plain.yml", "basic_auth_users:\n  \(Self.user): not-a-hash\n",
                ["plain.yml", "basic_auth_users.\(Self.user)", "bcrypt"]
            ),
            (
                "auth.yml",
                "tls_server_config:\n  cert_file: \(cert)\n  key_file: \(key)\n  client_auth_type: Sometimes\n",
                ["auth.yml", "tls_server_config.client_auth_type", "Sometimes"]
            ),
            (
                "ca.yml",
                "tls_server_config:\n  cert_file: \(cert)\n  key_file: \(key)\n  client_auth_type: RequireAndVerifyClientCert\n",
                ["ca.yml", "tls_server_config.client_ca_file", "is missing"]
            ),
            (
                "wrong-key.yml", "tls_server_config:\n  cert_file: \(cert)\n  key_file: \(cert)\n",
                ["wrong-key.yml", "tls_server_config.key_file"]
            ),
        ]
        for (name, yaml, expected) in cases {
            let path = folder.path(name)
            try yaml.write(toFile: path, atomically: true, encoding: .utf8)
            let port = try ProxyCommandTests.closedPort()
            let result = try CLI.run(
                ["exporter", "--store", store, "--listen", "127.0.0.1:\(port)", "--web.config.file", path],
                timeout: 30
            )
            #expect(result.status == 2, "\(name): \(result.stderr)")
            for text in expected { #expect(result.stderr.contains(text), "\(name): \(result.stderr)") }
            #expect(!result.stderr.contains("serving"), "\(name)")
        }
        let missing = try CLI.run(
            ["exporter", "--store", store, "--web.config.file", folder.path("absent.yml")],
            timeout: 30
        )
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("absent.yml") && missing.stderr.contains("cannot be read"), "\(missing.stderr)")
    }
}
