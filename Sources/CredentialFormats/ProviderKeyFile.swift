import Crypto
import Foundation

extension ProviderKey {
    /// Reads a `.p8` file (PKCS#8 PEM). The key ID defaults to the one in Apple's file name.
    public init(path: String, teamID: String, keyID: String? = nil) throws {
        let bytes = try CredentialFile.readBytes(path: path, kind: .tokenKey)
        let key = try Self.parsePrivateKey(bytes, path: path)
        guard let keyID = keyID ?? Self.keyID(fromFileName: path) else {
            throw CredentialError(
                .keyIDRequired,
                path: path,
                "The key ID cannot be read from the file name (Apple names these files AuthKey_<KEYID>.p8).",
                hint: "Give the key ID; it is shown next to the key under Certificates, Identifiers & Profiles > Keys."
            )
        }
        try self.init(keyID: keyID, teamID: teamID, privateKey: key)
    }

    static func parsePrivateKey(_ bytes: [UInt8], path: String) throws -> P256.Signing.PrivateKey {
        let text = String(decoding: bytes, as: UTF8.self)
        let blocks = PEMBlock.blocks(in: text)
        guard let block = blocks.first(where: \.isPrivateKey) else {
            if case .other(let what) = CredentialFile.sniff(bytes) {
                throw CredentialError(
                    .notACertificate,
                    path: path,
                    "This is not a token key: it looks like \(what).",
                    hint: "Give the AuthKey_<KEYID>.p8 file downloaded from the Apple Developer portal."
                )
            }
            throw CredentialError(
                .noPrivateKey,
                path: path,
                "The file holds no private key (no -----BEGIN PRIVATE KEY----- block).",
                hint: "Give the AuthKey_<KEYID>.p8 file downloaded from the Apple Developer portal."
            )
        }
        guard block.der != nil else {
            throw CredentialError(
                .corrupt,
                path: path,
                "The private key block is damaged: its base64 body does not decode.",
                hint:
                    "Download the key again; Apple lets you download it only once, so revoke and recreate it if it is lost."
            )
        }
        // swift-crypto reads the private scalar and ignores the curve named in the PKCS#8, so a
        // secp256k1 key would pass for P-256 (and sign tokens APNs rejects): OpenSSL names the
        // curve first, and only P-256 goes on.
        if case .key(let pkcs8) = OpenSSL.decodePrivateKeyPEM(block.text, password: nil),
            let description = OpenSSL.privateKeyDescription(pkcs8)
        {
            guard description.type == "EC P-256" else {
                let what =
                    description.type.hasPrefix("EC ")
                    ? "an EC key on the curve \(description.type.dropFirst(3))"
                    : "a \(description.type) key of \(description.bits) bits"
                throw CredentialError(
                    .unsupportedKey,
                    path: path,
                    "This is \(what); APNs token keys are EC P-256 (prime256v1, ES256).",
                    hint: "Use the AuthKey_<KEYID>.p8 file from the Apple Developer portal, not a certificate's key."
                )
            }
            if let key = try? pkcs8.withUnsafeBytes({ try P256.Signing.PrivateKey(derRepresentation: Array($0)) }) {
                return key
            }
        }
        throw CredentialError(
            .corrupt,
            path: path,
            "The private key cannot be decoded.",
            hint: "Download the key again from the Apple Developer portal."
        )
    }

}

/// A token key file as `inspect` and `check` read it: no team ID is needed to look at one.
public struct TokenKeyFile: Sendable {
    public let path: String
    /// From `--key-id`, else from Apple's file name `AuthKey_<KEYID>.p8`; nil when neither says.
    public let keyID: String?
    public let privateKey: P256.Signing.PrivateKey
    /// The curve, always "P-256": anything else is refused when the file is read.
    public let curve = "P-256"

    public init(path: String, keyID: String? = nil) throws {
        self.path = path
        self.keyID = keyID ?? ProviderKey.keyID(fromFileName: path)
        privateKey = try ProviderKey.parsePrivateKey(CredentialFile.readBytes(path: path, kind: .tokenKey), path: path)
    }

    /// SHA-256 of the public key's SubjectPublicKeyInfo, as ``ProviderKey/publicKeyFingerprint``.
    public var publicKeyFingerprint: String {
        PublicKeyFingerprint.of(subjectPublicKeyInfo: privateKey.publicKey.derRepresentation)
    }

    /// Whether a file is told to be a token key: Apple's `.p8` extension.
    public static func isTokenKeyPath(_ path: String) -> Bool { path.lowercased().hasSuffix(".p8") }
}
