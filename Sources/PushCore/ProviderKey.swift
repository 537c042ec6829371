import Crypto
import Foundation

/// An APNs token-authentication key: the P-256 private key Apple issues as
/// `AuthKey_<KEYID>.p8`, with the key ID and team ID that go into every JWT. Reading it from a
/// file is the credentials library's business; this is the key itself.
public struct ProviderKey: Sendable {
    public let keyID: String
    public let teamID: String
    public let privateKey: P256.Signing.PrivateKey

    public init(keyID: String, teamID: String, privateKey: P256.Signing.PrivateKey) throws {
        try Self.validateIdentifier(keyID, name: "key ID", code: .invalidKeyID)
        try Self.validateIdentifier(teamID, name: "team ID", code: .invalidTeamID)
        self.keyID = keyID
        self.teamID = teamID
        self.privateKey = privateKey
    }

    /// The PKCS#8 DER of the private key (a secret: for the secret store only).
    public var pkcs8: SecretBytes { SecretBytes([UInt8](privateKey.derRepresentation)) }

    /// Restores a key from the PKCS#8 DER that ``pkcs8`` gave.
    public init(keyID: String, teamID: String, pkcs8: SecretBytes) throws {
        let key: P256.Signing.PrivateKey
        do {
            key = try pkcs8.withUnsafeBytes { try P256.Signing.PrivateKey(derRepresentation: Array($0)) }
        } catch {
            throw PushCoreError.invalidKey(
                "The stored token key is not a P-256 private key.",
                hint: "Import the AuthKey_<KEYID>.p8 file again."
            )
        }
        try self.init(keyID: keyID, teamID: teamID, privateKey: key)
    }

    /// SHA-256 of the public key's SubjectPublicKeyInfo, colon-separated hex: identifies the key
    /// without revealing it.
    public var publicKeyFingerprint: String {
        PublicKeyFingerprint.of(subjectPublicKeyInfo: privateKey.publicKey.derRepresentation)
    }

    public var publicKeyPEM: String { privateKey.publicKey.pemRepresentation }

    /// A provider authentication token: header `{"alg":"ES256","kid":KEYID}`, claims
    /// `{"iat":SECONDS,"iss":TEAMID}`, ES256 signature as raw r||s, base64url without padding.
    ///
    /// Written out directly, keys sorted as a JSON encoder sorts them: both identifiers are ten
    /// upper-case letters and digits (checked when the key was made), so nothing in them needs
    /// escaping, and a cold `send` does not pay for the JSON encoder's first use.
    public func makeJWT(issuedAt: Date = Date()) throws -> String {
        let header = Data(#"{"alg":"ES256","kid":"\#(keyID)"}"#.utf8).base64URLEncodedString()
        let seconds = Int(issuedAt.timeIntervalSince1970)
        let claims = Data(#"{"iat":\#(seconds),"iss":"\#(teamID)"}"#.utf8).base64URLEncodedString()
        let signingInput = "\(header).\(claims)"
        let signature = try privateKey.signature(for: Data(signingInput.utf8))
        return "\(signingInput).\(signature.rawRepresentation.base64URLEncodedString())"
    }

    /// `AuthKey_ABC123DEFG.p8` → `ABC123DEFG`.
    public static func keyID(fromFileName path: String) -> String? {
        let name = (path as NSString).lastPathComponent
        guard name.hasPrefix("AuthKey_"), name.hasSuffix(".p8") else { return nil }
        let id = String(name.dropFirst("AuthKey_".count).dropLast(".p8".count))
        return isIdentifier(id) ? id : nil
    }

    /// Apple's key and team IDs are 10 upper-case letters and digits.
    public static func isIdentifier(_ value: String) -> Bool {
        value.count == 10 && value.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
    }

    static func validateIdentifier(_ value: String, name: String, code: PushCoreError.Code) throws {
        guard isIdentifier(value) else {
            throw PushCoreError(
                code,
                "The \(name) \"\(value)\" is not 10 upper-case letters and digits.",
                hint:
                    "Copy the \(name) from the Apple Developer portal (Membership details for the team ID, Keys for the key ID)."
            )
        }
    }
}

extension Data {
    /// Base64url without padding (RFC 7515).
    public func base64URLEncodedString() -> String {
        base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url with or without padding.
    public init?(base64URLEncoded text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        self.init(base64Encoded: base64)
    }
}
