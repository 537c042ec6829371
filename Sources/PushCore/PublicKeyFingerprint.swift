import Crypto
import Foundation

/// SHA-256 of a public key's SubjectPublicKeyInfo, upper-case hex with colons: names a key
/// without revealing it. One spelling for token keys, certificates and certificate requests, so
/// that a certificate and the key kept for its request are matched by this text.
package enum PublicKeyFingerprint {
    package static func of(subjectPublicKeyInfo der: some DataProtocol) -> String {
        HexText.of(SHA256.hash(data: der), uppercase: true, separator: ":")
    }
}
