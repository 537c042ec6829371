import CredentialFormats
import Foundation
import PushCore
import TestSupport
import Testing
import X509

/// Apple's topics extension and the topics a certificate covers: read from certificates the
/// real OpenSSL signed, and a topic's kind told by Apple's suffixes.
struct PushTopicsTests {
    /// The extension as swift-asn1 writes it, put into a certificate by `openssl x509 -req`
    /// (as raw DER in its extension file), is read back from the certificate as it was.
    @Test func theExtensionOpenSSLCarriesIsReadBackAsWritten() throws {
        let topics = [
            PushTopic(name: "com.example.topics", kinds: ["app"]),
            PushTopic(name: "com.example.topics.voip", kinds: ["voip"]),
            PushTopic(name: "com.example.topics.complication", kinds: ["complication"]),
        ]
        let value = try PushTopicsExtension(topics: topics).makeCertificateExtension().value
        let hex = value.map { String(format: "%02X", $0) }.joined()
        let folder = try TemporaryFolder()
        let key = folder.path("topics.key")
        let csr = try TestPKI.request(in: folder, name: "topics", subject: "/CN=Apple Push Services: x", key: key)
        let extensions = folder.path("topics.ext")
        try """
        [push]
        1.2.840.113635.100.6.3.1=DER:0500
        1.2.840.113635.100.6.3.2=DER:0500
        1.2.840.113635.100.6.3.6=DER:\(hex)
        basicConstraints=CA:FALSE

        """.write(toFile: extensions, atomically: true, encoding: .utf8)
        let certificate = folder.path("topics.pem")
        try TestPKI.openssl([
            "x509", "-req", "-in", csr, "-CA", TestPaths.cert("ca/wwdr-test-ca.pem"), "-CAkey",
            TestPaths.cert("ca/wwdr-test-ca.key"), "-days", "30", "-extfile", extensions, "-extensions", "push",
            "-set_serial", "0x0123456789", "-out", certificate,
        ])
        let file = try CredentialFile.read(path: certificate)
        #expect(file.certificate.topics == topics)
        let ext = try #require(file.certificate.certificate.extensions[oid: .ApplePushExtensionID.topics])
        #expect(try PushTopicsExtension(ext).topics == topics)
    }

    /// The committed universal identity (certs/mint.sh) covers what its manifest says.
    @Test func aFixturesTopicsAreTheManifests() throws {
        let entry = Manifest.entry("identities/universal.pem")
        let expected = try #require(entry.topics)
        let file = try CredentialFile.read(path: TestPaths.cert(entry.path))
        #expect(file.certificate.topics.map(\.name) == expected.map(\.topic))
        #expect(file.certificate.topics.map(\.kinds) == expected.map(\.kinds))
    }

    @Test func anotherExtensionIsNotReadAsTopics() throws {
        let file = try CredentialFile.read(path: TestPaths.cert("identities/universal.pem"))
        let other = try #require(
            file.certificate.certificate.extensions.first { $0.oid != .ApplePushExtensionID.topics }
        )
        #expect(throws: (any Error).self) { try PushTopicsExtension(other) }
    }

    @Test(
        arguments: [
            ("com.example.app", "app"), ("com.example.app.voip", "voip"),
            ("com.example.app.complication", "complication"), ("com.example.app.voip-ptt", "pushtotalk"),
            ("com.example.app.pushkit.fileprovider", "fileprovider"),
            ("com.example.app.push-type.liveactivity", "liveactivity"),
            // A suffix alone is no topic of that kind: something must come before it.
            (".voip", "app"),
        ]
    )
    func aTopicsKindIsToldByApplesSuffix(_ name: String, _ kind: String) {
        #expect(PushTopic(inferring: name) == PushTopic(name: name, kinds: [kind]))
    }

    @Test func describedTopicsKeepTheirOrder() {
        let names = ["com.b", "com.a.voip", "com.c.complication"]
        #expect(PushTopic.described(names).map(\.name) == names)
        #expect(PushTopic.described(names).map(\.kinds) == [["app"], ["voip"], ["complication"]])
    }
}
