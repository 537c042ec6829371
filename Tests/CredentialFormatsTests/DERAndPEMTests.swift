import CredentialFormats
import Foundation
import TestSupport
import Testing

/// DER certificates and PEM files as the real OpenSSL CLI writes them, whole and damaged: each
/// damage has its own error code, names the file and says what to do.
struct DERAndPEMTests {
    static func error(_ body: () throws -> CredentialFile) -> CredentialError? {
        do {
            _ = try body()
            Issue.record("expected a CredentialError, the file was read")
            return nil
        } catch let error as CredentialError {
            return error
        } catch {
            Issue.record("expected a CredentialError, got \(type(of: error)): \(error)")
            return nil
        }
    }

    /// The universal identity's certificate as DER, written by `openssl x509 -outform DER`.
    static func der(in folder: TemporaryFolder) throws -> String {
        let der = folder.path("universal.cer")
        try TestPKI.openssl(["x509", "-in", TestPaths.cert("identities/universal.pem"), "-outform", "DER", "-out", der])
        return der
    }

    @Test func aDERCertificateReadsAsThePEMOneDoes() throws {
        let folder = try TemporaryFolder()
        let der = try CredentialFile.read(path: try Self.der(in: folder))
        let pem = try CredentialFile.read(path: TestPaths.cert("identities/universal.pem"))
        #expect(der.format == .der)
        #expect(der.privateKey == nil)
        #expect(der.certificate.sha256 == pem.certificate.sha256)
        #expect(der.certificate.sha256 == Manifest.entry("identities/universal.pem").sha256)
        #expect(der.certificate.topics == pem.certificate.topics)
    }

    /// `cat aps.cer push.key`: a DER certificate with the PEM key after it is one identity.
    @Test func aDERCertificateFollowedByItsPEMKeyIsAnIdentity() throws {
        let folder = try TemporaryFolder()
        let der = try Data(contentsOf: URL(fileURLWithPath: try Self.der(in: folder)))
        let key = try Data(contentsOf: URL(fileURLWithPath: TestPaths.cert("identities/universal.key")))
        let joined = folder.path("joined.cer")
        try (der + key).write(to: URL(fileURLWithPath: joined))
        let file = try CredentialFile.read(path: joined)
        #expect(file.privateKey?.matchesCertificate == true)
        #expect(file.certificate.sha256 == Manifest.entry("identities/universal.pem").sha256)
    }

    @Test(arguments: [10, 100, 500])
    func aDERCertificateCutShortIsTruncated(keeping count: Int) throws {
        let folder = try TemporaryFolder()
        let der = try Data(contentsOf: URL(fileURLWithPath: try Self.der(in: folder)))
        let cut = folder.path("cut.cer")
        try der.prefix(count).write(to: URL(fileURLWithPath: cut))
        let error = try #require(Self.error { try CredentialFile.read(path: cut) })
        #expect(error.code == .truncated)
        #expect(error.path == cut)
        #expect(error.message.contains("DER"), "\(error.message)")
        #expect(error.hint?.isEmpty == false)
    }

    /// A DER structure that is whole but is no certificate (its signature algorithm's bytes
    /// overwritten) is damaged, not a wrong password and not "no certificate".
    @Test func aDERCertificateWithDamagedContentIsCorrupt() throws {
        let folder = try TemporaryFolder()
        var der = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try Self.der(in: folder))))
        // Within the TBSCertificate: its version tag [0] (A0 03 02 01 02) becomes a BOOLEAN.
        let version = try #require(der.firstRange(of: [0xA0, 0x03, 0x02, 0x01, 0x02]))
        der[version.lowerBound] = 0x01
        let damaged = folder.path("damaged.cer")
        try Data(der).write(to: URL(fileURLWithPath: damaged))
        let error = try #require(Self.error { try CredentialFile.read(path: damaged) })
        #expect(error.code == .corrupt)
        #expect(error.path == damaged)
    }

    @Test func aPEMBlockWhoseBodyDoesNotDecodeIsCorruptAndNamed() throws {
        let folder = try TemporaryFolder()
        let text = try String(contentsOfFile: TestPaths.cert("identities/universal.pem"), encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines[3] = String(repeating: "!", count: lines[3].count)
        let damaged = folder.path("damaged.pem")
        try lines.joined(separator: "\n").write(toFile: damaged, atomically: true, encoding: .utf8)
        let error = try #require(Self.error { try CredentialFile.read(path: damaged) })
        #expect(error.code == .corrupt)
        #expect(error.message.contains("CERTIFICATE"), "the damaged block is named: \(error.message)")
    }

    /// A certificate signing request is not a certificate: the hint says where it goes.
    @Test func aCertificateRequestIsNoCertificateAndTheHintSaysWhatToDo() throws {
        let folder = try TemporaryFolder()
        let csr = try TestPKI.request(in: folder, name: "push", subject: "/CN=push")
        let error = try #require(Self.error { try CredentialFile.read(path: csr) })
        #expect(error.code == .noCertificate)
        #expect(error.message.contains("CERTIFICATE REQUEST"), "\(error.message)")
        #expect(error.hint?.contains("aps.cer") == true, "\(error.hint ?? "")")
    }

    /// A certificate with another identity's key: read, and the key said not to match.
    @Test func aPEMBundleWithAnotherIdentitysKeyDoesNotMatch() throws {
        let folder = try TemporaryFolder()
        let bundle = folder.path("mixed.pem")
        let certificate = try String(contentsOfFile: TestPaths.cert("identities/universal.pem"), encoding: .utf8)
        let key = try String(contentsOfFile: TestPaths.cert("identities/other.key"), encoding: .utf8)
        try (certificate + key).write(toFile: bundle, atomically: true, encoding: .utf8)
        let file = try CredentialFile.read(path: bundle)
        #expect(file.privateKey?.matchesCertificate == false)
        let matching = folder.path("matching.pem")
        let ownKey = try String(contentsOfFile: TestPaths.cert("identities/universal.key"), encoding: .utf8)
        try (certificate + ownKey).write(toFile: matching, atomically: true, encoding: .utf8)
        #expect(try CredentialFile.read(path: matching).privateKey?.matchesCertificate == true)
    }
}
