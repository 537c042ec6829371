internal import COpenSSL
import Foundation
import PushCore
import _CryptoExtras

/// The wrapping of a key for Transit's bring-your-own-key import, as `vault transit import`
/// does it:
///
///     ciphertext = RSA-OAEP-SHA256(wrapping key, ephemeral AES-256 key)
///                ‖ AES-KWP(ephemeral key, PKCS#8 DER of the key)
///
/// RSA-OAEP (SHA-256 for the hash and MGF1) is swift-crypto's; AES key wrap with padding
/// (RFC 5649) is OpenSSL's `EVP_aes_256_wrap_pad`, since swift-crypto's AES.KeyWrap is RFC 3394
/// only (whole 8-byte blocks, no padding). The ephemeral key lives only in this call.
enum TransitKeyWrap {
    /// The base64 ciphertext for `transit/keys/NAME/import`.
    static func ciphertext(pkcs8: SecretBytes, wrappingKeyPEM: String) throws -> String {
        let rsa: _RSA.Encryption.PublicKey
        do {
            rsa = try _RSA.Encryption.PublicKey(pemRepresentation: wrappingKeyPEM)
        } catch {
            throw TransitKeyWrapFailure.wrappingKey
        }
        var ephemeral = [UInt8](repeating: 0, count: 32)
        defer { for index in ephemeral.indices { ephemeral[index] = 0 } }
        var generator = SystemRandomNumberGenerator()
        for index in ephemeral.indices { ephemeral[index] = generator.next() }
        let wrappedKey: Data
        do {
            wrappedKey = try rsa.encrypt(ephemeral, padding: .PKCS1_OAEP_SHA256)
        } catch {
            throw TransitKeyWrapFailure.wrappingKey
        }
        let wrappedTarget = try pkcs8.withUnsafeBytes {
            try aesKeyWrapWithPadding(key: ephemeral, plaintext: Array($0))
        }
        return (wrappedKey + Data(wrappedTarget)).base64EncodedString()
    }

    /// AES key wrap with padding (RFC 5649) of `plaintext` under `key` (16, 24 or 32 bytes).
    static func aesKeyWrapWithPadding(key: [UInt8], plaintext: [UInt8]) throws -> [UInt8] {
        let cipher: OpaquePointer?
        switch key.count {
        case 16: cipher = EVP_aes_128_wrap_pad()
        case 24: cipher = EVP_aes_192_wrap_pad()
        case 32: cipher = EVP_aes_256_wrap_pad()
        default: throw TransitKeyWrapFailure.keyWrap
        }
        guard let cipher, !plaintext.isEmpty, let context = EVP_CIPHER_CTX_new() else {
            throw TransitKeyWrapFailure.keyWrap
        }
        defer { EVP_CIPHER_CTX_free(context) }
        EVP_CIPHER_CTX_set_flags(context, Int32(EVP_CIPHER_CTX_FLAG_WRAP_ALLOW))
        guard EVP_EncryptInit_ex(context, cipher, nil, key, nil) == 1 else { throw TransitKeyWrapFailure.keyWrap }
        // The output: the input rounded up to 8 bytes, plus the 8-byte integrity block.
        var output = [UInt8](repeating: 0, count: (plaintext.count + 7) / 8 * 8 + 8 + 16)
        var written: Int32 = 0
        guard EVP_EncryptUpdate(context, &output, &written, plaintext, Int32(plaintext.count)) == 1 else {
            throw TransitKeyWrapFailure.keyWrap
        }
        var final: Int32 = 0
        let status = output.withUnsafeMutableBufferPointer { buffer in
            EVP_EncryptFinal_ex(context, buffer.baseAddress! + Int(written), &final)
        }
        guard status == 1 else { throw TransitKeyWrapFailure.keyWrap }
        return Array(output.prefix(Int(written + final)))
    }
}

/// Why wrapping failed (worded by the caller, with the server's address).
enum TransitKeyWrapFailure: Error {
    /// Transit's wrapping key is not an RSA public key swift-crypto takes.
    case wrappingKey
    /// OpenSSL's key wrap failed.
    case keyWrap
}
