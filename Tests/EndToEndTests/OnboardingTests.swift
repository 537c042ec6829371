import Foundation
import TestSupport
import Testing

/// From nothing to a stored, verified identity through the built binary: `request`, Apple's side
/// played by the test PKI's stand-in WWDR CA with openssl, `import aps.cer`, then `check`,
/// `handshake --auth-check` and `send` through the local gateway.
@Suite(.needsSecretService)
struct OnboardingTests {
    typealias Store = StoreCommandTests.Store

    /// The private key (PKCS#8 DER) the Secret Service holds for `alias`, read with secret-tool.
    static func storedKey(store: String, alias: String, fingerprint: String) throws -> [UInt8] {
        let result = try StoreCommandTests.secretTool([
            "lookup", "application", "apnsctl", "store", store, "alias", alias, "fingerprint", fingerprint,
        ])
        try #require(result.status == 0, "no secret for \(alias): \(result.stderr)")
        return try #require(Data(base64Encoded: result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))).map {
            $0
        }
    }

    static func hex(_ fingerprint: String) -> String {
        fingerprint.replacingOccurrences(of: ":", with: "").lowercased()
    }

    /// Every form the key could leak in: PKCS#8 and PKCS#1 DER, their base64 (whole and as PEM lines).
    static func leakForms(ofKey pkcs8: [UInt8]) throws -> [Data] {
        let pkcs8PEM =
            "-----BEGIN PRIVATE KEY-----\n" + Data(pkcs8).base64EncodedString(options: .lineLength64Characters)
            + "\n-----END PRIVATE KEY-----\n"
        let traditional = try CLI.runProgram("openssl", ["pkey", "-traditional"], stdin: pkcs8PEM)
        try #require(traditional.status == 0, "\(traditional.stderr)")
        let body = traditional.stdout.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let pkcs1 = try #require(Data(base64Encoded: body))
        var forms: [Data] = []
        for der in [Data(pkcs8), pkcs1] {
            // The last 64 bytes are private (the CRT coefficient); the start holds the public modulus.
            forms.append(der.suffix(64))
            let base64 = der.base64EncodedString()
            forms.append(Data(base64.utf8))
            // A whole 64-character PEM line from the private end of the key's body.
            let lines = der.base64EncodedString(options: .lineLength64Characters).split(separator: "\r\n")
            forms.append(Data(lines[lines.count - 2].utf8))
        }
        return forms
    }

    /// Every file's bytes under `folder`.
    static func allBytes(under folder: String) throws -> [(String, Data)] {
        var files: [(String, Data)] = []
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let relative = enumerator?.nextObject() as? String {
            let full = folder + "/" + relative
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append((relative, try Data(contentsOf: URL(fileURLWithPath: full))))
            }
        }
        return files
    }

    static func json(_ result: CLI.Result) throws -> [String: Any] { try result.json() }

    @Test func fromNothingToADeliveredNotification() throws {
        let store = try Store()
        let work = store.folder
        let csr = work.path("push.csr")

        // 1. The key and the request.
        try store.run(["request", "--out", csr, "--email", "dev@example.com", "--country", "US"])
            .succeeded(
                stdout: "Apple Push Notification service SSL (Sandbox & Production)",
                "Certificates, Identifiers & Profiles",
                "apnsctl import aps.cer --store \(store.path)"
            )
        let pending = try #require(
            try store.run(["list", "--json"]).json()["pending_requests"] as? [[String: Any]]
        )
        try #require(pending.count == 1)
        let alias = try #require(pending[0]["credential"] as? String)
        let fingerprint = try #require(pending[0]["public_key_fingerprint"] as? String)
        #expect(alias.hasPrefix("request-"))
        #expect(pending[0]["subject"] as? String == "C=US, CN=apnsctl push key, emailAddress=dev@example.com")
        #expect(pending[0]["requested_at"] as? String != nil)
        #expect(try store.listJSON().isEmpty)
        let table = try store.run(["list"])
        #expect(table.stdout.contains(alias) && table.stdout.contains("pending request"), "\(table.stdout)")

        // The CSR is real PKCS#10, signed with the key the Secret Service holds.
        try CLI.runProgram("openssl", ["req", "-in", csr, "-verify", "-noout", "-subject"])
            .succeeded(stdout: "emailAddress = dev@example.com")
        let pendingKey = try Self.storedKey(store: store.path, alias: alias, fingerprint: Self.hex(fingerprint))
        let keyType = try CLI.runProgram(
            "openssl",
            ["pkey", "-noout", "-text_pub"],
            stdin: "-----BEGIN PRIVATE KEY-----\n"
                + Data(pendingKey).base64EncodedString(options: .lineLength64Characters)
                + "\n-----END PRIVATE KEY-----\n"
        )
        #expect(keyType.stdout.contains("Public-Key: (2048 bit)"), "\(keyType.stdout)\(keyType.stderr)")

        // inspect describes the CSR and names the pending request that holds its key.
        let inspect = try store.run(["inspect", csr]).succeeded()
        for text in [
            "certificate signing request", "RSA 2048 bits", fingerprint, "held by the pending request \(alias)",
        ] {
            #expect(inspect.stdout.contains(text), "missing \(text) in \(inspect.stdout)")
        }
        #expect(!inspect.stdout.contains("holds no certificate"))

        // --out never overwrites, and a refused request leaves nothing behind.
        let csrBefore = try Data(contentsOf: URL(fileURLWithPath: csr))
        try store.run(["request", "--out", csr]).exited(1, stderr: csr, "exists")
        #expect(try Data(contentsOf: URL(fileURLWithPath: csr)) == csrBefore)
        #expect((try store.run(["list", "--json"]).json()["pending_requests"] as? [Any])?.count == 1)

        // 2. Apple issues aps.cer (DER) for the CSR.
        let certificate = try TestPKI.issue(csr: csr, bundle: "com.example.onboard", in: work)

        // 3. import aps.cer pairs it with the pending key.
        let imported = try store.run(["import", certificate]).succeeded()
        let newAlias = "com.example.onboard-universal"
        #expect(imported.stdout.contains(newAlias), "\(imported.stdout)")
        let after = try store.run(["list", "--json"]).json()
        #expect((after["pending_requests"] as? [Any])?.isEmpty == true)
        let credentials = try #require(after["credentials"] as? [[String: Any]])
        try #require(credentials.count == 1)
        #expect(credentials[0]["credential"] as? String == newAlias)
        #expect(credentials[0]["environments"] as? [String] == ["sandbox", "production"])
        #expect(topicNames(credentials[0]["topics"]) == ["com.example.onboard"])
        let sha256 = try #require(credentials[0]["sha256"] as? String)
        // The same key, now the credential's; the pending request's item is gone.
        #expect(try Self.storedKey(store: store.path, alias: newAlias, fingerprint: Self.hex(sha256)) == pendingKey)
        #expect(try store.secret(alias).stdout.isEmpty)
        // A second import of the same aps.cer says where it already is, and changes nothing.
        try store.run(["import", certificate]).exited(1, stderr: "already in the store as \(newAlias)")
        // The CSR now points at the stored credential.
        #expect(try store.run(["inspect", csr]).stdout.contains("stored as \(newAlias)"))

        // 4. check, then 5. handshake --auth-check and send through the local gateway, which
        // trusts the stand-in WWDR CA as APNs trusts Apple's.
        try store.run(["check"]).succeeded()
        let gateway = try GatewayProcess(
            work,
            name: "gateway",
            arguments: ["--environment", "sandbox", "--client-ca", CLI.cert("ca/wwdr-test-ca.pem")]
        )
        let handshake = try store.run(
            ["handshake", newAlias, "--auth-check", "--environment", "sandbox", "--json"] + gateway.connection
        ).succeeded()
        #expect((try handshake.json()["auth_check"] as? [String: Any])?["verdict"] as? String == "accepted")
        try store.run(
            [
                "send", newAlias, "--token", GatewayCommandTests.token, "--alert", "Hello from Linux", "--environment",
                "sandbox",
            ]
                + gateway.connection
        ).succeeded()
        let deliveries = try gateway.deliveries().filter { $0["device_token"] as? String == GatewayCommandTests.token }
        #expect(deliveries.count == 1)
        #expect(deliveries.first?["topic"] as? String == "com.example.onboard")

        // The private key was never written to a file: not in the store, not in the working folder.
        let forms = try Self.leakForms(ofKey: pendingKey)
        for (name, bytes) in try Self.allBytes(under: work.url.path) {
            for form in forms {
                #expect(bytes.range(of: form) == nil, "the private key is in \(name)")
            }
        }
    }

    @Test func certificateWithoutAPendingKeyIsRefusedWithItsFingerprint() throws {
        let store = try Store()
        // A request in the store, but the certificate is for another key.
        #expect(try store.run(["request", "--out", store.folder.path("mine.csr"), "--alias", "mine"]).status == 0)
        let other = try TestPKI.request(in: store.folder, name: "other", subject: "/CN=elsewhere")
        let certificate = try TestPKI.issue(csr: other, bundle: "com.example.elsewhere", in: store.folder)
        let fingerprint = try #require(
            try store.run(["inspect", other, "--json"]).stdout.firstMatch(
                of: /"public_key_fingerprint" : "([0-9A-F:]+)"/
            )
        ).1
        let refused = try store.run(["import", certificate]).exited(2, stderr: certificate, String(fingerprint))
        #expect(refused.stderr.contains("--key KEYFILE") && refused.stderr.contains(".p12"))
        #expect(refused.stderr.contains("mine (public key SHA-256"))
        #expect(try store.listJSON().isEmpty)

        // remove discards a pending request and its key.
        let listed = try store.run(["list", "--json"]).json()
        let pending = try #require((listed["pending_requests"] as? [[String: Any]])?.first)
        let hex = Self.hex(try #require(pending["public_key_fingerprint"] as? String))
        _ = try Self.storedKey(store: store.path, alias: "mine", fingerprint: hex)
        try store.run(["remove", "mine"]).succeeded(stdout: "pending request mine")
        #expect(try store.secret("mine").stdout.isEmpty)
        #expect((try store.run(["list", "--json"]).json()["pending_requests"] as? [Any])?.isEmpty == true)
    }

    /// A pending request's key is the only copy of that key: orphan cleaning must never take it.
    @Test func aPendingKeyIsNeverAnOrphan() throws {
        let store = try Store()
        #expect(try store.run(["request", "--out", store.folder.path("keep.csr"), "--alias", "keep"]).status == 0)
        let listed = try store.run(["list", "--json"]).json()
        let pending = try #require((listed["pending_requests"] as? [[String: Any]])?.first)
        let hex = Self.hex(try #require(pending["public_key_fingerprint"] as? String))
        let key = try Self.storedKey(store: store.path, alias: "keep", fingerprint: hex)

        let check = try store.run(["check"])
        #expect(!check.stdout.contains("orphan") && !check.stderr.contains("orphan"), "\(check.stdout)\(check.stderr)")
        try store.run(["remove", "--orphans"]).succeeded(stdout: "no orphaned secrets")
        #expect(try Self.storedKey(store: store.path, alias: "keep", fingerprint: hex) == key)
    }
}
