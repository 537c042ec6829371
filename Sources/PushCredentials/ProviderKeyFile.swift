import Crypto
import Foundation

extension ProviderKey {
    /// Reads a `.p8` file (PKCS#8 PEM). The key ID defaults to the one in Apple's file name.
    public init(path: String, teamID: String, keyID: String? = nil) throws {
        let bytes = try CredentialFile.readBytes(path: path)
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
        guard let der = block.der else {
            throw CredentialError(
                .corrupt,
                path: path,
                "The private key block is damaged: its base64 body does not decode.",
                hint:
                    "Download the key again; Apple lets you download it only once, so revoke and recreate it if it is lost."
            )
        }
        if let key = try? P256.Signing.PrivateKey(derRepresentation: der) { return key }
        // Say what kind of key it is instead, when OpenSSL can tell.
        if case .key(let pkcs8) = OpenSSL.decodePrivateKeyPEM(block.text, password: nil),
            let description = OpenSSL.privateKeyDescription(pkcs8)
        {
            throw CredentialError(
                .unsupportedKey,
                path: path,
                "This is a \(description.type) key of \(description.bits) bits; APNs token keys are EC P-256 (ES256).",
                hint: "Use the AuthKey_<KEYID>.p8 file from the Apple Developer portal, not a certificate's key."
            )
        }
        throw CredentialError(
            .corrupt,
            path: path,
            "The private key cannot be decoded.",
            hint: "Download the key again from the Apple Developer portal."
        )
    }

}
