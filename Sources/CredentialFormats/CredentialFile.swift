import Foundation
import SwiftASN1

/// How a PKCS#12 bundle is protected, in words a person knows.
public struct PKCS12Protection: Codable, Sendable, Equatable {
    public var mac: String
    public var certificates: String
    public var key: String
    /// True when the file uses RC2, RC4 or DES: OpenSSL 3 reads these only with its legacy provider.
    public var usesLegacyAlgorithms: Bool
}

/// A private key read from a bundle. The key itself is a secret; only its shape is public.
public struct PrivateKeySummary: Codable, Sendable, Equatable {
    public var type: String
    public var bits: Int
    public var matchesCertificate: Bool
}

/// A certificate file of any shape users bring, read and analysed.
public struct CredentialFile: Sendable {
    public enum Format: String, Codable, Sendable {
        case pkcs12
        case pem
        case der
    }

    public let path: String
    public let format: Format
    public let certificate: PushCertificate
    /// The other certificates in the file (intermediates, roots), in file order.
    public let chain: [PushCertificate]
    public let privateKey: PrivateKeySummary?
    public let protection: PKCS12Protection?
    /// PKCS#8 DER of the private key, when the file carries one.
    public let privateKeyPKCS8: SecretBytes?
    /// The password that opened the file (nil when none was needed). Stored by import.
    public let password: SecretBytes?
    /// The file's bytes as read.
    public let contents: [UInt8]

    /// Reads `path`, asking `password` only if the file turns out to need one.
    public static func read(path: String, password: PasswordSource = .none) throws -> CredentialFile {
        let bytes = try readBytes(path: path)
        return try decode(bytes, path: path, password: password)
    }

    /// Reads a file's bytes with a distinct error for each way that can fail, at most `kind`'s
    /// limit of them.
    public static func readBytes(path: String, kind: InputKind = .credential) throws -> [UInt8] {
        var bytes = try InputFile.read(path: path, kind: kind)
        // A UTF-8 byte-order mark, as some Windows editors write before a PEM: not part of the text.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        if bytes.isEmpty {
            throw CredentialError(
                .emptyFile,
                path: path,
                "The file is empty (0 bytes).",
                hint: kind == .credential
                    ? "The export or download did not finish: export the certificate again."
                    : "Give the \(kind.name) itself."
            )
        }
        return bytes
    }

    public static func decode(_ bytes: [UInt8], path: String, password: PasswordSource) throws -> CredentialFile {
        switch sniff(bytes) {
        case .pem:
            return try decodePEM(bytes, path: path, password: password)
        case .pkcs12:
            do {
                return try decodePKCS12(bytes, path: path, password: password)
            } catch let work as ExcessiveWork {
                throw work.error(path: path)
            }
        case .certificateDER:
            return try decodeDER(bytes, path: path)
        case .certificateDERThenPEM(let length):
            return try decodeDERThenPEM(bytes, certificateLength: length, path: path, password: password)
        case .truncatedDER:
            let isBundle = ["p12", "pfx"].contains((path as NSString).pathExtension.lowercased())
            throw CredentialError(
                .truncated,
                path: path,
                "The file is cut short: its \(isBundle ? "PKCS#12" : "DER") structure announces more bytes than the file has (\(bytes.count) bytes).",
                hint: "The copy or download was interrupted: copy or export the file again."
            )
        case .corruptDER(let detail):
            throw CredentialError(
                .corrupt,
                path: path,
                "The file is damaged: it starts like a certificate or PKCS#12 bundle but is not valid DER (\(detail)).",
                hint:
                    "Export the certificate again; if it came by mail or chat, make sure it was sent as a binary attachment."
            )
        case .other(let description):
            throw CredentialError(
                .notACertificate,
                path: path,
                "This is not a certificate file: it looks like \(description).",
                hint: "Give a .p12/.pfx bundle, a PEM file or a DER .cer certificate."
            )
        }
    }

    // MARK: Sniffing

    enum Shape: Equatable {
        case pem
        case pkcs12
        case certificateDER
        /// A DER certificate with PEM text after it (`cat aps.cer push.key`).
        case certificateDERThenPEM(Int)
        case truncatedDER
        case corruptDER(String)
        case other(String)
    }

    static func sniff(_ bytes: [UInt8]) -> Shape {
        let head = Array(bytes.prefix(8))
        if let length = derPrefixBeforePEM(bytes) { return .certificateDERThenPEM(length) }
        if let text = String(bytes: bytes.prefix(64 * 1024), encoding: .utf8), text.contains("-----BEGIN ") {
            return .pem
        }
        guard head.first == 0x30 else { return .other(describeForeign(bytes)) }
        do {
            let node = try BER.parse(bytes)
            guard case .constructed(let children) = node.content, let first = children.first(where: { _ in true })
            else {
                return .corruptDER("an empty structure")
            }
            if first.identifier == .integer { return .pkcs12 }
            if first.identifier == .sequence { return .certificateDER }
            return .corruptDER("unexpected \(first.identifier) at the start")
        } catch let error as ASN1Error where error.code == .truncatedASN1Field {
            return .truncatedDER
        } catch {
            // BER.parse also rejects trailing bytes; OpenSSL does not mind them for PKCS#12.
            if OpenSSL.PKCS12File(der: bytes) != nil { return .pkcs12 }
            return .corruptDER("\(error)".prefix(120).description)
        }
    }

    /// Names common non-certificate files so the message says what was given instead.
    static func describeForeign(_ bytes: [UInt8]) -> String {
        let signatures: [([UInt8], String)] = [
            ([0xFF, 0xD8, 0xFF], "a JPEG image"),
            ([0x89, 0x50, 0x4E, 0x47], "a PNG image"),
            ([0x25, 0x50, 0x44, 0x46], "a PDF document"),
            ([0x50, 0x4B, 0x03, 0x04], "a ZIP archive"),
            ([0x1F, 0x8B], "a gzip archive"),
            ([0x7B], "JSON text"),
            ([0x3C], "HTML or XML text"),
        ]
        for (magic, name) in signatures where bytes.starts(with: magic) { return name }
        if String(bytes: bytes.prefix(4096), encoding: .utf8) != nil { return "plain text without a PEM block" }
        return "binary data of an unknown kind"
    }

    // MARK: DER

    static func decodeDER(_ bytes: [UInt8], path: String) throws -> CredentialFile {
        let certificate = try parseCertificate(bytes, path: path)
        return CredentialFile(
            path: path,
            format: .der,
            certificate: certificate,
            chain: [],
            privateKey: nil,
            protection: nil,
            privateKeyPKCS8: nil,
            password: nil,
            contents: bytes
        )
    }

    static func parseCertificate(_ der: [UInt8], path: String) throws -> PushCertificate {
        do {
            return try PushCertificate(der: der)
        } catch {
            throw CredentialError(
                .corrupt,
                path: path,
                "A certificate in the file could not be parsed (\(UserFacing.describe(error))).",
                hint: "The file is damaged or is not an X.509 certificate: export it again."
            )
        }
    }

    // MARK: PEM

    static func decodePEM(_ bytes: [UInt8], path: String, password: PasswordSource) throws -> CredentialFile {
        let text = String(decoding: bytes, as: UTF8.self)
        let blocks = PEMBlock.blocks(in: text)
        if let damaged = blocks.first(where: { $0.der == nil }) {
            throw CredentialError(
                .corrupt,
                path: path,
                "The PEM block \"\(damaged.label)\" is damaged: its base64 body does not decode.",
                hint: "Copy the whole block again, from -----BEGIN to -----END, without edits."
            )
        }
        let certificateBlocks = blocks.filter {
            ["CERTIFICATE", "X509 CERTIFICATE", "TRUSTED CERTIFICATE"].contains($0.label)
        }
        let keyBlocks = blocks.filter(\.isPrivateKey)
        guard !certificateBlocks.isEmpty else {
            let found =
                blocks.isEmpty ? "no complete PEM block" : blocks.map { "\"\($0.label)\"" }.joined(separator: ", ")
            throw CredentialError(
                .noCertificate,
                path: path,
                "The PEM file holds no certificate (found \(found)).",
                hint: blocks.contains(where: { $0.label.hasSuffix("CERTIFICATE REQUEST") })
                    ? "This is a certificate signing request: upload it at Apple's developer portal, then import the certificate Apple issues for it (aps.cer)."
                    : keyBlocks.isEmpty
                        ? "Give the file that holds the -----BEGIN CERTIFICATE----- block."
                        : "This file has only a private key: give the certificate too, e.g. `cat cert.pem key.pem > bundle.pem`, or import a token key (.p8) instead."
            )
        }
        let certificates = try certificateBlocks.map { try parseCertificate($0.der!, path: path) }

        var key: SecretBytes?
        var usedPassword: SecretBytes?
        if let keyBlock = keyBlocks.first {
            (key, usedPassword) = try decodeKey(keyBlock, path: path, password: password)
        }
        let (leaf, chain) = pickLeaf(certificates, key: key)
        let summary = key.map { summarize(key: $0, certificate: leaf) }
        return CredentialFile(
            path: path,
            format: .pem,
            certificate: leaf,
            chain: chain,
            privateKey: summary,
            protection: nil,
            privateKeyPKCS8: key,
            password: usedPassword,
            contents: bytes
        )
    }

    static func decodeKey(
        _ block: PEMBlock,
        path: String,
        password: PasswordSource
    )
        throws -> (SecretBytes, SecretBytes?)
    {
        if !block.isEncrypted {
            if case .key(let key) = OpenSSL.decodePrivateKeyPEM(block.text, password: nil) { return (key, nil) }
            throw CredentialError(
                .corrupt,
                path: path,
                "The private key block \"\(block.label)\" could not be decoded.",
                hint: "Export the key again; the block may have been edited or cut."
            )
        }
        if let der = block.der { try checkKeyWork(der, path: path) }
        let (key, secret) = try decryptPrivateKey(path: path, password: password) {
            OpenSSL.decodePrivateKeyPEM(block.text, password: $0)
        }
        return (key, secret)
    }

    // MARK: Helpers

    /// The leaf is the certificate the key belongs to; failing that, the first that is not a CA.
    static func pickLeaf(_ certificates: [PushCertificate], key: SecretBytes?) -> (PushCertificate, [PushCertificate]) {
        var index = 0
        if let key,
            let match = certificates.firstIndex(where: { OpenSSL.keyMatches(certificateDER: $0.der, privateKey: key) })
        {
            index = match
        } else if let firstLeaf = certificates.firstIndex(where: { !$0.isCertificateAuthority }) {
            index = firstLeaf
        }
        var rest = certificates
        let leaf = rest.remove(at: index)
        return (leaf, rest)
    }

    static func summarize(key: SecretBytes, certificate: PushCertificate) -> PrivateKeySummary {
        let description = OpenSSL.privateKeyDescription(key)
        return PrivateKeySummary(
            type: description?.type ?? "unknown",
            bits: description?.bits ?? 0,
            matchesCertificate: OpenSSL.keyMatches(certificateDER: certificate.der, privateKey: key)
        )
    }
}
