internal import COpenSSL
internal import COpenSSLShim
import Foundation

extension OpenSSL {
    // MARK: Writing PKCS#12 (export)

    enum PKCS12Style {
        /// AES-256-CBC, PBKDF2, SHA-256 MAC: what OpenSSL 3 writes by default.
        case modern
        /// RC2-40 for certificates, 3DES for the key, SHA-1 MAC: what macOS Keychain writes and
        /// old parsers expect.
        case legacy
    }

    static func makePKCS12(
        certificate: [UInt8],
        chain: [[UInt8]],
        privateKey: SecretBytes,
        password: SecretBytes,
        name: String,
        style: PKCS12Style
    ) throws -> [UInt8] {
        if style == .legacy && !legacyProviderLoaded {
            throw CredentialError(
                .legacyProviderUnavailable,
                "OpenSSL's legacy provider could not be loaded, so RC2-40 cannot be written.",
                hint: legacyProviderHint
            )
        }
        let result: [UInt8]? =
            withCertificate(certificate) { x509 -> [UInt8]? in
                withPrivateKey(privateKey) { key -> [UInt8]? in
                    guard let stack = OPENSSL_sk_new_null() else { return nil }
                    var chainHandles: [OpaquePointer] = []
                    defer {
                        OPENSSL_sk_free(stack)
                        for handle in chainHandles { X509_free(handle) }
                    }
                    for der in chain {
                        var handle: OpaquePointer?
                        der.withUnsafeBufferPointer { buffer in
                            var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
                            handle = d2i_X509(nil, &pointer, buffer.count)
                        }
                        if let handle {
                            chainHandles.append(handle)
                            OPENSSL_sk_push(stack, UnsafeRawPointer(handle))
                        }
                    }
                    let (certNID, keyNID, macMD): (Int32, Int32, OpaquePointer) =
                        style == .legacy
                        ? (NID_pbe_WithSHA1And40BitRC2_CBC, NID_pbe_WithSHA1And3_Key_TripleDES_CBC, EVP_sha1())
                        : (NID_aes_256_cbc, NID_aes_256_cbc, EVP_sha256())
                    let p12: OpaquePointer? = password.withCString { pass, _ in
                        PKCS12_create(pass, name, key, x509, stack, keyNID, certNID, 2048, -1, 0)
                    }
                    guard let p12 else { return nil }
                    defer { PKCS12_free(p12) }
                    // The MAC was left out above (mac_iter -1) so that its digest can be chosen here:
                    // SHA-1 for Keychain-style files, SHA-256 otherwise.
                    let status = password.withCString { pass, length in
                        PKCS12_set_mac(p12, pass, length, nil, 0, 2048, macMD)
                    }
                    guard status == 1 else { return nil }
                    let length = i2d_PKCS12(p12, nil)
                    guard length > 0 else { return nil }
                    var bytes = [UInt8](repeating: 0, count: Int(length))
                    bytes.withUnsafeMutableBufferPointer { buffer in
                        var pointer: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
                        _ = i2d_PKCS12(p12, &pointer)
                    }
                    return bytes
                } ?? nil
            } ?? nil
        let errors = drainErrors()
        guard let result else {
            throw CredentialError(
                .writeFailed,
                "OpenSSL could not build the PKCS#12 file (\(errors.last?.text ?? "no detail"))."
            )
        }
        return result
    }

    static var legacyProviderHint: String {
        "OpenSSL 3 keeps RC2 and other old ciphers in its \"legacy\" provider (legacy.so). Install it "
            + "(on Debian and Ubuntu it ships in the libssl3 package) or point OPENSSL_MODULES at the folder "
            + "that holds it; it was looked for in \(modulesDirectory)."
    }
}
