import CredentialFormats
import Foundation
import SwiftASN1
import X509

/// The subject a certificate signing request asks for. Apple's portal ignores it (the
/// certificate it issues names the App ID), but it shows in the portal and in Keychain Access.
public struct RequestSubject: Sendable, Equatable {
    public var commonName: String
    public var email: String?
    /// ISO 3166 two-letter country code.
    public var country: String?

    public init(commonName: String, email: String? = nil, country: String? = nil) {
        self.commonName = commonName
        self.email = email
        self.country = country
    }

    /// Short names and values in the order Keychain Access writes them.
    var fields: [(String, String)] {
        var fields: [(String, String)] = []
        if let email { fields.append(("emailAddress", email)) }
        fields.append(("CN", commonName))
        if let country { fields.append(("C", country)) }
        return fields
    }

    /// Throws `invalidArgument` saying which field is wrong.
    public func validate() throws {
        let name = commonName.trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, commonName.utf8.count <= 64 else {
            throw CredentialError(
                .invalidArgument,
                "The common name \"\(commonName)\" must be 1 to 64 characters.",
                hint: "Give a short name for the key, such as \"Example App push\"."
            )
        }
        if let email, email.utf8.count > 128 || !email.contains("@") || email.contains(where: \.isWhitespace) {
            throw CredentialError(
                .invalidArgument,
                "\"\(email)\" is not an email address.",
                hint: "Give an address such as dev@example.com, or leave it out."
            )
        }
        if let country, country.count != 2 || !country.allSatisfy({ $0.isASCII && $0.isUppercase }) {
            throw CredentialError(
                .invalidArgument,
                "\"\(country)\" is not a two-letter country code.",
                hint: "Give an ISO 3166 code in capitals, such as US, DE or JP, or leave it out."
            )
        }
    }
}

/// A PKCS#10 certificate signing request (CSR) file, read and described.
public struct CertificateRequest: Sendable {
    public let path: String
    /// RFC 4514 order, as certificates' subjects are shown.
    public let subject: String
    public let keyType: String
    public let keyBits: Int
    /// SHA-256 of the request's SubjectPublicKeyInfo, upper-case hex with colons.
    public let publicKeyFingerprint: String
    /// Whether the request's signature verifies with its own public key.
    public let signatureValid: Bool
    public let der: [UInt8]

    public var pem: String { PEMBlock.encode(label: "CERTIFICATE REQUEST", der: der) }

    /// The request's DER when `bytes` is a CSR (PEM or DER); nil for anything else.
    static func requestDER(in bytes: [UInt8]) -> [UInt8]? {
        if let text = String(bytes: bytes.prefix(256 * 1024), encoding: .utf8), text.contains("-----BEGIN ") {
            let blocks = PEMBlock.blocks(in: text)
            guard !blocks.contains(where: { $0.label.hasSuffix("CERTIFICATE") }) else { return nil }
            return blocks.first { $0.label == "CERTIFICATE REQUEST" || $0.label == "NEW CERTIFICATE REQUEST" }?.der
        }
        guard bytes.first == 0x30, (try? CertificateSigningRequest(derEncoded: bytes)) != nil else { return nil }
        return bytes
    }

    /// Whether the file at `path` is a certificate signing request (an unreadable file is not).
    public static func isRequest(path: String) -> Bool {
        guard let bytes = try? InputFile.read(path: path, kind: .credential) else { return false }
        return requestDER(in: bytes) != nil
    }

    /// The request in `bytes` already read, or nil when they hold none.
    public init?(requestIn bytes: [UInt8], path: String) throws {
        guard let der = Self.requestDER(in: bytes) else { return nil }
        try self.init(der: der, path: path)
    }

    /// Reads a CSR file (PEM or DER).
    public static func read(path: String) throws -> CertificateRequest {
        let bytes = try CredentialFile.readBytes(path: path)
        guard let der = requestDER(in: bytes) else {
            throw CredentialError(
                .notACertificate,
                path: path,
                "This is not a certificate signing request.",
                hint: "Give the .csr file that was uploaded to Apple's developer portal."
            )
        }
        return try CertificateRequest(der: der, path: path)
    }

    public init(der: [UInt8], path: String) throws {
        let parsed: CertificateSigningRequest
        do {
            parsed = try CertificateSigningRequest(derEncoded: der)
        } catch {
            throw CredentialError(
                .corrupt,
                path: path,
                "The certificate signing request is damaged (\(error)).",
                hint: "Make the request again; a request that was edited by hand cannot be repaired."
            )
        }
        guard let facts = OpenSSL.requestFacts(der: der) else {
            throw CredentialError(
                .corrupt,
                path: path,
                "OpenSSL cannot read the certificate signing request's public key.",
                hint: "Make the request again."
            )
        }
        self.path = path
        self.der = der
        subject = PushCertificate.format(parsed.subject)
        keyType = facts.keyType
        keyBits = facts.keyBits
        publicKeyFingerprint = PublicKeyFingerprint.of(subjectPublicKeyInfo: facts.subjectPublicKeyInfo)
        signatureValid = facts.signatureValid
    }

    /// Makes a request for `subject`, signed with `privateKey` (PKCS#8 DER).
    static func make(subject: RequestSubject, privateKey: SecretBytes) throws -> CertificateRequest {
        let der = try OpenSSL.makeCertificateRequest(subject: subject.fields, privateKey: privateKey)
        return try CertificateRequest(der: der, path: "")
    }
}

/// A request made by `apnsctl request` whose certificate has not been imported yet: its private
/// key waits in the Secret Service. Only public facts are kept in the index.
public struct PendingRequest: Codable, Sendable, Equatable {
    public var alias: String
    /// SHA-256 of the public key, upper-case hex with colons: what the issued certificate will carry.
    public var publicKeyFingerprint: String
    public var subject: String
    public var keyType: String
    public var requestedAt: Date
    /// The name of the CSR file as written.
    public var requestFile: String?
    /// False when the alias was made up: the certificate then gets its usual default alias.
    public var aliasChosen: Bool

    /// The Secret Service item holding the request's private key.
    public func secretItem(store: String) -> SecretItem {
        SecretItem(
            store: store,
            alias: alias,
            kind: .privateKey,
            identifier: publicKeyFingerprint.replacingOccurrences(of: ":", with: "").lowercased()
        )
    }

    /// `request-` and the first 12 hex digits of the public key's SHA-256.
    static func defaultAlias(fingerprint: String) -> String {
        "request-" + fingerprint.replacingOccurrences(of: ":", with: "").lowercased().prefix(12)
    }
}
