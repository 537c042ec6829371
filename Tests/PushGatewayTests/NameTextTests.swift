import Foundation
import TestSupport
import Testing
import X509

@testable import PushGateway

/// The handshake's names, written without `String(describing:)`, against swift-certificates'
/// own text for every certificate at hand: Debian's whole CA bundle (names in many alphabets,
/// e-mail addresses, multi-part organisations), Apple-issued push certificates, and names
/// built here with several attributes in one RDN and an attribute type swift-certificates has
/// no short name for.
@Suite struct NameTextTests {
    static func certificates() throws -> [Certificate] {
        var paths = ["/etc/ssl/certs/ca-certificates.crt"]
        let apple = try FileManager.default.contentsOfDirectory(atPath: TestPaths.appleIssued.path)
        paths += apple.filter { $0.hasSuffix(".pem") }.map { TestPaths.appleIssued.appendingPathComponent($0).path }
        return try ServerTrustEvaluator.loadCertificates(paths: paths)
    }

    @Test func everyCertificatesSubjectAndIssuerReadAsSwiftCertificatesWritesThem() throws {
        let certificates = try Self.certificates()
        #expect(certificates.count > 100, "Debian's bundle and the Apple-issued certificates are read")
        for certificate in certificates {
            #expect(NameText.describe(certificate.subject) == certificate.subject.description)
            #expect(NameText.describe(certificate.issuer) == certificate.issuer.description)
        }
    }

    @Test func severalAttributesInOneRDNAndAnUnnamedTypeToo() throws {
        let unnamed = RelativeDistinguishedName.Attribute(type: [2, 5, 4, 45], utf8String: "unique")
        let name = try DistinguishedName([
            RelativeDistinguishedName([
                .init(type: .RDNAttributeType.countryName, printableString: "FR")
            ]),
            RelativeDistinguishedName([
                .init(type: .RDNAttributeType.organizationName, utf8String: "Équipe, \"push\""),
                .init(type: .RDNAttributeType.organizationalUnitName, utf8String: "ops+on-call"),
            ]),
            RelativeDistinguishedName([unnamed]),
            RelativeDistinguishedName([.init(type: .RDNAttributeType.commonName, utf8String: "gateway.test")]),
        ])
        #expect(NameText.describe(name) == name.description)
        #expect(NameText.describe(name).hasPrefix("CN=gateway.test,"))
        #expect(NameText.describe(DistinguishedName()) == DistinguishedName().description)
    }
}
