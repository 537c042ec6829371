import Foundation
import TestSupport
import Testing

/// `import CERT --key KEYFILE` with a key made elsewhere, in every shape keys come in, and files
/// that hold both a certificate and its key in an unusual order.
@Suite(.needsPrivateSecretService)
struct KeyPairingTests {
    typealias Store = StoreCommandTests.Store
    static let password = StoreCommandTests.password

    struct KeyShape: Sendable, CustomTestStringConvertible {
        var name: String
        /// openssl arguments that read identities/production.key (PKCS#8 PEM) and write the shape to `-out`.
        var openssl: [String]
        var encrypted = false
        var testDescription: String { name }
    }

    static let shapes: [KeyShape] = [
        KeyShape(name: "PKCS#8 PEM", openssl: ["pkey"]),
        KeyShape(name: "PKCS#1 PEM", openssl: ["pkey", "-traditional"]),
        KeyShape(name: "PKCS#8 DER", openssl: ["pkey", "-outform", "DER"]),
        KeyShape(name: "PKCS#1 DER", openssl: ["pkey", "-traditional", "-outform", "DER"]),
        KeyShape(
            name: "encrypted PKCS#8 PEM",
            openssl: ["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-passout", "env:KEYPASS"],
            encrypted: true
        ),
        KeyShape(
            name: "encrypted PKCS#8 DER",
            openssl: ["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-passout", "env:KEYPASS", "-outform", "DER"],
            encrypted: true
        ),
        KeyShape(
            name: "encrypted PKCS#1 PEM",
            openssl: ["rsa", "-aes256", "-traditional", "-passout", "env:KEYPASS"],
            encrypted: true
        ),
    ]

    /// The production certificate as Apple hands it out: DER, alone.
    static func certificateDER(in folder: TemporaryFolder) throws -> String {
        let path = folder.path("aps.cer")
        try TestPKI.openssl(["x509", "-in", CLI.cert("identities/production.pem"), "-outform", "DER", "-out", path])
        return path
    }

    @Test(arguments: shapes)
    func certificateWithItsKey(_ shape: KeyShape) throws {
        let store = try Store()
        let key = store.folder.path("push.key")
        let converted = try CLI.runProgram(
            "openssl",
            shape.openssl + ["-in", CLI.cert("identities/production.key"), "-out", key],
            environment: ["KEYPASS": Self.password]
        )
        try #require(converted.status == 0, "\(converted.stderr)")
        let certificate = try Self.certificateDER(in: store.folder)

        if shape.encrypted {
            let withoutPassword = try store.run(["import", certificate, "--key", key])
            #expect(withoutPassword.status == 2)
            #expect(withoutPassword.stderr.contains("--password-stdin"), "\(withoutPassword.stderr)")
            let wrong = try store.run(["import", certificate, "--key", key, "--password-stdin"], stdin: "not-it\n")
            #expect(wrong.status == 2)
            #expect(wrong.stderr.contains("Wrong password"), "\(wrong.stderr)")
            #expect(try store.listJSON().isEmpty)
        }
        let imported = try store.run(
            ["import", certificate, "--key", key] + (shape.encrypted ? ["--password-stdin"] : []),
            stdin: shape.encrypted ? Self.password + "\n" : nil
        )
        #expect(imported.status == 0, "\(imported.stderr)")
        let credentials = try store.listJSON()
        try #require(credentials.count == 1)
        #expect(credentials[0]["credential"] as? String == "com.example.app-production")
        #expect(credentials[0]["environments"] as? [String] == ["production"])

        // The key went to the Secret Service (unencrypted, PKCS#8) and nowhere else in the store.
        let sha256 = try #require(credentials[0]["sha256"] as? String)
        let stored = try OnboardingTests.storedKey(
            store: store.path,
            alias: "com.example.app-production",
            fingerprint: OnboardingTests.hex(sha256)
        )
        let original = try OnboardingTests.storedKeyFromPEM(CLI.cert("identities/production.key"))
        #expect(stored == original)
        for (name, bytes) in try OnboardingTests.allBytes(under: store.path) {
            for form in try OnboardingTests.leakForms(ofKey: original) {
                #expect(bytes.range(of: form) == nil, "the private key is in \(name)")
            }
        }
        // The stored identity works: check reads the key back from the Secret Service.
        let check = try store.run(["check", "com.example.app-production"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    @Test func keyOfAnotherCertificateIsRefusedNamingBothFiles() throws {
        let store = try Store()
        let certificate = try Self.certificateDER(in: store.folder)
        let otherKey = CLI.cert("identities/sandbox.key")
        let refused = try store.run(["import", certificate, "--key", otherKey])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains(certificate) && refused.stderr.contains(otherKey), "\(refused.stderr)")
        #expect(refused.stderr.contains("does not belong"))
        #expect(try store.listJSON().isEmpty)
        // Nothing was stored in the Secret Service either.
        let search = try StoreCommandTests.secretTool([
            "search", "--all", "application", "apnsctl", "store", store.path,
        ])
        #expect(!search.stdout.contains("apnsctl"), "\(search.stdout)")

        // --key with a file that holds no key says so.
        let notAKey = try store.run(["import", certificate, "--key", CLI.cert("identities/production.pem")])
        #expect(notAKey.status == 2)
        #expect(notAKey.stderr.contains("holds no private key"), "\(notAKey.stderr)")
    }

    /// `cat push.key aps.pem` and `cat aps.cer push.key`: both read by inspect and import.
    @Test(arguments: ["key before certificate", "DER certificate then PEM key"])
    func bundlesInAnyOrder(_ layout: String) throws {
        let store = try Store()
        let key = try Data(contentsOf: URL(fileURLWithPath: CLI.cert("identities/universal.key")))
        let bundle = store.folder.path("both")
        if layout == "key before certificate" {
            let certificate = try Data(contentsOf: URL(fileURLWithPath: CLI.cert("identities/universal.pem")))
            try (key + certificate).write(to: URL(fileURLWithPath: bundle))
        } else {
            let der = store.folder.path("aps.cer")
            try TestPKI.openssl(["x509", "-in", CLI.cert("identities/universal.pem"), "-outform", "DER", "-out", der])
            try (Data(contentsOf: URL(fileURLWithPath: der)) + key).write(to: URL(fileURLWithPath: bundle))
        }
        let inspect = try store.run(["inspect", bundle, "--json"])
        #expect(inspect.status == 0, "\(inspect.stdout)\(inspect.stderr)")
        let files = try #require(try OnboardingTests.json(inspect)["files"] as? [[String: Any]])
        let report = try #require(files.first)
        #expect((report["certificate"] as? [String: Any])?["bundle_id"] as? String == "com.example.app")
        #expect((report["private_key"] as? [String: Any])?["matches_certificate"] as? Bool == true, "\(report)")

        let imported = try store.run(["import", bundle])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try store.listJSON().first?["credential"] as? String == "com.example.app-universal")
    }
}

extension OnboardingTests {
    /// The PKCS#8 DER of an unencrypted PEM key file.
    static func storedKeyFromPEM(_ path: String) throws -> [UInt8] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return try #require(Data(base64Encoded: body)).map { $0 }
    }
}
