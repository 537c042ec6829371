import Foundation
import NIOHTTP1
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The exporter over a store in OpenBao reads it once per `--store-refresh`, whatever the number
/// of scrapes, counted by a proxy in front of OpenBao (apnsctl's Vault client makes one
/// connection per request; OpenBao enables no audit device through its API); a stopped OpenBao
/// makes the source down, its failed reads counted, the last good read's certificates kept.
@Suite(
    "The exporter reads a store in Vault once per interval",
    .enabled(if: BaoDevServer.isAvailable, Comment(rawValue: BaoDevServer.missingMessage)),
    .serialized,
    .timeLimit(.minutes(10))
)
struct VaultExporterRefreshTests {
    /// `apnsctl exporter` on the bench's store with its exporter token, until the test ends.
    final class Exporter: @unchecked Sendable {
        let process = Process()
        let port: Int

        /// With `token` (default: the exporter's), it reads the secrets too (no `--skip-secrets`).
        init(
            _ bench: VaultStoreCommandTests.Bench,
            address: String,
            refresh: String,
            token: String? = nil
        ) throws {
            port = try unusedLoopbackPort()
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments =
                [
                    "exporter", "--listen", "127.0.0.1:\(port)", "--store", bench.location, "--store-refresh", refresh,
                ] + (token == nil ? ["--skip-secrets"] : [])
            var environment = ProcessInfo.processInfo.environment
            environment["VAULT_ADDR"] = address
            environment["VAULT_TOKEN"] = token ?? bench.exporter
            environment.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

        /// The HTTP status of a GET.
        func status(_ path: String) throws -> String {
            try CLI.runProgram(
                "/usr/bin/curl",
                ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", url(path)]
            )
            .stdout
        }

        deinit {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// A TCP proxy to OpenBao that writes the first line of each connection (one request: the
    /// client's connections are not reused) to a log, until the test ends.
    final class CountingProxy: @unchecked Sendable {
        static let script = """
            import socket, sys, threading
            port, target, log = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
            server = socket.socket()
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind(("127.0.0.1", port))
            server.listen(64)
            lock = threading.Lock()
            def pipe(a, b):
                try:
                    while True:
                        data = a.recv(65536)
                        if not data:
                            break
                        b.sendall(data)
                except OSError:
                    pass
                finally:
                    try:
                        b.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
            def handle(client):
                first = b""
                while b"\\r\\n" not in first:
                    chunk = client.recv(4096)
                    if not chunk:
                        break
                    first += chunk
                with lock, open(log, "a") as f:
                    f.write(first.split(b"\\r\\n")[0].decode("latin-1") + "\\n")
                try:
                    upstream = socket.create_connection(("127.0.0.1", target))
                except OSError:
                    client.close()
                    return
                upstream.sendall(first)
                threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()
                pipe(client, upstream)
            while True:
                connection, _ = server.accept()
                threading.Thread(target=handle, args=(connection,), daemon=True).start()
            """

        let process = Process()
        let port: Int
        let log: String

        init(to target: Int, log: String) throws {
            port = try unusedLoopbackPort()
            self.log = log
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            process.executableURL = CLI.packageRoot.appendingPathComponent(".venv/bin/python")
            process.arguments = ["-c", Self.script, String(port), String(target), log]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let port = self.port
            try #require(
                try waitUntil {
                    try CLI.runProgram(
                        "/usr/bin/curl",
                        ["-s", "-o", "/dev/null", "http://127.0.0.1:\(port)/v1/sys/health"]
                    ).status == 0
                },
                "the proxy answers"
            )
        }

        /// The requests seen under `prefix` (request lines such as `GET /v1/secret/data/PREFIX/...`).
        func requests(under prefix: String) -> Int {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").filter { $0.contains("/\(prefix)/") }.count
        }

        deinit {
            // Killed: a child of the test runner may inherit SIGTERM blocked.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    @Test("Scrapes and probes within the interval are served from one read; a stopped OpenBao is a source down")
    func oneReadPerIntervalAndDownWhenStopped() async throws {
        let own = try await BaoDevServer.start()
        defer { own.stop() }
        let bench = try await VaultStoreCommandTests.Bench(own)
        try bench.importBoth()
        let folder = try TemporaryFolder()
        let proxy = try CountingProxy(to: own.port, log: folder.path("requests.log"))
        let address = "http://127.0.0.1:\(proxy.port)"

        let kept = try Exporter(bench, address: address, refresh: "3600")
        _ = try await VaultStoreCommandTests.get(kept.url("/metrics"), until: { $0.contains("x509_source_up") })
        #expect(try kept.status("/readyz") == "200")
        let afterFirstRead = proxy.requests(under: bench.prefix)
        #expect(afterFirstRead > 0, "the proxy saw the exporter's reads")
        for _ in 0..<10 { #expect(try kept.status("/metrics") == "200") }
        // A probe is checked against the kept index: an unknown alias is refused without a request.
        for _ in 0..<5 { #expect(try kept.status("/probe?credential=nothing&environment=sandbox") == "400") }
        #expect(
            proxy.requests(under: bench.prefix) == afterFirstRead,
            "ten scrapes and five probe requests within the interval read nothing more"
        )
        let metrics = try await VaultStoreCommandTests.get(kept.url("/metrics"), until: { _ in true })
        #expect(
            metrics.contains(#"x509_source_up{source_kind="vault",source_name="\#(bench.location)"} 1"#),
            "\(metrics)"
        )
        #expect(metrics.contains(#"x509_source_bundles{source_kind="vault",source_name="\#(bench.location)"} 2"#))

        let refreshing = try Exporter(bench, address: address, refresh: "1")
        _ = try await VaultStoreCommandTests.get(refreshing.url("/metrics"), until: { $0.contains("x509_source_up") })
        own.stop()
        let down = try await VaultStoreCommandTests.get(
            refreshing.url("/metrics"),
            until: { $0.contains(#"x509_source_up{source_kind="vault",source_name="\#(bench.location)"} 0"#) }
        )
        #expect(down.contains("x509_source_up{") && down.contains("} 0\n"), "\(down)")
        let failedReads = down.split(separator: "\n").first { $0.contains(#"reason="read_failed"}"#) }
        #expect(failedReads.map { !$0.hasSuffix(" 0") } == true, "the failed read is counted: \(down)")
        #expect(down.contains("x509_cert_not_after{"), "the last good read's certificates are kept")
        #expect(down.contains("apnsctl_check_success 0"))
        #expect(!down.contains("VAULT_TOKEN") && !down.contains(bench.exporter), "no token in the metrics")
    }

    @Test("A bundle whose stored password no longer opens it: bad_passphrase and a passphrase failure")
    func aBundleRotatedWithoutItsPassword() async throws {
        let own = try await BaoDevServer.start()
        defer { own.stop() }
        let bench = try await VaultStoreCommandTests.Bench(own)
        try bench.importBoth()
        // The reader's policy reads the secrets, as a check of the bundles needs.
        let exporter = try Exporter(bench, address: own.address, refresh: "1", token: bench.reader)
        let before = try await VaultStoreCommandTests.get(
            exporter.url("/metrics"),
            until: { $0.contains("x509_source_up") }
        )
        #expect(
            before.contains("x509_pkcs12_passphrase_failures_total{source_name=\"\(bench.location)\"} 0"),
            "\(before)"
        )

        // The bundle's password in Vault replaced by another: the bundle no longer opens with it.
        let kv = try own.rootClient().kv()
        let password = Data(VaultStoreCommandTests.password.utf8).base64EncodedString()
        let (path, _) = try #require(
            try await bench.entries().first { $0.value["value"] == password },
            "the bundle's password is in the store"
        )
        let entry = try await kv.read(path)
        _ = try await kv.write(
            path,
            data: ["value": Data("rotated-elsewhere".utf8).base64EncodedString()],
            cas: entry.version
        )

        let after = try await VaultStoreCommandTests.get(
            exporter.url("/metrics"),
            until: { !$0.contains("x509_pkcs12_passphrase_failures_total{source_name=\"\(bench.location)\"} 0") }
        )
        let failures = after.split(separator: "\n").first { $0.hasPrefix("x509_pkcs12_passphrase_failures_total{") }
        #expect(failures.map { !$0.hasSuffix(" 0") } == true, "\(after)")
        let reason = after.split(separator: "\n").first { $0.contains(#"reason="bad_passphrase"}"#) }
        #expect(reason.map { !$0.hasSuffix(" 0") } == true, "\(after)")
        #expect(!after.contains("rotated-elsewhere") && !after.contains(VaultStoreCommandTests.password))
    }
}
