internal import COpenSSL
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
/// The exchange is OpenSSL's big-number arithmetic alone, instead of libsecret's libgcrypt, whose
/// key generation and first use cost a cold `send` more than its whole TLS handshake: the
/// exponent comes from the kernel's random source and the key derivation and cipher from
/// swift-crypto, so neither OpenSSL's random generator nor its algorithm providers are started
/// (about 4.5 ms, docs/performance.md, "The cold probe"). The encryption is kept, not traded for the "plain" algorithm: it is what keeps a
/// secret out of the bus daemon's memory, which nothing locks against swap.
final class SecretServiceSession {
    static let algorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    /// Our public value, to send in `OpenSession`.
    let publicValue: [UInt8]
    private let privateExponent: OpaquePointer
    private var key: SymmetricKey?

    /// A fresh exchange; nil when OpenSSL could not make one.
    init?() {
        guard let exponent = BN_secure_new() else { return nil }
        BN_set_flags(exponent, BN_FLG_CONSTTIME)
        guard let value = Self.randomExponent(into: exponent).flatMap({ Self.power(of: nil, exponent: $0) }) else {
            BN_clear_free(exponent)
            return nil
        }
        privateExponent = exponent
        publicValue = value
    }

    /// `exponent` set to a uniformly random value in [2, p - 2], from the kernel's random source
    /// (rejection sampling: p is within 2^960 of 2^1024, so a draw is almost never refused); nil
    /// when OpenSSL could not.
    private static func randomExponent(into exponent: OpaquePointer) -> OpaquePointer? {
        guard let bound = BN_get_rfc2409_prime_1024(nil) else { return nil }
        defer { BN_free(bound) }
        guard BN_sub_word(bound, 3) == 1 else { return nil }
        var generator = SystemRandomNumberGenerator()
        var draw = [UInt8](repeating: 0, count: 128)
        defer { draw.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        for _ in 0..<64 {
            for index in draw.indices { draw[index] = generator.next() }
            guard BN_bin2bn(draw, Int32(draw.count), exponent) != nil else { return nil }
            if BN_cmp(exponent, bound) < 0 { return BN_add_word(exponent, 2) == 1 ? exponent : nil }
        }
        return nil
    }

    deinit { BN_clear_free(privateExponent) }

    /// Takes the service's public value from its `OpenSession` answer and derives the session's
    /// key; false when the value is not one a peer in the group could send.
    func accept(peerValue: [UInt8]) -> Bool {
        guard let prime = BN_get_rfc2409_prime_1024(nil) else { return false }
        defer { BN_free(prime) }
        guard let peer = BN_bin2bn(peerValue, Int32(peerValue.count), nil) else { return false }
        defer { BN_free(peer) }
        // 1 < y < p - 1: anything else would give a shared value an eavesdropper knows.
        guard let limit = BN_dup(prime) else { return false }
        defer { BN_free(limit) }
        guard BN_sub_word(limit, 1) == 1, BN_is_zero(peer) == 0, BN_is_one(peer) == 0, BN_cmp(peer, limit) < 0,
            var shared = Self.power(of: peer, exponent: privateExponent, paddedTo: 128)
        else { return false }
        defer { shared.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
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
    private static func power(of base: OpaquePointer?, exponent: OpaquePointer, paddedTo length: Int? = nil) -> [UInt8]?
    {
        guard let prime = BN_get_rfc2409_prime_1024(nil), let context = BN_CTX_secure_new(),
            let result = BN_secure_new()
        else { return nil }
        defer {
            BN_free(prime)
            BN_CTX_free(context)
            BN_clear_free(result)
        }
        var generator: OpaquePointer?
        if base == nil {
            generator = BN_new()
            guard let generator, BN_set_word(generator, 2) == 1 else { return nil }
        }
        defer { if let generator { BN_free(generator) } }
        guard BN_mod_exp(result, base ?? generator, exponent, prime, context) == 1 else { return nil }
        let count = Int((BN_num_bits(result) + 7) / 8)
        if let length {
            var bytes = [UInt8](repeating: 0, count: length)
            guard count <= length, BN_bn2binpad(result, &bytes, Int32(length)) == length else { return nil }
            return bytes
        }
        var bytes = [UInt8](repeating: 0, count: count)
        guard BN_bn2bin(result, &bytes) == count else { return nil }
        return bytes
    }
}
