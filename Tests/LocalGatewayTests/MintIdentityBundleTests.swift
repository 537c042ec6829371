import CredentialFormats
import Foundation
import LocalGateway
import PushStore
import TestSupport
import Testing

/// What `gateway mint-identity` does, from the library alone: a client CA kept in a folder and a
/// TEST push identity as a PKCS#12 bundle, read back with real OpenSSL.
struct MintIdentityBundleTests {
    /// The bundle in a file, read back by the library's PKCS#12 reader.
    static func read(_ bytes: [UInt8], password: SecretBytes) throws -> CredentialFile {
        let path = try Fixtures.temporaryPath("minted.p12")
        try PrivateFile.write(bytes, to: path, overwrite: false)
        return try CredentialFile.read(path: path, password: .fixed(password))
    }

    @Test func theFolderKeepsOneAuthorityForEveryIdentity() throws {
        let folder = try Fixtures.temporaryPath("gw")
        let password = SecretBytes("mint-pass")
        let first = try Self.read(
            try LocalGateway.mintIdentityBundle(
                topic: "com.example.app",
                environments: [.sandbox, .production],
                caFolder: folder,
                password: password
            ),
            password: password
        )
        let caPath = TestCertificateAuthority.certificatePath(in: folder)
        let keyPath = TestCertificateAuthority.privateKeyPath(in: folder)
        #expect(caPath == folder + "/client-ca.pem" && keyPath == folder + "/client-ca.key")
        #expect(
            try posixPermissions(folder) & 0o077 == 0 && posixPermissions(keyPath) & 0o077 == 0,
            "the CA's key is private"
        )
        let caPEM = try String(contentsOfFile: caPath, encoding: .utf8)

        let second = try Self.read(
            try LocalGateway.mintIdentityBundle(
                topic: "com.example.other",
                environments: [.sandbox],
                teamID: "ZYXWV98765",
                caFolder: folder,
                password: password,
                style: .legacy
            ),
            password: password
        )
        #expect(try String(contentsOfFile: caPath, encoding: .utf8) == caPEM, "the second call reuses the CA")
        let authority = try TestCertificateAuthority.loadOrCreate(folder: folder)
        #expect(authority.certificatePEM == caPEM)
        for identity in [first, second] {
            #expect(identity.chain.map(\.der) == [authority.certificateDER], "the CA travels in the bundle")
            #expect(identity.certificate.issuer == identity.chain.first?.subject)
            #expect(identity.privateKeyPKCS8 != nil && identity.privateKey?.matchesCertificate == true)
        }
        #expect(first.certificate.serialNumber != second.certificate.serialNumber)

        // OpenSSL agrees that the folder's CA signed both.
        let scratch = try TemporaryFolder()
        for (index, identity) in [first, second].enumerated() {
            let leaf = scratch.path("leaf\(index).pem")
            try PEMWriter.certificate(identity.certificate.der).write(toFile: leaf, atomically: true, encoding: .utf8)
            let verified = try CLI.runProgram("openssl", ["verify", "-CAfile", caPath, leaf])
            #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        }
    }

    @Test func theBundleCarriesTheAppsTopicsWhateverItsEnvironments() throws {
        let password = SecretBytes("mint-pass")
        let bundle = try LocalGateway.mintIdentityBundle(
            topic: "com.example.app",
            environments: [.sandbox],
            teamID: "ZYXWV98765",
            caFolder: try Fixtures.temporaryPath("gw"),
            password: password
        )
        let identity = try Self.read(bundle, password: password).certificate
        #expect(
            identity.topics == [
                PushTopic(name: "com.example.app", kinds: ["app"]),
                PushTopic(name: "com.example.app.voip", kinds: ["voip"]),
                PushTopic(name: "com.example.app.complication", kinds: ["complication"]),
            ]
        )
        #expect(identity.topics == LocalGateway.testIdentityTopics(for: "com.example.app"))
        #expect(identity.environments == [.sandbox] && identity.bundleID == "com.example.app")
        #expect(identity.teamID == "ZYXWV98765" && identity.isPushCertificate)

        let wrong = #expect(throws: CredentialError.self) { try Self.read(bundle, password: SecretBytes("other")) }
        #expect(wrong?.code == .wrongPassword)
    }

    @Test func aFolderWithAnUnreadableCAIsRefusedAndLeftAlone() throws {
        let folder = try Fixtures.temporaryPath("gw")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let caPath = TestCertificateAuthority.certificatePath(in: folder)
        try "not a certificate".write(toFile: caPath, atomically: true, encoding: .utf8)
        try "not a key".write(
            toFile: TestCertificateAuthority.privateKeyPath(in: folder),
            atomically: true,
            encoding: .utf8
        )
        let error = #expect(throws: LocalGatewayError.self) {
            try LocalGateway.mintIdentityBundle(
                topic: "com.example.app",
                environments: [.sandbox],
                caFolder: folder,
                password: SecretBytes("mint-pass")
            )
        }
        #expect(error?.code == .invalidCA)
        #expect(try String(contentsOfFile: caPath, encoding: .utf8) == "not a certificate")
    }
}
