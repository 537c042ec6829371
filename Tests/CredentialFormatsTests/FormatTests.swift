import Crypto
import Foundation
import SwiftASN1
import TestSupport
import Testing
import X509

@testable import CredentialFormats

struct FormatTests {
    @Test func topicsExtensionRoundTrips() throws {
        let topics = [
            PushTopic(name: "com.example.app", kinds: ["app"]),
            PushTopic(name: "com.example.app.voip", kinds: ["voip", "app"]),
        ]
        let ext = try PushTopicsExtension(topics: topics).makeCertificateExtension()
        #expect(ext.oid == .ApplePushExtensionID.topics)
        #expect(try PushTopicsExtension(ext).topics == topics)
    }

    @Test func topicsExtensionRejectsATopicWithoutKinds() throws {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { try $0.serialize(ASN1UTF8String("com.x")) }
        let ext = Certificate.Extension(
            oid: .ApplePushExtensionID.topics,
            critical: false,
            value: serializer.serializedBytes[...]
        )
        #expect(throws: (any Error).self) { try PushTopicsExtension(ext) }
    }

    @Test func pemBlocksSkipBagAttributes() throws {
        let text = try String(contentsOfFile: TestPaths.cert("pem/sandbox-bag-attributes.pem"), encoding: .utf8)
        #expect(text.contains("Bag Attributes"))
        let blocks = PEMBlock.blocks(in: text)
        #expect(blocks.map(\.label).sorted() == ["CERTIFICATE", "PRIVATE KEY"])
        #expect(blocks.allSatisfy { $0.der != nil })
    }

    @Test func pemBlocksReadEncryptionHeaders() {
        let text = """
            -----BEGIN RSA PRIVATE KEY-----
            Proc-Type: 4,ENCRYPTED
            DEK-Info: AES-256-CBC,00112233445566778899AABBCCDDEEFF

            AAAA
            -----END RSA PRIVATE KEY-----
            """
        let block = try! #require(PEMBlock.blocks(in: text).first)
        #expect(block.isEncrypted)
        #expect(block.headers["DEK-Info"]?.hasPrefix("AES-256-CBC") == true)
    }

    @Test func sniffingTellsShapesApart() throws {
        #expect(CredentialFile.sniff([0xFF, 0xD8, 0xFF, 0xE0]) == .other("a JPEG image"))
        #expect(CredentialFile.sniff(Array("hello".utf8)) == .other("plain text without a PEM block"))
        let der = try [UInt8](Data(contentsOf: URL(fileURLWithPath: TestPaths.cert("pem/universal.cer"))))
        #expect(CredentialFile.sniff(der) == .certificateDER)
        #expect(CredentialFile.sniff(Array(der.prefix(100))) == .truncatedDER)
        let p12 = try [UInt8](Data(contentsOf: URL(fileURLWithPath: TestPaths.cert("p12/openssl3-default.p12"))))
        #expect(CredentialFile.sniff(p12) == .pkcs12)
    }

    @Test func secretsAreRedactedInText() {
        let secret = SecretBytes("hunter2")
        #expect(!"\(secret)".contains("hunter2"))
        #expect(!String(reflecting: secret).contains("hunter2"))
    }
}

/// Bundles written by the real OpenSSL 3 CLI, with and without -legacy, and by our own writer.
struct RoundTripTests {
    static func openssl(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test(arguments: [true, false])
    func bundleWrittenByOpenSSLImports(legacy: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apnsctl-rt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.p12").path
        let passwordFile = folder.appendingPathComponent("pass").path
        try "round-trip-pass".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        var arguments = [
            "pkcs12", "-export", "-in", TestPaths.cert("identities/universal.pem"),
            "-inkey", TestPaths.cert("identities/universal.key"), "-out", output, "-passout", "file:\(passwordFile)",
        ]
        if legacy { arguments.append("-legacy") }
        #expect(try Self.openssl(arguments) == 0)

        let file = try CredentialFile.read(path: output, password: .fixed(SecretBytes("round-trip-pass")))
        #expect(file.certificate.sha256 == Manifest.entry("identities/universal.pem").sha256)
        #expect(file.privateKey?.matchesCertificate == true)
        #expect(file.protection?.usesLegacyAlgorithms == legacy)
    }
}

struct ProviderKeyTests {
    @Test func readsApplesFileAndSignsAVerifiableJWT() throws {
        let key = try ProviderKey(path: TestPaths.cert("keys/AuthKey_ABC123DEFG.p8"), teamID: "TEAM123456")
        #expect(key.keyID == "ABC123DEFG")
        let jwt = try key.makeJWT(issuedAt: Date(timeIntervalSince1970: 1_700_000_000))
        let parts = jwt.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header =
            try JSONSerialization.jsonObject(with: try #require(Data(base64URLEncoded: parts[0]))) as? [String: String]
        #expect(header == ["alg": "ES256", "kid": "ABC123DEFG"])
        let claims =
            try JSONSerialization.jsonObject(with: try #require(Data(base64URLEncoded: parts[1]))) as? [String: Any]
        #expect(claims?["iss"] as? String == "TEAM123456")
        #expect(claims?["iat"] as? Int == 1_700_000_000)
        // The signature is raw r||s (64 bytes) and verifies with the public key in the fixture.
        let signature = try #require(Data(base64URLEncoded: parts[2]))
        #expect(signature.count == 64)
        let publicPEM = try String(contentsOfFile: TestPaths.cert("keys/AuthKey_ABC123DEFG.pub.pem"), encoding: .utf8)
        let publicKey = try P256.Signing.PublicKey(pemRepresentation: publicPEM)
        #expect(
            publicKey.isValidSignature(
                try P256.Signing.ECDSASignature(rawRepresentation: signature),
                for: Data("\(parts[0]).\(parts[1])".utf8)
            )
        )
        #expect(!jwt.contains("="))
    }

    /// The header and claims are written out directly: byte for byte what a JSON encoder with
    /// sorted keys writes, at any time (a negative or a 10-digit and an 11-digit one).
    @Test(arguments: [0, -1, 1_700_000_000, 99_999_999_999])
    func writesTheSameJSONAsAnEncoder(seconds: Int) throws {
        struct Header: Encodable {
            let alg = "ES256"
            let kid: String
        }
        struct Claims: Encodable {
            let iss: String
            let iat: Int
        }
        let key = try ProviderKey(path: TestPaths.cert("keys/AuthKey_ABC123DEFG.p8"), teamID: "TEAM123456")
        let parts = try key.makeJWT(issuedAt: Date(timeIntervalSince1970: Double(seconds))).split(separator: ".")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(try #require(Data(base64URLEncoded: String(parts[0]))) == encoder.encode(Header(kid: "ABC123DEFG")))
        #expect(
            try #require(Data(base64URLEncoded: String(parts[1])))
                == encoder.encode(Claims(iss: "TEAM123456", iat: seconds))
        )
    }

    @Test(arguments: [("keys/AuthKey_RSA0000001.p8", "RSA"), ("keys/AuthKey_P384KEY001.p8", "P-384")])
    func wrongKeyTypesAreNamed(_ path: String, _ named: String) throws {
        let error = try #require(Result { try ProviderKey(path: TestPaths.cert(path), teamID: "TEAM123456") }.failure)
        #expect(error.code == .unsupportedKey)
        #expect(error.message.contains(named))
    }

    @Test func identifiersAreValidated() throws {
        // Each identifier has its own code, so that a front end can say which one to give again.
        let team = #expect(throws: PushCoreError.self) {
            try ProviderKey(path: TestPaths.cert("keys/AuthKey_ABC123DEFG.p8"), teamID: "short")
        }
        #expect(team?.code == .invalidTeamID)
        #expect(team?.hint?.contains("--") == false)
        let key = #expect(throws: PushCoreError.self) {
            try ProviderKey(path: TestPaths.cert("keys/AuthKey_ABC123DEFG.p8"), teamID: "ABCDE12345", keyID: "bad")
        }
        #expect(key?.code == .invalidKeyID)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apnsctl-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let unnamed = folder.appendingPathComponent("key.p8").path
        try FileManager.default.copyItem(atPath: TestPaths.cert("keys/AuthKey_ABC123DEFG.p8"), toPath: unnamed)
        #expect(Result { try ProviderKey(path: unnamed, teamID: "ABCDE12345") }.failure?.code == .keyIDRequired)
        #expect(ProviderKey.keyID(fromFileName: "/x/AuthKey_ABC123DEFG.p8") == "ABC123DEFG")
        #expect(ProviderKey.keyID(fromFileName: "/x/key.p8") == nil)
    }
}

struct PKCS12WriterTests {
    @Test(arguments: PKCS12Writer.Style.allCases)
    func writesWhatWeAndOpenSSLRead(_ style: PKCS12Writer.Style) throws {
        let source = try CredentialFile.read(path: TestPaths.cert("pem/sandbox-bag-attributes.pem"))
        let bytes = try PKCS12Writer.write(
            certificateDER: source.certificate.der,
            privateKey: try #require(source.privateKeyPKCS8),
            password: SecretBytes("export-pass"),
            friendlyName: "test",
            style: style
        )
        let back = try CredentialFile.decode(bytes, path: "export.p12", password: .fixed(SecretBytes("export-pass")))
        #expect(back.certificate.sha256 == source.certificate.sha256)
        #expect(back.privateKey?.matchesCertificate == true)
        #expect(back.protection?.usesLegacyAlgorithms == (style == .legacy))
        #expect(back.protection?.mac == (style == .legacy ? "SHA-1" : "SHA-256"))
    }
}
