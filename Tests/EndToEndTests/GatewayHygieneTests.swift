import Foundation
import TestSupport
import Testing

/// The local gateway keeps its records private, does not replace a CA clients trust, and does
/// not hold connections that do nothing.
struct GatewayHygieneTests {
    /// Connects over plain TCP, sends `send` (nothing by default), and returns the bytes the
    /// server wrote and whether it closed the connection within `wait` seconds.
    static func rawClient(port: Int, send: String = "", wait: Double) throws -> (closed: Bool, output: String) {
        let script = """
            import socket, sys, time
            s = socket.create_connection(("127.0.0.1", \(port)))
            s.sendall(sys.argv[1].encode())
            s.settimeout(\(wait))
            data, closed = b"", False
            try:
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        closed = True
                        break
                    data += chunk
            except socket.timeout:
                pass
            print("closed" if closed else "open")
            print(data.decode("latin-1"))
            """
        let result = try CLI.runProgram("python3", ["-c", script, send], timeout: wait + 10)
        return (result.stdout.hasPrefix("closed"), result.stdout)
    }

    @Test func recordsArePrivateAndTheCAIsNeverOverwrittenWithoutForce() throws {
        let folder = try TemporaryFolder()
        let stats = folder.path("stats.json")
        var gateway: GatewayProcess? = try GatewayProcess(folder, name: "private", arguments: ["--stats", stats])
        let log = try #require(gateway?.logFile)
        let ca = try #require(gateway?.caFile)
        #expect(try posixPermissions(log) & 0o077 == 0, "the delivery log is the user's alone")
        #expect(try posixPermissions(folder.path("private.port")) & 0o077 == 0)
        gateway = nil  // stopped: it writes its statistics
        #expect(try posixPermissions(stats) & 0o077 == 0)

        let before = try String(contentsOfFile: ca, encoding: .utf8)
        let refused = try CLI.run(["gateway", "serve", "--ca-out", ca, "--port", "0"], timeout: 20)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains(ca) && refused.stderr.contains("--force"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: ca, encoding: .utf8) == before, "the CA clients trust is untouched")

        try FileManager.default.removeItem(atPath: folder.path("private.port"))  // so that the wait is for the new one
        let forced = try GatewayProcess(folder, name: "private", arguments: ["--force"])
        #expect(try String(contentsOfFile: forced.caFile, encoding: .utf8) != before, "--force replaces it")
    }

    @Test func anIdleConnectionGetsGoAwayIdleTimeoutAndIsClosed() throws {
        let folder = try TemporaryFolder()
        let gateway = try GatewayProcess(folder, name: "idle", arguments: ["--idle-timeout", "1"])
        // A real TLS client that completes the handshake and then says nothing.
        let script = """
            import socket, ssl, sys, time
            context = ssl.create_default_context(cafile=sys.argv[1])
            context.set_alpn_protocols(["h2"])
            raw = socket.create_connection(("127.0.0.1", \(gateway.port)))
            s = context.wrap_socket(raw, server_hostname="localhost")
            s.settimeout(60)
            data, ending = b"", "closed"
            try:
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            except socket.timeout:
                ending = "held"
            except (ssl.SSLError, ConnectionResetError):
                pass
            print(ending)
            print(data.decode("latin-1"))
            """
        let result = try CLI.runProgram("python3", ["-c", script, gateway.caFile], timeout: 120)
        // The gateway ends the connection (the client's 60 s wait only ends a hung test).
        let ending = result.stdout.split(separator: "\n").first ?? ""
        #expect(ending == "closed", "closed after the idle timeout, not held: \(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains(#"{"reason":"IdleTimeout"}"#), "GOAWAY carries APNs' reason")
    }

    @Test func aConnectionThatNeverFinishesItsHandshakeIsClosed() throws {
        let folder = try TemporaryFolder()
        let gateway = try GatewayProcess(folder, name: "stalled", arguments: ["--handshake-timeout", "1"])
        let client = try Self.rawClient(port: gateway.port, wait: 8)
        #expect(client.closed, "a client that sends nothing is not held for ever")
    }
}

extension GatewayHygieneTests {
    /// A running apnsctl (here the gateway, which holds its server key) leaves no core dump.
    @Test func aRunningProcessHasNoCoreSize() throws {
        let folder = try TemporaryFolder()
        let gateway = try GatewayProcess(folder, name: "core", arguments: [])
        let limits = try String(contentsOfFile: "/proc/\(gateway.process.processIdentifier)/limits", encoding: .utf8)
        let core = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
        #expect(core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"])
    }
}
