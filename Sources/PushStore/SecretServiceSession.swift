internal import CKeyExchange
import Crypto
import Foundation
import _CryptoExtras

/// The client's half of a Secret Service session of the "dh-ietf1024-sha256-aes128-cbc-pkcs7"
/// algorithm, as the freedesktop.org Secret Service API defines it and libsecret and
/// gnome-keyring implement it: a Diffie-Hellman exchange in the 1024-bit group of RFC 2409
/// (generator 2), the shared value as unsigned big-endian bytes of the prime's length, HKDF with
/// SHA-256 (no salt, no info) to a 16-byte key, and every secret sent in AES-128-CBC with PKCS#7
/// padding, its IV as the secret's parameters.
///
/// The exchange is BoringSSL's constant-time big-number arithmetic, the copy swift-crypto builds
/// into the program, called from C (the `CKeyExchange` target, whose header names no BoringSSL
/// type, so that this module never sees BoringSSL's declarations beside OpenSSL's). Not
/// libsecret's libgcrypt, whose key generation and first use cost a cold `send` more than its
/// whole TLS handshake, nor the system's OpenSSL, which is loaded only when a command needs it
/// (PKCS#12, a request) and costs about 2 ms to load: the exponent comes from the kernel's
/// random source and the key derivation and cipher from swift-crypto (docs/performance.md, "The
/// cold probe"). The encryption is kept, not traded for the "plain" algorithm: it is what keeps a
/// secret out of the bus daemon's memory, which nothing locks against swap.
final class SecretServiceSession {
    static let algorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    /// Our public value, to send in `OpenSession`.
    let publicValue: [UInt8]
    private let exchange: OpaquePointer
    private(set) var key: SymmetricKey?

    /// A fresh exchange; nil when the arithmetic failed.
    init?() {
        guard let exchange = apnsctl_dh_new() else { return nil }
        var value = [UInt8](repeating: 0, count: Int(APNSCTL_DH_PRIME_LENGTH))
        let count = apnsctl_dh_public_value(exchange, &value)
        guard count > 0 else {
            apnsctl_dh_free(exchange)
            return nil
        }
        self.exchange = exchange
        publicValue = Array(value.prefix(count))
    }

    deinit { apnsctl_dh_free(exchange) }

    /// Takes the service's public value from its `OpenSession` answer and derives the session's
    /// key; false when the value is not one a peer in the group could send (it must lie in
    /// (1, p - 1)). The shared value is padded to the prime's length, as gnome-keyring derives
    /// the key from it: one exchange in 256 has a leading zero, which DirectSecretReadTests
    /// makes sure to meet.
    func accept(peerValue: [UInt8]) -> Bool {
        var shared = [UInt8](repeating: 0, count: Int(APNSCTL_DH_PRIME_LENGTH))
        defer { shared.withUnsafeMutableBytes { apnsctl_dh_cleanse($0.baseAddress, $0.count) } }
        guard apnsctl_dh_shared_value(exchange, peerValue, peerValue.count, &shared) == 1 else { return false }
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: shared), outputByteCount: 16)
        return true
    }

    /// The plaintext of a secret the service sent in this session; nil when it does not decrypt.
    func decrypt(parameters: [UInt8], value: [UInt8]) -> [UInt8]? {
        guard let key, let iv = try? AES._CBC.IV(ivBytes: parameters),
            let plain = try? AES._CBC.decrypt(value, using: key, iv: iv)
        else { return nil }
        return [UInt8](plain)
    }
}
