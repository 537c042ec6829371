internal import CCryptoBoringSSL
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
/// into the program (its `CCryptoBoringSSL` module), instead of libsecret's libgcrypt, whose key
/// generation and first use cost a cold `send` more than its whole TLS handshake, or the
/// system's OpenSSL, which is loaded only when a command needs it (PKCS#12, a request) and
/// costs about 2 ms to load: the exponent comes from the kernel's random source and the key
/// derivation and cipher from swift-crypto (docs/performance.md, "The cold probe"). The encryption is kept, not traded for the "plain" algorithm: it is what keeps a
/// secret out of the bus daemon's memory, which nothing locks against swap.
final class SecretServiceSession {
    static let algorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    /// Our public value, to send in `OpenSession`.
    let publicValue: [UInt8]
    private let privateExponent: UnsafeMutablePointer<BIGNUM>
    private var key: SymmetricKey?

    /// A fresh exchange; nil when the arithmetic failed.
    init?() {
        guard let exponent = CCryptoBoringSSL_BN_new() else { return nil }
        guard let value = Self.randomExponent(into: exponent).flatMap({ Self.power(of: nil, exponent: $0) }) else {
            CCryptoBoringSSL_BN_clear_free(exponent)
            return nil
        }
        privateExponent = exponent
        publicValue = value
    }

    /// The group's prime, p = 2^1024 - 2^960 - 1 + 2^64 * (floor(2^894 pi) + 129093) (RFC 2409,
    /// section 6.2), big-endian.
    static let primeBytes: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xC9, 0x0F, 0xDA, 0xA2, 0x21, 0x68, 0xC2, 0x34,
        0xC4, 0xC6, 0x62, 0x8B, 0x80, 0xDC, 0x1C, 0xD1, 0x29, 0x02, 0x4E, 0x08, 0x8A, 0x67, 0xCC, 0x74,
        0x02, 0x0B, 0xBE, 0xA6, 0x3B, 0x13, 0x9B, 0x22, 0x51, 0x4A, 0x08, 0x79, 0x8E, 0x34, 0x04, 0xDD,
        0xEF, 0x95, 0x19, 0xB3, 0xCD, 0x3A, 0x43, 0x1B, 0x30, 0x2B, 0x0A, 0x6D, 0xF2, 0x5F, 0x14, 0x37,
        0x4F, 0xE1, 0x35, 0x6D, 0x6D, 0x51, 0xC2, 0x45, 0xE4, 0x85, 0xB5, 0x76, 0x62, 0x5E, 0x7E, 0xC6,
        0xF4, 0x4C, 0x42, 0xE9, 0xA6, 0x37, 0xED, 0x6B, 0x0B, 0xFF, 0x5C, 0xB6, 0xF4, 0x06, 0xB7, 0xED,
        0xEE, 0x38, 0x6B, 0xFB, 0x5A, 0x89, 0x9F, 0xA5, 0xAE, 0x9F, 0x24, 0x11, 0x7C, 0x4B, 0x1F, 0xE6,
        0x49, 0x28, 0x66, 0x51, 0xEC, 0xE6, 0x53, 0x81, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    ]

    /// A new BIGNUM holding the prime; the caller frees it.
    private static func prime() -> UnsafeMutablePointer<BIGNUM>? {
        CCryptoBoringSSL_BN_bin2bn(primeBytes, primeBytes.count, nil)
    }

    /// `exponent` set to a uniformly random value in [2, p - 2], from the kernel's random source
    /// (rejection sampling: p is within 2^960 of 2^1024, so a draw is almost never refused); nil
    /// when the arithmetic failed.
    private static func randomExponent(into exponent: UnsafeMutablePointer<BIGNUM>) -> UnsafeMutablePointer<BIGNUM>? {
        guard let bound = prime() else { return nil }
        defer { CCryptoBoringSSL_BN_free(bound) }
        guard CCryptoBoringSSL_BN_sub_word(bound, 3) == 1 else { return nil }
        var generator = SystemRandomNumberGenerator()
        var draw = [UInt8](repeating: 0, count: 128)
        defer { draw.withUnsafeMutableBytes { CCryptoBoringSSL_OPENSSL_cleanse($0.baseAddress, $0.count) } }
        for _ in 0..<64 {
            for index in draw.indices { draw[index] = generator.next() }
            guard CCryptoBoringSSL_BN_bin2bn(draw, draw.count, exponent) != nil else { return nil }
            if CCryptoBoringSSL_BN_cmp(exponent, bound) < 0 {
                return CCryptoBoringSSL_BN_add_word(exponent, 2) == 1 ? exponent : nil
            }
        }
        return nil
    }

    deinit { CCryptoBoringSSL_BN_clear_free(privateExponent) }

    /// Takes the service's public value from its `OpenSession` answer and derives the session's
    /// key; false when the value is not one a peer in the group could send.
    func accept(peerValue: [UInt8]) -> Bool {
        guard let prime = Self.prime() else { return false }
        defer { CCryptoBoringSSL_BN_free(prime) }
        guard let peer = CCryptoBoringSSL_BN_bin2bn(peerValue, peerValue.count, nil) else { return false }
        defer { CCryptoBoringSSL_BN_free(peer) }
        // 1 < y < p - 1: anything else would give a shared value an eavesdropper knows.
        guard let limit = CCryptoBoringSSL_BN_dup(prime) else { return false }
        defer { CCryptoBoringSSL_BN_free(limit) }
        guard CCryptoBoringSSL_BN_sub_word(limit, 1) == 1, CCryptoBoringSSL_BN_is_zero(peer) == 0,
            CCryptoBoringSSL_BN_is_one(peer) == 0, CCryptoBoringSSL_BN_cmp(peer, limit) < 0,
            var shared = Self.power(of: peer, exponent: privateExponent, paddedTo: 128)
        else { return false }
        defer { shared.withUnsafeMutableBytes { CCryptoBoringSSL_OPENSSL_cleanse($0.baseAddress, $0.count) } }
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

    /// base^exponent mod p as unsigned big-endian bytes, base being the group's generator when
    /// nil: without leading zeros (a public value), or padded with zeros to `length` bytes (the
    /// shared value, as gnome-keyring derives the key from it; one exchange in 256 has a leading
    /// zero, which DirectSecretReadTests makes sure to meet).
    private static func power(
        of base: UnsafeMutablePointer<BIGNUM>?,
        exponent: UnsafeMutablePointer<BIGNUM>,
        paddedTo length: Int? = nil
    ) -> [UInt8]? {
        guard let prime = prime() else { return nil }
        defer { CCryptoBoringSSL_BN_free(prime) }
        guard let context = CCryptoBoringSSL_BN_CTX_new() else { return nil }
        defer { CCryptoBoringSSL_BN_CTX_free(context) }
        guard let result = CCryptoBoringSSL_BN_new() else { return nil }
        defer { CCryptoBoringSSL_BN_clear_free(result) }
        var generator: UnsafeMutablePointer<BIGNUM>?
        if base == nil {
            generator = CCryptoBoringSSL_BN_new()
            guard let generator, CCryptoBoringSSL_BN_set_word(generator, 2) == 1 else { return nil }
        }
        defer { if let generator { CCryptoBoringSSL_BN_free(generator) } }
        // The exponent is the secret: the constant-time form, whatever the base.
        guard
            CCryptoBoringSSL_BN_mod_exp_mont_consttime(result, base ?? generator, exponent, prime, context, nil) == 1
        else { return nil }
        let count = Int(CCryptoBoringSSL_BN_num_bytes(result))
        let length = length ?? count
        guard count <= length else { return nil }
        var bytes = [UInt8](repeating: 0, count: length)
        guard CCryptoBoringSSL_BN_bn2bin_padded(&bytes, length, result) == 1 else { return nil }
        return bytes
    }
}
