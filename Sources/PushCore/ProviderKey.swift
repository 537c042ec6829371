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
            throw PushCoreError(
                .invalidKey,
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
    ///
    /// The token is assembled as bytes: going through `Data` and Foundation's string
    /// replacements cost a cold `send` more than the signature itself (each first use of a
    /// generic type there is a search of every protocol conformance in the program).
    public func makeJWT(issuedAt: Date = Date()) throws -> String {
        let seconds = Int(issuedAt.timeIntervalSince1970)
        var token: [UInt8] = []
        token.reserveCapacity(200)
        Base64URL.append(Array(#"{"alg":"ES256","kid":"\#(keyID)"}"#.utf8), to: &token)
        token.append(UInt8(ascii: "."))
        Base64URL.append(Array(#"{"iat":\#(seconds),"iss":"\#(teamID)"}"#.utf8), to: &token)
        let signature = try privateKey.signature(for: token)
        token.append(UInt8(ascii: "."))
        signature.rawRepresentation.withUnsafeBytes { Base64URL.append($0, to: &token) }
        return String(decoding: token, as: UTF8.self)
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

/// Base64url without padding (RFC 7515, RFC 4648 section 5), encoded byte by byte.
public enum Base64URL {
    /// Appends the encoding of `bytes` to `output`.
    public static func append(_ bytes: some Collection<UInt8>, to output: inout [UInt8]) {
        let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        let digits = alphabet.utf8Start
        output.reserveCapacity(output.count + (bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = second == nil ? nil : iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            output.append(digits[Int(group >> 18 & 0x3F)])
            output.append(digits[Int(group >> 12 & 0x3F)])
            if second != nil { output.append(digits[Int(group >> 6 & 0x3F)]) }
            if third != nil { output.append(digits[Int(group & 0x3F)]) }
        }
    }

    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var output: [UInt8] = []
        append(bytes, to: &output)
        return String(decoding: output, as: UTF8.self)
    }
}

extension Data {
    /// Base64url without padding (RFC 7515).
    public func base64URLEncodedString() -> String { Base64URL.encode(self) }

    /// Decodes base64url with or without padding.
    public init?(base64URLEncoded text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        self.init(base64Encoded: base64)
    }
}
