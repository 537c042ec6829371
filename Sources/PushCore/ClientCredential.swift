import Crypto
import Foundation

/// How the connection proves who it is to APNs.
public enum ClientCredential: Sendable {
    /// TLS client authentication with a push certificate. `privateKey` is the PKCS#8 DER of the
    /// key; `chainDER` holds intermediates to present.
    case certificate(certificateDER: [UInt8], chainDER: [[UInt8]], privateKey: SecretBytes)
    /// Token authentication: an ES256 JWT in the `authorization` header of every request.
    case token(ProviderKey)
    /// Token authentication with a key held elsewhere (a secret manager signs with it), its
    /// tokens from the key's ``ProviderTokenSource``.
    case remoteToken(RemoteProviderKey)
    /// No credential: for probing a gateway's TLS and HTTP/2 only (APNs answers 403
    /// MissingProviderToken to any notification).
    case none
}

extension ClientCredential {
    /// `sha256:` and the hex SHA-256 of the certificate's DER, or of a token key's public key
    /// (with its key ID): names the credential without revealing anything secret.
    public var fingerprint: String {
        switch self {
        case .certificate(let der, _, _):
            return "sha256:" + Self.hex(SHA256.hash(data: der))
        case .token(let key):
            return "sha256:" + Self.hex(SHA256.hash(data: key.privateKey.publicKey.derRepresentation)) + " key "
                + key.keyID
        case .remoteToken(let key):
            let digest = key.publicKeyDER.map { Self.hex(SHA256.hash(data: $0)) } ?? "unknown"
            return "sha256:" + digest + " key " + key.keyID
        case .none:
            return "none"
        }
    }

    private static func hex(_ digest: SHA256.Digest) -> String { HexText.of(digest) }
}
