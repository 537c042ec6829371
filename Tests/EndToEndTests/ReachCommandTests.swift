import Foundation
import TestSupport
import Testing

/// Every network through the real binary: local gateways on [::1] and on 127.0.0.1, -4 and -6,
/// Happy Eyeballs across a name with both, preflight's fall-back to port 2197, and preflight's
/// trust-store check against a stand-in for api.sandbox.push.apple.com reached on loopback.
struct ReachCommandTests {
    static func handshake(_ result: CLI.Result) throws -> [String: Any] {
        try #require(try result.json()["handshake"] as? [String: Any], "\(result.stdout)\(result.stderr)")
    }

    /// A gateway on [::1] and another on 127.0.0.1 with the same port number; `localhost` given
    /// both addresses: -6 reaches the first, -4 the second.
    @Test func eachFamilyReachesItsOwnGateway() throws {
        let pki = try TestPKI.Identities()
        let six = try pki.gateway("sandbox", ["--host", "::1"])
        let four = try pki.gateway("sandbox", ["--port", "\(six.port)"])
        let port = six.port
        let common = [
            "handshake", pki.identity("sandbox"), "--json", "--gateway", "localhost:\(port)", "--ca", six.caFile,
            "--ca", four.caFile, "--resolve", "localhost:\(port):[::1],127.0.0.1",
        ]
        let overSix = try pki.run(common + ["-6"]).succeeded()
        #expect(try Self.handshake(overSix)["resolved_address"] as? String == "[::1]:\(port)")
        #expect(try Self.handshake(overSix)["address_family"] as? String == "ipv6")
        #expect(try Self.handshake(overSix)["resolved_addresses"] as? [String] == ["[::1]:\(port)"])
        let overFour = try pki.run(common + ["--ipv4"]).succeeded()
        #expect(try Self.handshake(overFour)["resolved_address"] as? String == "127.0.0.1:\(port)")
        // The anchor is the CA of the gateway reached, each gateway having its own.
        let sixCA = try String(contentsOfFile: six.caFile, encoding: .utf8)
        let fourCA = try String(contentsOfFile: four.caFile, encoding: .utf8)
        #expect(sixCA != fourCA)

        let human = try pki.run(Array(common.filter { $0 != "--json" }) + ["-6"])
        #expect(
            human.stdout.contains("Address       [::1]:\(port) (IPv6)") || human.stdout.contains("[::1]:\(port) (IPv6)")
        )

        try pki.run(common + ["-4", "-6"]).exited(64, stderr: "Give -4 or -6, not both")
    }

    @Test func aFamilyTheNameLacksIsRefusedClearly() throws {
        let pki = try TestPKI.Identities()
        let four = try pki.gateway("sandbox")
        let result = try pki.run(
            [
                "handshake", pki.identity("sandbox"), "--gateway", "localhost:\(four.port)", "--ca", four.caFile,
                "--resolve", "localhost:\(four.port):127.0.0.1", "-6",
            ]
        ).exited(2, stderr: "localhost has no IPv6 address (it resolves to 127.0.0.1)")
        #expect(result.stderr.contains("-4"), "the hint names the option to use: \(result.stderr)")
        // Nothing was measured: no phase table, no TLS or trust rows, only the header and the error.
        for row in ["DNS lookup", "TCP connect", "TLS handshake", "total", "Trust"] {
            #expect(!result.stdout.contains(row), "\(row) printed for a connection never tried: \(result.stdout)")
        }
        #expect(result.stdout.contains("Connecting to localhost:\(four.port)"), "\(result.stdout)")
        let literal = try pki.run(["handshake", pki.identity("sandbox"), "-6"] + four.connection)
            .exited(2, stderr: "127.0.0.1 is not an IPv6 address")
        #expect(!literal.stdout.contains("TCP connect"), "\(literal.stdout)")
    }

    /// `localhost` given [::1] and 127.0.0.1 while the gateway listens on one family only: the
    /// other refuses, and Happy Eyeballs connects over the one that answers.
    @Test(arguments: ["127.0.0.1", "::1"]) func happyEyeballsReachesTheFamilyThatListens(_ host: String) throws {
        let pki = try TestPKI.Identities()
        let gateway = try pki.gateway("sandbox", ["--host", host])
        let port = gateway.port
        let result = try pki.run(
            [
                "handshake", pki.identity("sandbox"), "--json", "--auth-check", "--gateway", "localhost:\(port)",
                "--ca", gateway.caFile, "--resolve", "localhost:\(port):[::1],127.0.0.1",
            ]
        ).succeeded()
        let report = try Self.handshake(result)
        #expect(report["resolved_addresses"] as? [String] == ["[::1]:\(port)", "127.0.0.1:\(port)"])
        #expect(report["resolved_address"] as? String == (host == "::1" ? "[::1]:\(port)" : "127.0.0.1:\(port)"))
        #expect(try gateway.deliveries().count == 1)
    }

    /// handshake to a gateway whose CA is given names that CA as the anchor, in text and JSON.
    @Test func handshakeNamesTheAnchor() throws {
        let pki = try TestPKI.Identities()
        let gateway = try pki.gateway("sandbox")
        let subject = try CLI.runProgram(
            "openssl",
            ["x509", "-in", gateway.caFile, "-noout", "-subject", "-nameopt", "RFC2253"]
        ).stdout.replacingOccurrences(of: "subject=", with: "").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!subject.isEmpty)
        let json = try pki.run(["handshake", pki.identity("sandbox"), "--json"] + gateway.connection).succeeded()
        try JSONContractTests.expectValid("handshake", json)
        let anchor = try #require(try Self.handshake(json)["anchor"] as? [String: Any])
        #expect(anchor["subject"] as? String == subject)
        #expect(anchor["origin"] as? String == "ca_file")
        #expect(anchor["apns_root"] == nil)
        let human = try pki.run(["handshake", pki.identity("sandbox")] + gateway.connection)
        #expect(human.stdout.contains("Anchor        \(subject) (--ca)"), "\(human.stdout)")
    }

    /// Nothing on 443 (the port when none is given), the gateway on 2197: preflight says 443
    /// could not be reached and 2197 worked.
    @Test func preflightFallsBackToPort2197() throws {
        let pki = try TestPKI.Identities()
        let gateway = try pki.gateway("sandbox", ["--port", "2197"])
        let arguments = [
            "preflight", pki.identity("sandbox"), "--environment", "sandbox", "--gateway", "127.0.0.1", "--ca",
            gateway.caFile,
        ]
        try pki.run(arguments).succeeded(stdout: "port 443 unreachable", "reached on port 2197")
        let json = try pki.run(arguments + ["--json"])
        try JSONContractTests.expectValid("preflight", json)
        let credential = try #require((try json.json()["credentials"] as? [[String: Any]])?.first)
        let fallback = try #require(credential["port_fallback"] as? [String: Any])
        #expect(fallback["reached"] as? Bool == true)
        #expect(fallback["tried_port"] as? Int == 2197)
        #expect((fallback["failure"] as? [String: Any])?["code"] as? String == "connection_refused")
        // A port asked for is the port used: no fall-back.
        let asked = try pki.run(arguments.map { $0 == "127.0.0.1" ? "127.0.0.1:443" : $0 }).exited(2)
        #expect(!asked.stdout.contains("reached on port 2197"))
    }
}
