import Foundation

/// Writes identities as PKCS#12 for other tools.
public enum PKCS12Writer {
    public enum Style: String, Sendable, CaseIterable {
        /// AES-256-CBC with PBKDF2 and a SHA-256 MAC, as OpenSSL 3 writes by default.
        case modern
        /// RC2-40 certificates, 3DES key, SHA-1 MAC, as macOS Keychain writes: for old parsers
        /// (Go's x/crypto/pkcs12, Java 8, older Windows).
        case legacy
    }

    public static func write(
        certificateDER: [UInt8],
        chainDER: [[UInt8]] = [],
        privateKey: SecretBytes,
        password: SecretBytes,
        friendlyName: String,
        style: Style
    ) throws -> [UInt8] {
        try OpenSSL.makePKCS12(
            certificate: certificateDER,
            chain: chainDER,
            privateKey: privateKey,
            password: password,
            name: friendlyName,
            style: style == .legacy ? .legacy : .modern
        )
    }
}

/// PEM encoding for export.
public enum PEMWriter {
    public static func certificate(_ der: [UInt8]) -> String { PEMBlock.encode(label: "CERTIFICATE", der: der) }
    public static func privateKey(_ pkcs8: SecretBytes) -> String {
        PEMBlock.encode(label: "PRIVATE KEY", der: pkcs8.bytes)
    }
}
