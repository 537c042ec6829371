import CredentialFormats
import Foundation
import PushChecks
import TestSupport
import Testing

/// Inspection against certificates Apple really issued, with the facts their README lists.
@Suite(
    .enabled(
        if: FileManager.default.fileExists(atPath: Paths.appleIssued.path),
        "../shared/testdata/apple-issued is not beside this checkout; the Apple-issued certificates cannot be checked"
    )
)
struct AppleIssuedCertificateTests {
    struct Expected: Sendable, CustomTestStringConvertible {
        var file: String
        var commonName: String
        var bundleID: String
        var teamID: String
        var organization: String?
        var environments: [PushEnvironment]
        var topics: [PushTopic]
        var notBefore: String
        var notAfter: String
        var serial: String
        var sha256: String
        var signatureAlgorithm: String
        var testDescription: String { file }
    }

    static let expectations: [Expected] = [
        Expected(
            file: "development-2015.pem",
            commonName: "Apple Development IOS Push Services: com.makeus.dingo",
            bundleID: "com.makeus.dingo",
            teamID: "VNM6WKNG6W",
            organization: nil,
            environments: [.sandbox],
            topics: [],
            notBefore: "2015-11-30T05:17:31Z",
            notAfter: "2016-11-29T05:17:31Z",
            serial: "3E6AFAB05B9CDB14",
            sha256: "CF:B9:BF:7E:93:D2:58:36:0E:4F:C4:83:A6:21:D1:4E:B9:FF:28:68:27:E6:94:AC:20:ED:FB:9D:F9:D9:50:07",
            signatureAlgorithm: "sha1WithRSAEncryption"
        ),
        Expected(
            file: "production-2015.pem",
            commonName: "Apple Production IOS Push Services: co.getpopulr.populr",
            bundleID: "co.getpopulr.populr",
            teamID: "8Y2GFS326V",
            organization: nil,
            environments: [.production],
            topics: [],
            notBefore: "2015-06-24T19:12:39Z",
            notAfter: "2016-06-23T19:12:39Z",
            serial: "7CB3772049C76CBC",
            sha256: "ED:BB:4E:18:99:1C:8A:C4:26:9F:EC:C9:39:0E:22:1A:56:D0:F6:D8:C8:71:4C:D8:5F:1C:42:7B:BA:0D:AF:99",
            signatureAlgorithm: "sha1WithRSAEncryption"
        ),
        Expected(
            file: "universal-2017.pem",
            commonName: "Apple Push Services: co.getpopulr.populr",
            bundleID: "co.getpopulr.populr",
            teamID: "8Y2GFS326V",
            organization: "Desmond McNamee",
            environments: [.sandbox, .production],
            topics: [
                PushTopic(name: "co.getpopulr.populr", kinds: ["app"]),
                PushTopic(name: "co.getpopulr.populr.voip", kinds: ["voip"]),
                PushTopic(name: "co.getpopulr.populr.complication", kinds: ["complication"]),
            ],
            notBefore: "2017-04-23T09:37:39Z",
            notAfter: "2018-05-23T09:37:39Z",
            serial: "3C86A44B5B9E6549",
            sha256: "D6:A4:A9:EF:3C:7F:CF:C9:A8:00:AF:96:E1:7B:D2:45:CF:61:27:54:CB:FB:CF:24:F6:8F:F2:72:12:CD:B1:06",
            signatureAlgorithm: "sha256WithRSAEncryption"
        ),
    ]

    @Test(arguments: expectations)
    func reportsWhatAppleIssued(_ expected: Expected) throws {
        let path = Paths.appleIssued.appendingPathComponent(expected.file).path
        let file = try CredentialFile.read(path: path)
        let certificate = file.certificate
        let iso = ISO8601DateFormatter()

        #expect(certificate.commonName == expected.commonName)
        #expect(certificate.bundleID == expected.bundleID)
        #expect(certificate.coveredTopics.first == expected.bundleID)
        #expect(certificate.teamID == expected.teamID)
        #expect(certificate.organization == expected.organization)
        #expect(certificate.environments == expected.environments)
        #expect(certificate.environmentSource == .extensions)
        #expect(certificate.topics == expected.topics)
        #expect(certificate.notBefore == iso.date(from: expected.notBefore))
        #expect(certificate.notAfter == iso.date(from: expected.notAfter))
        #expect(certificate.serialNumber == expected.serial)
        #expect(certificate.sha256 == expected.sha256)
        #expect(certificate.signatureAlgorithm == expected.signatureAlgorithm)
        #expect(certificate.publicKeyType == "RSA")
        #expect(certificate.publicKeyBits == 2048)
        #expect(certificate.kind == .apns)
        #expect(certificate.isPushCertificate)
        #expect(
            certificate.issuer
                == "CN=Apple Worldwide Developer Relations Certification Authority, OU=Apple Worldwide Developer Relations, O=Apple Inc., C=US"
        )
        #expect(certificate.wwdrGeneration == "G1")
        #expect(certificate.status(at: Date(), warnDays: 30) == .expired)
        #expect(file.privateKey == nil)

        let findings = CertificateFindings.evaluate(file, at: Date(), warnDays: 30)
        #expect(findings.map(\.code.rawValue) == ["expired"])
    }

    @Test func sandboxCertificateHasNoProductionOrTopicsExtension() throws {
        let file = try CredentialFile.read(path: Paths.appleIssued.appendingPathComponent("development-2015.pem").path)
        let extensions = file.certificate.certificate.extensions
        #expect(extensions[oid: .ApplePushExtensionID.development] != nil)
        #expect(extensions[oid: .ApplePushExtensionID.production] == nil)
        #expect(extensions[oid: .ApplePushExtensionID.topics] == nil)
    }
}
