import Crypto
import Foundation
import SwiftASN1
import X509

/// Where a certificate's environments were read from.
public enum EnvironmentSource: String, Codable, Sendable {
    /// Apple's marker extensions `1.2.840.113635.100.6.3.1` / `.2`.
    case extensions = "extension"
    /// The common name's prefix, for certificates that carry no marker extension.
    case commonName = "common_name"
    /// Neither says anything.
    case none
}

/// The kind of Apple certificate, from its common name's prefix or extensions.
public struct PushCertificateKind: Hashable, Sendable, Codable, CustomStringConvertible {
    public let name: String
    public init(_ name: String) { self.name = name }
    public var description: String { name }

    public static let apns = Self("APNs")
    public static let apnsMac = Self("APNs (macOS)")
    public static let voip = Self("VoIP Services")
    public static let watchKit = Self("WatchKit Services")
    public static let websitePush = Self("Website Push")
    public static let passType = Self("Pass Type")
    public static let notPush = Self("not a push certificate")

    public init(from decoder: any Decoder) throws { name = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}

/// Whether a certificate may be used now.
public enum ValidityStatus: String, Codable, Sendable {
    case valid
    case expiring
    case expired
    case notYetValid = "not_yet_valid"
}

extension ValidityStatus {
    /// The status of a validity window at `date`, "expiring" within `warnDays` of its end.
    public init(notBefore: Date, notAfter: Date, at date: Date, warnDays: Int) {
        if date < notBefore {
            self = .notYetValid
        } else if date > notAfter {
            self = .expired
        } else if notAfter.timeIntervalSince(date) < Double(warnDays) * 86_400 {
            self = .expiring
        } else {
            self = .valid
        }
    }

    /// Whole days until `notAfter` (negative once past), rounded down.
    /// Whole days, rounded toward zero both ways: expired 2 days and a few seconds ago is -2,
    /// as "Expired 2 days ago" says, not -3.
    public static func daysLeft(until notAfter: Date, at date: Date) -> Int {
        Int((notAfter.timeIntervalSince(date) / 86_400).rounded(.towardZero))
    }
}

/// A certificate read for push: everything `inspect` reports, derived once from the DER.
public struct PushCertificate: Sendable {
    public let der: [UInt8]
    public let certificate: Certificate

    public let subject: String
    public let commonName: String?
    /// The `UID` attribute: the bundle ID and default topic.
    public let bundleID: String?
    /// The `OU` attribute: the developer team ID.
    public let teamID: String?
    public let organization: String?
    public let issuer: String
    public let issuerCommonName: String?
    /// "G1", "G3", "G4"... when the issuer is Apple's Worldwide Developer Relations CA.
    public let wwdrGeneration: String?
    public let serialNumber: String
    public let signatureAlgorithm: String
    public let publicKeyType: String
    public let publicKeyBits: Int
    public let notBefore: Date
    public let notAfter: Date
    public let sha256: String
    public let sha1: String

    public let kind: PushCertificateKind
    public let environments: [PushEnvironment]
    public let environmentSource: EnvironmentSource
    public let topics: [PushTopic]
    /// False for certificates that carry no Apple push extension and no push common name.
    public let isPushCertificate: Bool
    public let isCertificateAuthority: Bool

    public init(der: [UInt8]) throws {
        let certificate = try Certificate(derEncoded: der)
        self.der = der
        self.certificate = certificate

        subject = Self.format(certificate.subject)
        issuer = Self.format(certificate.issuer)
        commonName = Self.first(.RDNAttributeType.commonName, in: certificate.subject)
        bundleID = Self.first(.PushNameAttribute.userID, in: certificate.subject)
        teamID = Self.first(.RDNAttributeType.organizationalUnitName, in: certificate.subject)
        organization = Self.first(.RDNAttributeType.organizationName, in: certificate.subject)
        issuerCommonName = Self.first(.RDNAttributeType.commonName, in: certificate.issuer)
        wwdrGeneration = Self.wwdrGeneration(of: certificate.issuer)

        serialNumber =
            Self.hex(Array(certificate.serialNumber.bytes.drop { $0 == 0 }), separator: "")
            .nonEmpty ?? "00"
        signatureAlgorithm = String(describing: certificate.signatureAlgorithm)
            .replacingOccurrences(of: "SignatureAlgorithm.", with: "")
        let keyDescription = OpenSSL.publicKeyDescription(certificateDER: der)
        publicKeyType = keyDescription?.type ?? "unknown"
        publicKeyBits = keyDescription?.bits ?? 0
        notBefore = certificate.notValidBefore
        notAfter = certificate.notValidAfter
        sha256 = Self.hex(Array(SHA256.hash(data: der)), separator: ":")
        sha1 = Self.hex(Array(Insecure.SHA1.hash(data: der)), separator: ":")
        isCertificateAuthority = {
            if case .isCertificateAuthority = (try? certificate.extensions.basicConstraints) ?? nil { return true }
            return false
        }()

        let extensions = certificate.extensions
        let hasDevelopment = extensions[oid: .ApplePushExtensionID.development] != nil
        let hasProduction = extensions[oid: .ApplePushExtensionID.production] != nil
        let prefix = commonName.flatMap(CommonNamePrefix.match)

        if hasDevelopment || hasProduction {
            environments = (hasDevelopment ? [.sandbox] : []) + (hasProduction ? [.production] : [])
            environmentSource = .extensions
        } else if let prefix, !prefix.environments.isEmpty {
            environments = prefix.environments
            environmentSource = .commonName
        } else {
            environments = []
            environmentSource = .none
        }

        if let ext = extensions[oid: .ApplePushExtensionID.topics] {
            topics = (try? PushTopicsExtension(ext).topics) ?? []
        } else {
            topics = []
        }

        if extensions[oid: .ApplePushExtensionID.voipServices] != nil {
            kind = .voip
        } else if extensions[oid: .ApplePushExtensionID.watchKitServices] != nil {
            kind = .watchKit
        } else if let prefix {
            kind = prefix.kind
        } else if hasDevelopment || hasProduction || !topics.isEmpty {
            kind = .apns
        } else {
            kind = .notPush
        }
        isPushCertificate = kind != .notPush
    }

    /// Every topic this certificate may push to: the topics extension when present, else the
    /// bundle ID.
    public var coveredTopics: [String] {
        if !topics.isEmpty { return topics.map(\.name) }
        return bundleID.map { [$0] } ?? []
    }

    /// Whether the certificate covers `topic`, including the push-type suffixes (`.voip`,
    /// `.complication`...) that a universal certificate's topics list names.
    public func covers(topic: String) -> Bool {
        coveredTopics.contains(topic)
    }

    public func status(at date: Date, warnDays: Int) -> ValidityStatus {
        ValidityStatus(notBefore: notBefore, notAfter: notAfter, at: date, warnDays: warnDays)
    }

    /// Whole days until expiry (negative once expired), rounded down.
    public func daysLeft(at date: Date) -> Int { ValidityStatus.daysLeft(until: notAfter, at: date) }

    // MARK: Helpers

    package static func first(_ oid: ASN1ObjectIdentifier, in name: DistinguishedName) -> String? {
        for rdn in name {
            for attribute in rdn where attribute.type == oid {
                return String(attribute.value) ?? String(describing: attribute.value)
            }
        }
        return nil
    }

    private static let shortNames: [ASN1ObjectIdentifier: String] = [
        .RDNAttributeType.commonName: "CN",
        .RDNAttributeType.organizationalUnitName: "OU",
        .RDNAttributeType.organizationName: "O",
        .RDNAttributeType.countryName: "C",
        .RDNAttributeType.localityName: "L",
        .RDNAttributeType.stateOrProvinceName: "ST",
        .RDNAttributeType.emailAddress: "emailAddress",
        .PushNameAttribute.userID: "UID",
    ]

    /// RFC 4514 order (most specific first), as `openssl -nameopt RFC2253` prints it.
    package static func format(_ name: DistinguishedName) -> String {
        name.reversed().map { rdn in
            rdn.map { attribute in
                let key = shortNames[attribute.type] ?? attribute.type.description
                let value = String(attribute.value) ?? String(describing: attribute.value)
                return "\(key)=\(value)"
            }.joined(separator: "+")
        }.joined(separator: ", ")
    }

    static let wwdrCommonName = "Apple Worldwide Developer Relations Certification Authority"

    static func wwdrGeneration(of issuer: DistinguishedName) -> String? {
        guard first(.RDNAttributeType.commonName, in: issuer) == wwdrCommonName,
            first(.RDNAttributeType.organizationName, in: issuer) == "Apple Inc."
        else { return nil }
        let unit = first(.RDNAttributeType.organizationalUnitName, in: issuer)
        if let unit, unit.count <= 3, unit.hasPrefix("G") { return unit }
        return "G1"
    }

    static func hex(_ bytes: [UInt8], separator: String) -> String {
        bytes.map { String(format: "%02X", $0) }.joined(separator: separator)
    }
}

/// The common-name prefixes Apple uses, and what each says when no extension does.
struct CommonNamePrefix {
    let prefix: String
    let kind: PushCertificateKind
    let environments: [PushEnvironment]

    static let all: [CommonNamePrefix] = [
        .init(prefix: "Apple Push Services:", kind: .apns, environments: [.sandbox, .production]),
        .init(prefix: "Apple Development IOS Push Services:", kind: .apns, environments: [.sandbox]),
        .init(prefix: "Apple Production IOS Push Services:", kind: .apns, environments: [.production]),
        .init(prefix: "Apple Development Mac Push Services:", kind: .apnsMac, environments: [.sandbox]),
        .init(prefix: "Apple Production Mac Push Services:", kind: .apnsMac, environments: [.production]),
        .init(prefix: "VoIP Services:", kind: .voip, environments: []),
        .init(prefix: "WatchKit Services:", kind: .watchKit, environments: []),
        .init(prefix: "Website Push ID:", kind: .websitePush, environments: []),
        .init(prefix: "Pass Type ID:", kind: .passType, environments: []),
    ]

    static func match(_ commonName: String) -> CommonNamePrefix? {
        all.first { commonName.hasPrefix($0.prefix) }
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
