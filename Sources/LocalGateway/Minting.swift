import CredentialFormats
import Crypto
import Foundation
import SwiftASN1
import X509
import _CryptoExtras

/// A certification authority made on the spot (or read from PEM): it signs the local
/// gateway's server certificate and the push identities the gateway accepts. Test-only PKI,
/// never trusted by Apple or any device.
public struct TestCertificateAuthority: Sendable {
    public let certificate: Certificate
    let privateKey: Certificate.PrivateKey
    /// The CA key as PKCS#8 DER (a secret: write it only where the user asked).
    public let privateKeyPKCS8: SecretBytes

    /// The CA certificate as PEM, for `--ca-out` and for clients' `--ca`.
    public var certificatePEM: String { PEMWriter.certificate(certificateDER) }

    public var certificateDER: [UInt8] {
        var serializer = DER.Serializer()
        try! serializer.serialize(certificate)  // a certificate we built always serialises
        return serializer.serializedBytes
    }

    /// A fresh P-256 CA valid from a day ago for `years` years.
    public static func generate(
        commonName: String = "apnsctl local gateway TEST CA",
        years: Int = 10
    ) throws -> TestCertificateAuthority {
        let key = P256.Signing.PrivateKey()
        let privateKey = Certificate.PrivateKey(key)
        let name = try DistinguishedName {
            CountryName("US")
            OrganizationName("apnsctl (not Apple)")
            CommonName(commonName)
        }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: privateKey.publicKey,
            notValidBefore: now.addingTimeInterval(-86_400),
            notValidAfter: now.addingTimeInterval(Double(years) * 365 * 86_400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: privateKey.publicKey)
            },
            issuerPrivateKey: privateKey
        )
        return TestCertificateAuthority(
            certificate: certificate,
            privateKey: privateKey,
            privateKeyPKCS8: SecretBytes([UInt8](key.pkcs8DERRepresentation))
        )
    }

    /// Reads a CA certificate and its key (PKCS#8, SEC1 or PKCS#1 PEM; P-256, P-384 or RSA).
    public init(certificatePEM: String, privateKeyPEM: String) throws {
        do {
            certificate = try Certificate(pemEncoded: certificatePEM)
            privateKey = try Certificate.PrivateKey(pemEncoded: privateKeyPEM)
        } catch {
            throw LocalGatewayError(
                .invalidCA,
                "The CA certificate or key cannot be read (\(UserFacing.describe(error))).",
                hint: "Give the CA certificate and key PEM files the gateway wrote, or the test PKI's CA with its key."
            )
        }
        let document = try? PEMDocument(pemString: privateKeyPEM)
        privateKeyPKCS8 = SecretBytes(document?.derBytes ?? [])
    }

    init(certificate: Certificate, privateKey: Certificate.PrivateKey, privateKeyPKCS8: SecretBytes) {
        self.certificate = certificate
        self.privateKey = privateKey
        self.privateKeyPKCS8 = privateKeyPKCS8
    }

    var signatureAlgorithm: Certificate.SignatureAlgorithm {
        switch privateKey.publicKey.description.lowercased() {
        case let text where text.contains("rsa"): .sha256WithRSAEncryption
        case let text where text.contains("384"): .ecdsaWithSHA384
        default: .ecdsaWithSHA256
        }
    }

    /// Signs a leaf certificate for `publicKey`.
    func issue(
        subject: DistinguishedName,
        publicKey: Certificate.PublicKey,
        days: Int,
        extensions: Certificate.Extensions
    ) throws -> Certificate {
        let now = Date()
        return try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-3_600),
            notValidAfter: now.addingTimeInterval(Double(days) * 86_400),
            issuer: certificate.subject,
            subject: subject,
            signatureAlgorithm: signatureAlgorithm,
            extensions: extensions,
            issuerPrivateKey: privateKey
        )
    }
}

/// A certificate with its private key, as DER and PKCS#8.
public struct MintedIdentity: Sendable {
    public let certificate: Certificate
    public let certificateDER: [UInt8]
    /// PKCS#8 DER (a secret).
    public let privateKeyPKCS8: SecretBytes
    /// The CA that signed it.
    public let authority: TestCertificateAuthority

    public var certificatePEM: String { PEMWriter.certificate(certificateDER) }

    /// The identity as a PKCS#12 file (certificate, key and the CA certificate).
    public func pkcs12(
        password: SecretBytes,
        friendlyName: String,
        style: PKCS12Writer.Style = .modern
    ) throws -> [UInt8] {
        try PKCS12Writer.write(
            certificateDER: certificateDER,
            chainDER: [authority.certificateDER],
            privateKey: privateKeyPKCS8,
            password: password,
            friendlyName: friendlyName,
            style: style
        )
    }
}

extension LocalGateway {
    public enum KeyType: String, Sendable, CaseIterable {
        case rsa2048 = "rsa2048"
        case p256 = "p256"
    }

    /// Mints a push identity in the shape of Apple's: subject `UID=topic, CN=<prefix>: topic,
    /// OU=team, O=organization, C=US`, Apple's environment extensions (ASN.1 NULL) and, for a
    /// certificate valid in both environments, the topics extension with the app, VoIP and
    /// complication topics as Apple issues them. Signed by `authority` (a fresh one when nil).
    ///
    /// `apnsctl gateway mint-identity` writes ``MintedIdentity/pkcs12(password:friendlyName:style:)``
    /// and the CA for the gateway's `--client-ca`.
    public static func mintIdentity(
        topic: String,
        environments: [PushEnvironment],
        teamID: String = "ABCDE12345",
        organization: String = "Example Corp",
        keyType: KeyType = .rsa2048,
        topics: [PushTopic]? = nil,
        days: Int = 395,
        authority: TestCertificateAuthority? = nil
    ) throws -> MintedIdentity {
        guard !topic.isEmpty, !environments.isEmpty else {
            throw LocalGatewayError(
                .invalidMintRequest,
                "A push identity needs a topic and at least one environment.",
                hint:
                    "Give the topic (a bundle ID such as com.example.app) and the environment (sandbox, production or both)."
            )
        }
        let authority = try authority ?? TestCertificateAuthority.generate()
        let (publicKey, pkcs8): (Certificate.PublicKey, SecretBytes)
        switch keyType {
        case .rsa2048:
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            publicKey = Certificate.PrivateKey(key).publicKey
            pkcs8 = SecretBytes([UInt8](key.pkcs8DERRepresentation))
        case .p256:
            let key = P256.Signing.PrivateKey()
            publicKey = Certificate.PrivateKey(key).publicKey
            pkcs8 = SecretBytes([UInt8](key.pkcs8DERRepresentation))
        }
        let both = Set(environments).count == 2
        let prefix =
            both
            ? "Apple Push Services"
            : environments.first == .sandbox
                ? "Apple Development IOS Push Services" : "Apple Production IOS Push Services"
        let subject = DistinguishedName([
            RelativeDistinguishedName(
                try RelativeDistinguishedName.Attribute(type: .RDNAttributeType.countryName, printableString: "US")
            ),
            RelativeDistinguishedName(
                RelativeDistinguishedName.Attribute(type: .RDNAttributeType.organizationName, utf8String: organization)
            ),
            RelativeDistinguishedName(
                RelativeDistinguishedName.Attribute(type: .RDNAttributeType.organizationalUnitName, utf8String: teamID)
            ),
            RelativeDistinguishedName(
                RelativeDistinguishedName.Attribute(
                    type: .RDNAttributeType.commonName,
                    utf8String: "\(prefix): \(topic)"
                )
            ),
            RelativeDistinguishedName(
                RelativeDistinguishedName.Attribute(type: .PushNameAttribute.userID, utf8String: topic)
            ),
        ])
        var null = DER.Serializer()
        try null.serialize(ASN1Null())
        let nullValue = null.serializedBytes[...]
        var extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.clientAuth])
            AuthorityKeyIdentifier(
                keyIdentifier: try? authority.certificate.extensions.subjectKeyIdentifier?.keyIdentifier
            )
        }
        if environments.contains(.sandbox) {
            try extensions.append(
                Certificate.Extension(oid: .ApplePushExtensionID.development, critical: false, value: nullValue)
            )
        }
        if environments.contains(.production) {
            try extensions.append(
                Certificate.Extension(oid: .ApplePushExtensionID.production, critical: false, value: nullValue)
            )
        }
        let topicList =
            topics
            ?? (both
                ? [
                    PushTopic(name: topic, kinds: ["app"]),
                    PushTopic(name: "\(topic).voip", kinds: ["voip"]),
                    PushTopic(name: "\(topic).complication", kinds: ["complication"]),
                ] : [])
        if !topicList.isEmpty {
            try extensions.append(PushTopicsExtension(topics: topicList).makeCertificateExtension())
        }
        let certificate = try authority.issue(
            subject: subject,
            publicKey: publicKey,
            days: days,
            extensions: extensions
        )
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return MintedIdentity(
            certificate: certificate,
            certificateDER: serializer.serializedBytes,
            privateKeyPKCS8: pkcs8,
            authority: authority
        )
    }

    /// Mints a TLS server certificate for the gateway: `CN=<first name>`, SAN with every name
    /// (IP literals as IP addresses), EKU serverAuth, P-256.
    public static func mintServerIdentity(
        names: [String] = ["localhost", "127.0.0.1", "::1"],
        days: Int = 825,
        authority: TestCertificateAuthority
    ) throws -> MintedIdentity {
        let key = P256.Signing.PrivateKey()
        let privateKey = Certificate.PrivateKey(key)
        var sans: [GeneralName] = []
        for name in names {
            if let v4 = IPv4Address(name) {
                sans.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice(v4.bytes))))
            } else if let v6 = IPv6Address(name) {
                sans.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice(v6.bytes))))
            } else {
                sans.append(.dnsName(name))
            }
        }
        let subject = try DistinguishedName {
            OrganizationName("apnsctl (not Apple)")
            CommonName(names.first ?? "localhost")
        }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.serverAuth])
            SubjectAlternativeNames(sans)
        }
        let certificate = try authority.issue(
            subject: subject,
            publicKey: privateKey.publicKey,
            days: days,
            extensions: extensions
        )
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return MintedIdentity(
            certificate: certificate,
            certificateDER: serializer.serializedBytes,
            privateKeyPKCS8: SecretBytes([UInt8](key.pkcs8DERRepresentation)),
            authority: authority
        )
    }
}

/// IP literal parsing with inet_pton, for SAN entries.
struct IPv4Address {
    let bytes: [UInt8]
    init?(_ text: String) {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        bytes = withUnsafeBytes(of: &address) { Array($0) }
    }
}

struct IPv6Address {
    let bytes: [UInt8]
    init?(_ text: String) {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        bytes = withUnsafeBytes(of: &address) { Array($0) }
    }
}
