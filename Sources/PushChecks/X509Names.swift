import CredentialFormats
import Foundation
import PushStore
import SwiftASN1
import X509

/// A certificate's names, serial and validity as x509-certificate-exporter labels them, so that
/// its rules and dashboards read apnsctl's metrics unchanged.
public struct X509Names: Sendable, Equatable {
    /// `C`, `ST`, `L`, `O`, `OU`, `CN` of the subject, as the exporter fills them: the first value
    /// of each attribute, "" when absent. Its `ST` is the street address (Go's
    /// `pkix.Name.StreetAddress`), not the state; the same is done here so labels match.
    public var subject: [String: String]
    public var issuer: [String: String]
    /// Decimal, as Go's `big.Int.String()` prints it.
    public var serialNumber: String
    public var notBefore: Date
    public var notAfter: Date
    /// The certificate's file: the stored file for a stored credential, else the file checked.
    public var filepath: String = ""

    public static let attributeNames = ["C", "ST", "L", "O", "OU", "CN"]

    public init(_ certificate: PushCertificate) {
        subject = Self.names(certificate.certificate.subject)
        issuer = Self.names(certificate.certificate.issuer)
        serialNumber = Self.decimal(Array(certificate.certificate.serialNumber.bytes))
        notBefore = certificate.notBefore
        notAfter = certificate.notAfter
    }

    static let oids: [(String, ASN1ObjectIdentifier)] = [
        ("C", .RDNAttributeType.countryName),
        ("ST", [2, 5, 4, 9]),  // streetAddress, as the exporter reads "ST"
        ("L", .RDNAttributeType.localityName),
        ("O", .RDNAttributeType.organizationName),
        ("OU", .RDNAttributeType.organizationalUnitName),
        ("CN", .RDNAttributeType.commonName),
    ]

    static func names(_ name: DistinguishedName) -> [String: String] {
        var result: [String: String] = [:]
        for (label, oid) in oids { result[label] = PushCertificate.first(oid, in: name) ?? "" }
        return result
    }

    /// Big-endian unsigned bytes as a decimal number of any length.
    static func decimal(_ bytes: [UInt8]) -> String {
        var digits: [UInt8] = []  // little-endian base 10
        for byte in bytes {
            var carry = Int(byte)
            for index in digits.indices {
                let value = Int(digits[index]) * 256 + carry
                digits[index] = UInt8(value % 10)
                carry = value / 10
            }
            while carry > 0 {
                digits.append(UInt8(carry % 10))
                carry /= 10
            }
        }
        if digits.isEmpty { return "0" }
        return String(digits.reversed().map { Character(String($0)) })
    }
}

extension CredentialStore {
    /// The file holding a stored certificate credential's public certificate.
    public func certificatePath(of credential: StoredCredential) -> String? {
        guard let relative = credential.certificateFile else { return nil }
        return try? entryFile(relative, of: credential)
    }
}
