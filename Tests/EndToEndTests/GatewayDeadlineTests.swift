import Foundation
import TestSupport
import Testing

/// Every stage of a connection has a deadline, so that a connection that stops short holds
/// nothing for long: the TLS handshake, the first request, and the silence between requests
/// (also with a request left half-sent).
struct GatewayDeadlineTests {
    /// One client over real TCP (and TLS) that stops at `mode`'s point and reports, as JSON,
    /// whether the gateway closed the connection within 20 s, after how long, and the reason of
    /// a GOAWAY it sent. Standard library only; HPACK literals without indexing are written by hand.
    static let script = #"""
        import json, socket, ssl, sys, time

        port, cafile, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
        PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + (0).to_bytes(3, "big") + bytes([4, 0]) + bytes(4)


        def frame(kind, flags, stream, payload=b""):
            return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


        def literal(name, value):  # literal header field without indexing, new name, no Huffman
            return b"\x00" + bytes([len(name)]) + name.encode() + bytes([len(value)]) + value.encode()


        REQUEST = b"".join(literal(n, v) for n, v in [
            (":method", "POST"), (":scheme", "https"), (":authority", "localhost"),
            (":path", "/3/device/" + "ab" * 32), ("apns-topic", "com.example.app")])
        HEADERS, PING, END_STREAM, END_HEADERS = 1, 6, 0x1, 0x4

        raw = socket.create_connection(("127.0.0.1", port))
        if mode in ("nothing", "stalled-handshake"):
            s = raw
            if mode == "stalled-handshake":
                s.sendall(bytes([0x16, 3, 1, 2, 0, 1, 0, 1, 0xFC]))  # a ClientHello of 512 bytes, begun
        else:
            context = ssl.create_default_context(cafile=cafile)
            context.set_alpn_protocols(["h2"])
            s = context.wrap_socket(raw, server_hostname="localhost")
            if mode != "silent":
                s.sendall(PREFACE)
            if mode == "after-request":
                s.sendall(frame(HEADERS, END_HEADERS | END_STREAM, 1, REQUEST))
            elif mode == "half-request":
                s.sendall(frame(HEADERS, END_HEADERS, 1, REQUEST))  # its body never comes
        started = time.time()
        s.settimeout(0.2)
        data, closed = b"", False
        while time.time() - started < 20:
            try:
                chunk = s.recv(65536)
                if not chunk:
                    closed = True
                    break
                data += chunk
            except socket.timeout:
                if mode == "pings":  # traffic, but never a request
                    s.sendall(frame(PING, 0, 0, b"12345678"))
            except (OSError, ssl.SSLError):
                closed = True
                break
        reason = None
        for candidate in ("IdleTimeout", "Shutdown"):
            if ('{"reason":"%s"}' % candidate).encode() in data:
                reason = candidate
        print(json.dumps({"closed": closed, "seconds": round(time.time() - started, 2), "goaway": reason}))
        """#

    /// The gateway, started with `arguments`, met by one client that stops at `mode`'s point;
    /// then the gateway is stopped and its statistics read.
    static func meet(_ mode: String, _ arguments: [String]) throws -> (client: [String: Any], stats: [String: Any]) {
        let folder = try TemporaryFolder()
        let script = folder.path("deadline.py")
        try Self.script.write(toFile: script, atomically: true, encoding: .utf8)
        let stats = folder.path("stats.json")
        let running = try GatewayProcess(
            folder,
            name: mode,
            arguments: GatewayUnderAttackTests.keyArguments + arguments + ["--stats", stats]
        )
        let result = try CLI.runProgram("python3", [script, String(running.port), running.caFile, mode], timeout: 60)
        let client = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            "\(result.stdout) \(result.stderr)"
        )
        running.stop()  // it writes its statistics as it stops
        return (client, try BulkSendTests.stats(stats))
    }

    /// Closed after the deadline of `seconds`, not before it, and not long after it.
    static func expectClosed(_ client: [String: Any], after seconds: Double, _ what: String) {
        #expect(client["closed"] as? Bool == true, "\(what) is closed: \(client)")
        let after = client["seconds"] as? Double ?? 99
        #expect(
            after >= seconds * 0.9 && after < seconds + 8,
            "\(what): closed after \(after) s, deadline \(seconds) s"
        )
    }

    @Test func aHandshakeLeftHalfwayIsClosedAtTheHandshakeTimeout() throws {
        let (client, stats) = try Self.meet("stalled-handshake", ["--handshake-timeout", "2"])
        Self.expectClosed(client, after: 2, "a ClientHello never finished")
        #expect(stats["handshake_timeouts"] as? Int == 1, "\(stats)")
    }

    @Test func aConnectionThatSaysNothingAfterItsHandshakeIsClosedAtTheFirstRequestTimeout() throws {
        // No idle timeout: the first-request deadline alone closes it.
        let (client, stats) = try Self.meet("silent", ["--first-request-timeout", "2", "--idle-timeout", "0"])
        Self.expectClosed(client, after: 2, "a connection silent after TLS")
        #expect(stats["first_request_timeouts"] as? Int == 1, "\(stats)")
    }

    @Test func pingsDoNotPutOffTheFirstRequestTimeout() throws {
        let (client, stats) = try Self.meet("pings", ["--first-request-timeout", "2"])
        Self.expectClosed(client, after: 2, "a connection that only PINGs")
        #expect(client["goaway"] as? String == "IdleTimeout", "GOAWAY with APNs' reason first: \(client)")
        #expect(stats["first_request_timeouts"] as? Int == 1, "\(stats)")
    }

    @Test func aConnectionIdleAfterItsRequestIsClosedAtTheIdleTimeout() throws {
        let (client, stats) = try Self.meet("after-request", ["--idle-timeout", "2"])
        Self.expectClosed(client, after: 2, "a connection idle after one request")
        #expect(client["goaway"] as? String == "IdleTimeout", "\(client)")
        #expect(stats["idle_connections_closed"] as? Int == 1, "\(stats)")
        #expect(stats["first_request_timeouts"] as? Int == 0, "it made its request in time: \(stats)")
    }

    @Test func aRequestLeftHalfSentDoesNotKeepTheConnectionFromTheIdleTimeout() throws {
        let (client, stats) = try Self.meet("half-request", ["--idle-timeout", "2"])
        Self.expectClosed(client, after: 2, "a connection whose request body never comes")
        #expect(client["goaway"] as? String == "IdleTimeout", "\(client)")
        #expect(stats["idle_connections_closed"] as? Int == 1, "\(stats)")
    }
}
