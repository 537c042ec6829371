internal import COpenSSL
internal import COpenSSLShim
import Crypto
import Foundation

extension OpenSSL {
    // MARK: Keys made here

    /// A new RSA private key, as PKCS#8 DER, made in memory and never written anywhere.
    package static func generateRSAKey(bits: Int32) throws -> SecretBytes {
        ERR_clear_error()
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw generationFailed("no RSA key generator")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, bits) == 1,
            EVP_PKEY_generate(context, &key) == 1, let key
        else {
            throw generationFailed(drainErrors().last?.text ?? "no detail")
        }
        defer { EVP_PKEY_free(key) }
        guard let pkcs8 = pkcs8(of: key) else { throw generationFailed("the key could not be encoded") }
        return pkcs8
    }

    private static func generationFailed(_ detail: String) -> CredentialError {
        CredentialError(
            .writeFailed,
            "OpenSSL could not make an RSA key (\(detail)).",
            hint: "Check that the OpenSSL 3 library is installed completely."
        )
    }

    // MARK: Public keys

    /// The DER SubjectPublicKeyInfo of an OpenSSL key (private or public).
    static func subjectPublicKeyInfo(of key: OpaquePointer) -> [UInt8]? {
        let length = i2d_PUBKEY(key, nil)
        guard length > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var pointer: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            _ = i2d_PUBKEY(key, &pointer)
        }
        return bytes
    }

    static func publicKeyFingerprint(certificateDER: [UInt8]) -> String? {
        withCertificate(certificateDER) { x509 -> String? in
            guard let key = X509_get0_pubkey(x509), let spki = subjectPublicKeyInfo(of: key) else { return nil }
            return PublicKeyFingerprint.of(subjectPublicKeyInfo: spki)
        } ?? nil
    }

    package static func publicKeyFingerprint(privateKey pkcs8: SecretBytes) -> String? {
        withPrivateKey(pkcs8) { key in
            subjectPublicKeyInfo(of: key).map { PublicKeyFingerprint.of(subjectPublicKeyInfo: $0) }
        }
            ?? nil
    }

    // MARK: Certificate signing requests

    /// A PKCS#10 request for `subject` (short names such as CN, in order), signed with SHA-256
    /// by `pkcs8`. Returns its DER.
    package static func makeCertificateRequest(
        subject: [(String, String)],
        privateKey pkcs8: SecretBytes
    ) throws -> [UInt8] {
        ERR_clear_error()
        let der: [UInt8]? =
            withPrivateKey(pkcs8) { key -> [UInt8]? in
                guard let request = X509_REQ_new() else { return nil }
                defer { X509_REQ_free(request) }
                guard X509_REQ_set_version(request, 0) == 1, let name = X509_REQ_get_subject_name(request) else {
                    return nil
                }
                for (field, value) in subject {
                    let bytes = Array(value.utf8)
                    let added = bytes.withUnsafeBufferPointer { buffer in
                        X509_NAME_add_entry_by_txt(
                            name,
                            field,
                            MBSTRING_UTF8,
                            buffer.baseAddress,
                            Int32(buffer.count),
                            -1,
                            0
                        )
                    }
                    guard added == 1 else { return nil }
                }
                guard X509_REQ_set_pubkey(request, key) == 1, X509_REQ_sign(request, key, EVP_sha256()) > 0 else {
                    return nil
                }
                let length = i2d_X509_REQ(request, nil)
                guard length > 0 else { return nil }
                var bytes = [UInt8](repeating: 0, count: Int(length))
                bytes.withUnsafeMutableBufferPointer { buffer in
                    var pointer: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
                    _ = i2d_X509_REQ(request, &pointer)
                }
                return bytes
            } ?? nil
        let errors = drainErrors()
        guard let der else {
            throw CredentialError(
                .writeFailed,
                "OpenSSL could not make the certificate signing request (\(errors.last?.text ?? "no detail"))."
            )
        }
        return der
    }

    package struct RequestFacts {
        package var keyType: String
        package var keyBits: Int
        package var subjectPublicKeyInfo: [UInt8]
        package var signatureValid: Bool
    }

    /// The public key of a PKCS#10 request and whether the request's signature verifies with it.
    package static func requestFacts(der: [UInt8]) -> RequestFacts? {
        var handle: OpaquePointer?
        der.withUnsafeBufferPointer { buffer in
            var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
            handle = d2i_X509_REQ(nil, &pointer, buffer.count)
        }
        defer { ERR_clear_error() }
        guard let handle else { return nil }
        defer { X509_REQ_free(handle) }
        guard let key = X509_REQ_get0_pubkey(handle), let spki = subjectPublicKeyInfo(of: key) else { return nil }
        let (type, bits) = describe(key: key)
        return RequestFacts(
            keyType: type,
            keyBits: bits,
            subjectPublicKeyInfo: spki,
            signatureValid: X509_REQ_verify(handle, key) == 1
        )
    }

    // MARK: DER private keys

    /// Decodes a DER private key: PKCS#8, PKCS#1 (RSA), SEC1 (EC), or encrypted PKCS#8.
    static func decodePrivateKeyDER(_ der: [UInt8], password: SecretBytes?) -> KeyDecodeResult {
        ERR_clear_error()
        defer { ERR_clear_error() }
        let plain: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &pointer, buffer.count)
        }
        if let plain {
            defer { EVP_PKEY_free(plain) }
            return pkcs8(of: plain).map(KeyDecodeResult.key) ?? .failed
        }
        ERR_clear_error()
        let encrypted: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509_SIG(nil, &pointer, buffer.count)
        }
        guard let encrypted else { return .failed }
        defer { X509_SIG_free(encrypted) }
        guard let password else { return .wrongPassword }
        let info = password.withCString { pass, length in PKCS8_decrypt(encrypted, pass, length) }
        guard let info else {
            // A wrong password, unless the algorithm itself cannot run here.
            let usable = password.withCString { pass, length in
                der.withUnsafeBufferPointer { apnsctl_pkcs8_encryption_usable($0.baseAddress, $0.count, pass, length) }
            }
            return usable == 0 ? .failed : .wrongPassword
        }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        guard let key = EVP_PKCS82PKEY(info) else { return .failed }
        defer { EVP_PKEY_free(key) }
        return pkcs8(of: key).map(KeyDecodeResult.key) ?? .failed
    }

    /// Whether DER bytes are an encrypted PKCS#8 key (which needs a password).
    static func isEncryptedPrivateKeyDER(_ der: [UInt8]) -> Bool {
        let encrypted: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509_SIG(nil, &pointer, buffer.count)
        }
        ERR_clear_error()
        guard let encrypted else { return false }
        X509_SIG_free(encrypted)
        return true
    }
}
