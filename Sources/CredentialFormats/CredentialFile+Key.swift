import Foundation
import SwiftASN1

extension CredentialFile {
    // MARK: A certificate with a key from another file

    /// This certificate with the private key read from `keyPath`: PEM or DER, PKCS#1, SEC1 or
    /// PKCS#8, encrypted or not (the password is asked of `password` only when needed). A key
    /// that does not belong to the certificate is refused, naming both files.
    public func pairing(keyFile keyPath: String, password: PasswordSource) throws -> CredentialFile {
        if privateKeyPKCS8 != nil {
            throw CredentialError(
                .invalidArgument,
                path: path,
                "The file carries its own private key, so another key file is not needed.",
                hint: "Import the file alone."
            )
        }
        let key = try Self.readPrivateKey(path: keyPath, password: password)
        guard OpenSSL.keyMatches(certificateDER: certificate.der, privateKey: key) else {
            let keyFingerprint = OpenSSL.publicKeyFingerprint(privateKey: key) ?? "unknown"
            throw CredentialError(
                .keyMismatch,
                path: keyPath,
                "This private key does not belong to the certificate in \(path) (the certificate's public key has SHA-256 \(certificate.publicKeyFingerprint), the key's \(keyFingerprint)); nothing was imported.",
                hint: "Give the key that was made with the certificate's signing request."
            )
        }
        return replacingKey(key)
    }

    /// Reads a private key file of any common shape into PKCS#8 DER.
    public static func readPrivateKey(path: String, password: PasswordSource) throws -> SecretBytes {
        let bytes = try readBytes(path: path)
        if let text = String(bytes: bytes.prefix(64 * 1024), encoding: .utf8), text.contains("-----BEGIN ") {
            let blocks = PEMBlock.blocks(in: String(decoding: bytes, as: UTF8.self))
            guard let block = blocks.first(where: \.isPrivateKey) else {
                let found =
                    blocks.isEmpty ? "no complete PEM block" : blocks.map { "\"\($0.label)\"" }.joined(separator: ", ")
                throw CredentialError(
                    .noPrivateKey,
                    path: path,
                    "The file holds no private key (found \(found)).",
                    hint: "Give the file with the -----BEGIN PRIVATE KEY----- (or RSA PRIVATE KEY) block."
                )
            }
            guard block.der != nil else {
                throw CredentialError(
                    .corrupt,
                    path: path,
                    "The PEM block \"\(block.label)\" is damaged: its base64 body does not decode.",
                    hint: "Copy the whole block again, from -----BEGIN to -----END, without edits."
                )
            }
            return try decodeKey(block, path: path, password: password).0
        }
        return try decodeKeyDER(bytes, path: path, password: password)
    }

    static func decodeKeyDER(_ der: [UInt8], path: String, password: PasswordSource) throws -> SecretBytes {
        if case .key(let key) = OpenSSL.decodePrivateKeyDER(der, password: nil) { return key }
        guard OpenSSL.isEncryptedPrivateKeyDER(der) else {
            throw CredentialError(
                .notACertificate,
                path: path,
                "This is not a private key: it is neither PEM nor a DER PKCS#1, SEC1 or PKCS#8 key.",
                hint: "Give the private key that was made with the certificate's signing request."
            )
        }
        try checkKeyWork(der, path: path)
        return try decryptPrivateKey(path: path, password: password) {
            OpenSSL.decodePrivateKeyDER(der, password: $0)
        }.key
    }

    /// Asks for an encrypted private key's password and decrypts the key with `decrypt`, asking
    /// once more after a wrong password when the source can ask again. Returns the key and the
    /// password that opened it.
    static func decryptPrivateKey(
        path: String,
        password: PasswordSource,
        _ decrypt: (SecretBytes) -> OpenSSL.KeyDecodeResult
    ) throws -> (key: SecretBytes, password: SecretBytes) {
        var retry = false
        while true {
            guard let secret = try password(PasswordRequest(path: path, what: "encrypted private key", isRetry: retry))
            else {
                throw CredentialError(
                    .passwordRequired,
                    path: path,
                    "The private key is encrypted and needs its password.",
                    hint: passwordOptionsHint
                )
            }
            switch decrypt(secret) {
            case .key(let key):
                return (key, secret)
            case .wrongPassword where !retry && canRetry(password):
                retry = true
            case .wrongPassword:
                throw CredentialError(
                    .wrongPassword,
                    path: path,
                    "Wrong password for the encrypted private key.",
                    hint: "Check the password; it is the one chosen when the key was exported."
                )
            case .failed:
                throw CredentialError(
                    .unknownEncryption,
                    path: path,
                    "The private key is encrypted with an algorithm OpenSSL cannot use here.",
                    hint: "Re-encrypt it: openssl pkcs8 -topk8 -v2 aes-256-cbc -in key.pem -out key-new.pem"
                )
            }
        }
    }

    // MARK: A DER certificate followed by PEM text (`cat aps.cer push.key`)

    /// The length of the DER structure at the start of `bytes`, when PEM text follows it.
    static func derPrefixBeforePEM(_ bytes: [UInt8]) -> Int? {
        guard bytes.count > 2, bytes[0] == 0x30 else { return nil }
        let first = Int(bytes[1])
        var length = 0
        var header = 2
        if first < 0x80 {
            length = first
        } else {
            let count = first & 0x7F
            guard count >= 1, count <= 4, bytes.count > 2 + count else { return nil }
            for byte in bytes[2..<(2 + count)] { length = length << 8 | Int(byte) }
            header += count
        }
        let end = header + length
        guard end < bytes.count, let tail = String(bytes: bytes[end...], encoding: .utf8),
            tail.contains("-----BEGIN ")
        else { return nil }
        return end
    }

    /// Reads a DER certificate followed by PEM blocks as if it were all PEM.
    static func decodeDERThenPEM(
        _ bytes: [UInt8],
        certificateLength: Int,
        path: String,
        password: PasswordSource
    ) throws -> CredentialFile {
        let text =
            PEMBlock.encode(label: "CERTIFICATE", der: Array(bytes[..<certificateLength]))
            + String(decoding: bytes[certificateLength...], as: UTF8.self)
        return try decodePEM(Array(text.utf8), path: path, password: password)
    }
}
