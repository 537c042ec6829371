import Foundation
import TestSupport
import Testing

/// `apnsctl trust`, preflight's trust-store check and the handshake's anchor, through the real
/// binary: Debian's ca-certificates bundle, one built here without USERTrust RSA, and a local
/// gateway standing in for api.sandbox.push.apple.com (reached on loopback with --resolve).
struct TrustCommandTests {
    static let debianBundle = "/etc/ssl/certs/ca-certificates.crt"
    static let usertrust = "USERTrust RSA Certification Authority"

    /// Debian's bundle without USERTrust RSA, with AAA Certificate Services: a store of 2021.
    static func bundleWithoutUSERTrust(_ folder: TemporaryFolder) throws -> String {
        let text = try String(contentsOfFile: debianBundle, encoding: .utf8)
        let root = try String(
            contentsOfFile: "/etc/ssl/certs/USERTrust_RSA_Certification_Authority.pem",
            encoding: .utf8
        )
        let end = "-----END CERTIFICATE-----"
        let removed = root.replacingOccurrences(of: end, with: "").trimmingCharacters(in: .whitespacesAndNewlines)
        let blocks = text.components(separatedBy: end).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty }
        let kept = blocks.filter { $0 != removed }
        #expect(kept.count == blocks.count - 1, "USERTrust RSA is once in Debian's bundle")
        let aaa = try String(contentsOfFile: CLI.cert("roots/aaa-certificate-services.pem"), encoding: .utf8)
        let path = folder.path("bundle-without-usertrust.pem")
        try (kept.map { $0 + "\n\(end)\n" }.joined() + aaa).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func trustWithoutUSERTrustIsNotReadyAndNamesTheFix() throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.bundleWithoutUSERTrust(folder)
        try CLI.run(["trust", "--ca-bundle", bundle]).exited(
            1,
            stdout: "not ready",
            "lacks \"\(Self.usertrust)\"",
            "Add the \"\(Self.usertrust)\" certificate to \(bundle)"
        )

        let json = try CLI.run(["trust", "--ca-bundle", bundle, "--json"]).exited(1)
        try JSONContractTests.expectValid("trust", json)
        let report = try JSONContractTests.json(json.stdout)
        #expect(report["ready"] as? Bool == false)
        #expect((report["fix"] as? String)?.contains(bundle) == true)
        let environments = try #require(report["environments"] as? [[String: Any]])
        #expect(environments.count == 2)
        #expect(environments.allSatisfy { $0["current_root"] as? String == Self.usertrust })
        #expect(environments.allSatisfy { $0["current_root_present"] as? Bool == false })
    }

    @Test func trustWithDebiansBundlePasses() throws {
        for arguments in [["--ca-bundle", Self.debianBundle], []] {
            let human = try CLI.run(["trust"] + arguments).succeeded(context: "\(arguments)")
            #expect(human.stdout.contains("✓ the trust store holds \"\(Self.usertrust)\""))
            let json = try CLI.run(["trust", "--json", "--environment", "production"] + arguments).succeeded()
            try JSONContractTests.expectValid("trust", json)
            let report = try JSONContractTests.json(json.stdout)
            #expect(report["ready"] as? Bool == true)
            let roots = try #require(report["roots"] as? [[String: Any]])
            let current = try #require(roots.first { $0["name"] as? String == Self.usertrust })
            #expect(current["role"] as? String == "current")
            #expect(current["present"] as? Bool == true)
            #expect(
                current["spki_sha256"] as? String == "c784333d20bcd742b9fdc3236f4e509b8937070e73067e254dd3bf9c45bf4dde"
            )
        }
    }

    /// In the weeks of the move a store of 2021 still served production, and was warned.
    @Test func trustAtADateDuringTheMove() throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.bundleWithoutUSERTrust(folder)
        try CLI.run(["trust", "--ca-bundle", bundle, "--environment", "production", "--at", "2025-02-01"])
            .exited(1, stdout: "AAA Certificate Services  present", "then \(Self.usertrust) from 2025-02-24  missing")
    }

    @Test func metricSaysWhetherTheSystemStoreHoldsEachRoot() throws {
        let result = try CLI.run(
            ["check", "--format", "prometheus", CLI.cert("p12/openssl3-default.p12"), "--password-env", "P"],
            environment: ["P": "apnsctl-test"]
        )
        #expect(result.stdout.contains("# TYPE apnsctl_trust_root_present gauge"), "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("apnsctl_trust_root_present{root=\"\(Self.usertrust)\",status=\"current\"} 1"))
        // Debian 12's ca-certificates no longer carries the previous root.
        #expect(
            result.stdout.contains(
                "apnsctl_trust_root_present{root=\"AAA Certificate Services\",status=\"previous\"} 0"
            )
        )
    }

    /// The subject of the CA the stand-in's certificate is from: the test PKI's gateway CA.
    static let standInCA = "C=US,O=apnsctl (not Apple),CN=apnsctl TEST Gateway CA"

    /// A server certificate for api.sandbox.push.apple.com from the test PKI's gateway CA: a local
    /// gateway serving it stands in for APNs' sandbox, reached on loopback with --resolve.
    static func standIn(_ folder: TemporaryFolder) throws -> (certificate: String, key: String, ca: String) {
        let server = try TestPKI.serverIdentity(host: "api.sandbox.push.apple.com", in: folder, name: "stand-in")
        return (server.certificate, server.key, TestPaths.cert("ca/gateway-test-ca.pem"))
    }

    /// preflight against Apple's sandbox host (a stand-in on loopback): a trust store without
    /// USERTrust RSA is not ready, naming the root and the fix, even though the handshake with
    /// the stand-in (trusted through --ca) works; Debian's bundle is ready.
    @Test func preflightChecksTheTrustStoreForApplesHosts() throws {
        let pki = try TestPKI.Identities()
        let folder = try TemporaryFolder()
        let standIn = try Self.standIn(folder)
        let gateway = try pki.gateway("sandbox", ["--cert", standIn.certificate, "--key", standIn.key])
        let host = "api.sandbox.push.apple.com"
        let reach = [
            "--gateway", "\(host):\(gateway.port)", "--resolve", "\(host):\(gateway.port):127.0.0.1", "--ca",
            standIn.ca,
        ]
        let arguments = ["preflight", pki.identity("sandbox"), "--environment", "sandbox"] + reach
        let bundle = try Self.bundleWithoutUSERTrust(folder)

        try pki.run(arguments + ["--ca-bundle", bundle]).exited(
            1,
            stdout: "not ready: The CA bundle \(bundle) lacks \"\(Self.usertrust)\"",
            "Add the \"\(Self.usertrust)\" certificate to \(bundle)"
        )
        let lackingJSON = try pki.run(arguments + ["--ca-bundle", bundle, "--json"]).exited(1)
        try JSONContractTests.expectValid("preflight", lackingJSON)
        let report = try JSONContractTests.json(lackingJSON.stdout)
        #expect(report["ready"] as? Bool == false)
        #expect((report["trust_store"] as? [String: Any])?["ready"] as? Bool == false)

        try pki.run(arguments + ["--ca-bundle", Self.debianBundle])
            .succeeded(stdout: "✓ the trust store holds \"\(Self.usertrust)\"")
        let readyJSON = try pki.run(arguments + ["--ca-bundle", Self.debianBundle, "--json"])
        try JSONContractTests.expectValid("preflight", readyJSON)
        let credential = try #require(
            (try JSONContractTests.json(readyJSON.stdout)["credentials"] as? [[String: Any]])?.first
        )
        let anchor = try #require((credential["handshake"] as? [String: Any])?["anchor"] as? [String: Any])
        #expect(anchor["origin"] as? String == "ca_file")
        #expect(anchor["subject"] as? String == Self.standInCA)

        // The handshake names the stand-in's CA, and that it is not an APNs root.
        let handshake = try pki.run(["handshake", pki.identity("sandbox"), "--ca-bundle", Self.debianBundle] + reach)
            .succeeded(stdout: "Anchor        \(Self.standInCA) (--ca)", "not an APNs root")
        #expect(
            handshake.stdout.contains("system trust store") == false || handshake.stdout.contains("--ca-bundle + --ca")
        )
    }
}
