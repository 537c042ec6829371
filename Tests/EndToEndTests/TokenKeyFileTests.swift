import Foundation
import TestSupport
import Testing

/// `inspect` and `check` of a token key file (.p8), with no store and no Secret Service: what a
/// CI job holding only AuthKey_KEYID.p8 can run.
struct TokenKeyFileTests {
    static let key = CLI.cert("keys/AuthKey_ABC123DEFG.p8")

    /// The public key's SHA-256 as openssl computes it, to compare with what apnsctl says.
    static func opensslFingerprint(_ path: String) throws -> String {
        let folder = try TemporaryFolder()
        let der = folder.path("pub.der")
        try TestPKI.openssl(["pkey", "-in", path, "-pubout", "-outform", "DER", "-out", der])
        let digest = try CLI.runProgram("openssl", ["dgst", "-sha256", "-r", der]).stdout
        let hex = String(digest.prefix(64)).uppercased()
        return stride(from: 0, to: 64, by: 2).map { offset in
            String(hex[hex.index(hex.startIndex, offsetBy: offset)..<hex.index(hex.startIndex, offsetBy: offset + 2)])
        }.joined(separator: ":")
    }

    @Test func inspectShowsKeyIDCurveFingerprintTeamAndRestrictions() throws {
        let human = try CLI.run([
            "inspect", Self.key, "--team-id", "ABCDE12345", "--topic", "com.example.app", "--environment", "production",
        ]).succeeded()
        let fingerprint = try Self.opensslFingerprint(Self.key)
        #expect(human.stdout.contains("ABC123DEFG"))
        #expect(human.stdout.contains("P-256"))
        #expect(human.stdout.contains(fingerprint))
        #expect(human.stdout.contains("ABCDE12345"))
        #expect(human.stdout.contains("com.example.app"))
        #expect(human.stdout.contains("production only"))
        #expect(!human.stdout.contains("BEGIN"))

        let machine = try CLI.run([
            "inspect", "--json", Self.key, "--key-id", "XYZ987WVUT", "--topic", "com.example.app",
        ]).succeeded()
        let file = try #require((try machine.json()["files"] as? [[String: Any]])?.first)
        let key = try #require(file["token_key"] as? [String: Any])
        #expect(key["key_id"] as? String == "XYZ987WVUT")
        #expect(key["key_id_source"] as? String == "option")
        #expect(key["curve"] as? String == "P-256")
        #expect(key["algorithm"] as? String == "ES256")
        #expect(key["public_key_sha256"] as? String == fingerprint)
        #expect(topicNames(key["topics"]) == ["com.example.app"])
        #expect(key["team_id"] == nil)
        // Without a team it is looked at, and told what is missing, as a warning.
        let findings = try #require(file["findings"] as? [[String: Any]])
        #expect(findings.map { $0["code"] as? String } == ["token_metadata_incomplete"])
        #expect(findings.first?["severity"] as? String == "warning")
        #expect((findings.first?["hint"] as? String ?? "").contains("--team-id"))
    }

    @Test func checkJudgesAKeyFileForADeploy() throws {
        try CLI.run([
            "check", Self.key, "--team-id", "ABCDE12345", "--environment", "production", "--topic", "com.example.app",
        ]).succeeded(stdout: "token key", "ABC123DEFG")

        let machine = try CLI.run(["check", "--json", Self.key, "--team-id", "ABCDE12345"]).succeeded()
        let result = try #require((try machine.json()["credentials"] as? [[String: Any]])?.first)
        #expect(result["kind"] as? String == "token_key")
        #expect(result["origin"] as? String == "file")
        #expect(result["key_id"] as? String == "ABC123DEFG")
        #expect(result["team_id"] as? String == "ABCDE12345")
        #expect(result["curve"] as? String == "P-256")
        #expect(result["public_key_sha256"] as? String == (try Self.opensslFingerprint(Self.key)))
        #expect((result["findings"] as? [Any])?.isEmpty == true)

        // No team: a finding (exit 1) that names the option; a file named otherwise needs --key-id.
        try CLI.run(["check", Self.key]).exited(1, stdout: "warning:", "--team-id")
        let folder = try TemporaryFolder()
        let renamed = folder.path("push-key.p8")
        try FileManager.default.copyItem(atPath: Self.key, toPath: renamed)
        try CLI.run(["check", "--json", renamed, "--team-id", "ABCDE12345"]).exited(1, stdout: "lacks key ID")
        #expect(try CLI.run(["check", renamed, "--team-id", "ABCDE12345", "--key-id", "ABC123DEFG"]).status == 0)
    }

    /// swift-crypto takes any 32-byte scalar for P-256; the curve must be read, and refused by name.
    @Test(arguments: ["secp256k1", "secp384r1"])
    func otherCurvesAreRefusedByName(curve: String) throws {
        let folder = try TemporaryFolder()
        let key = folder.path("AuthKey_CURVE00001.p8")
        try TestPKI.tokenKey(at: key, curve: curve)
        let name = curve == "secp256k1" ? "secp256k1" : "P-384"
        for arguments in [["inspect", key], ["check", key, "--team-id", "ABCDE12345"], ["inspect", "--json", key]] {
            let result = try CLI.run(arguments)
            let said = result.stdout + result.stderr
            #expect(result.status == 2, "\(arguments)")
            #expect(said.contains("curve \(name)"), "\(said)")
            #expect(said.contains("P-256"))
        }
        let json = try CLI.run(["check", "--json", key, "--team-id", "ABCDE12345"])
        let result = try #require((try json.json()["credentials"] as? [[String: Any]])?.first)
        #expect((result["error"] as? [String: Any])?["code"] as? String == "unsupported_key")
    }
}
