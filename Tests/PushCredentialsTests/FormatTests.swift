import Foundation
@testable import PushCredentials
import SwiftASN1
import Testing
import X509

struct FormatTests {
    @Test func topicsExtensionRoundTrips() throws {
        let topics = [PushTopic(name: "com.example.app", kinds: ["app"]),
                      PushTopic(name: "com.example.app.voip", kinds: ["voip", "app"])]
        let ext = try PushTopicsExtension(topics: topics).makeCertificateExtension()
        #expect(ext.oid == .ApplePushExtensionID.topics)
        #expect(try PushTopicsExtension(ext).topics == topics)
    }

    @Test func topicsExtensionRejectsATopicWithoutKinds() throws {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { try $0.serialize(ASN1UTF8String("com.x")) }
        let ext = Certificate.Extension(oid: .ApplePushExtensionID.topics, critical: false, value: serializer.serializedBytes[...])
        #expect(throws: (any Error).self) { try PushTopicsExtension(ext) }
    }

    @Test func pemBlocksSkipBagAttributes() throws {
        let text = try String(contentsOfFile: Paths.cert("pem/sandbox-bag-attributes.pem"), encoding: .utf8)
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
        let der = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Paths.cert("pem/universal.cer"))))
        #expect(CredentialFile.sniff(der) == .certificateDER)
        #expect(CredentialFile.sniff(Array(der.prefix(100))) == .truncatedDER)
        let p12 = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Paths.cert("p12/openssl3-default.p12"))))
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
        var arguments = ["pkcs12", "-export", "-in", Paths.cert("identities/universal.pem"),
                         "-inkey", Paths.cert("identities/universal.key"), "-out", output, "-passout", "file:\(passwordFile)"]
        if legacy { arguments.append("-legacy") }
        #expect(try Self.openssl(arguments) == 0)

        let file = try CredentialFile.read(path: output, password: .fixed(SecretBytes("round-trip-pass")))
        #expect(file.certificate.sha256 == Manifest.entry("identities/universal.pem").sha256)
        #expect(file.privateKey?.matchesCertificate == true)
        #expect(file.protection?.usesLegacyAlgorithms == legacy)
    }
}
