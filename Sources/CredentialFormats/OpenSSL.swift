internal import COpenSSL
internal import COpenSSLShim
import Foundation

/// The small part of OpenSSL 3 the project needs: PKCS#12 in every encryption users bring,
/// private keys in every PEM/DER shape, and key/certificate matching.
///
/// All C stays in this file. Wrappers free what they allocate with `defer`.
package enum OpenSSL {
    /// Whether OpenSSL's "legacy" provider (RC2, RC4, DES...) could be loaded.
    ///
    /// Loading any provider explicitly disables the implicit "default" one, so both are loaded.
    static let legacyProviderLoaded: Bool = {
        _ = OSSL_PROVIDER_load(nil, "default")
        let legacy = OSSL_PROVIDER_load(nil, "legacy")
        ERR_clear_error()
        return legacy != nil
    }()

    /// Where OpenSSL looks for provider modules, for error messages.
    static var modulesDirectory: String {
        if let fromEnvironment = ProcessInfo.processInfo.environment["OPENSSL_MODULES"] {
            return fromEnvironment
        }
        return String(cString: OpenSSL_version(Int32(OPENSSL_MODULES_DIR)))
            .replacingOccurrences(of: "MODULESDIR: ", with: "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\""))
    }

    /// Drains OpenSSL's error queue into one readable line (for diagnostics, never shown raw
    /// as the only explanation).
    static func drainErrors() -> [(library: Int32, reason: Int32, text: String)] {
        var errors: [(Int32, Int32, String)] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let library = Int32((code >> 23) & 0xFF)
            let reason = Int32(code & 0x7FFFFF)
            errors.append((library, reason, OpenSSL.string(buffer)))
        }
        return errors
    }

    /// A NUL-terminated C buffer as a Swift string.
    static func string(_ buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The iteration count of an encrypted PKCS#8 key in DER (0 when it is not one).
    static func pkcs8Iterations(_ der: [UInt8]) -> UInt64 {
        defer { ERR_clear_error() }
        return der.withUnsafeBufferPointer { apnsctl_pkcs8_iterations($0.baseAddress, $0.count) }
    }

    // MARK: PKCS#12

    struct PKCS12Protection {
        var mac: [String]
        var certificates: [String]
        var keys: [String]
        var hasUnknownAlgorithm: Bool
        /// Whether any safe or key bag is encrypted (a password is needed to read it).
        var isEncrypted: Bool { (certificates + keys).contains { $0 != "none" } }
    }

    struct PKCS12Contents {
        var leaf: [UInt8]?
        var others: [[UInt8]]
        var privateKey: SecretBytes?
        var keyMatches: Bool?
    }

    /// A decoded but not yet decrypted PKCS#12 structure.
    final class PKCS12File {
        let handle: OpaquePointer
        /// Whether the file as read carries an integrity MAC.
        let hasMAC: Bool

        /// Returns nil when the bytes are not a PKCS#12 structure at all.
        init?(der: [UInt8]) {
            var handle: OpaquePointer?
            der.withUnsafeBufferPointer { buffer in
                var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
                handle = d2i_PKCS12(nil, &pointer, buffer.count)
            }
            ERR_clear_error()
            guard let handle else { return nil }
            self.handle = handle
            hasMAC = PKCS12_mac_present(handle) == 1
        }

        deinit { PKCS12_free(handle) }

        func protection() -> PKCS12Protection? {
            var mac = [CChar](repeating: 0, count: 256)
            var certs = [CChar](repeating: 0, count: 1024)
            var keys = [CChar](repeating: 0, count: 1024)
            var unknown: Int32 = 0
            let status = apnsctl_pkcs12_describe(
                handle,
                &mac,
                mac.count,
                &certs,
                certs.count,
                &keys,
                keys.count,
                &unknown
            )
            ERR_clear_error()
            guard status == 0 else { return nil }
            func split(_ buffer: [CChar]) -> [String] {
                let text = OpenSSL.string(buffer)
                return text.isEmpty ? [] : text.split(separator: ",").map(String.init)
            }
            return PKCS12Protection(
                mac: split(mac),
                certificates: split(certs),
                keys: split(keys),
                hasUnknownAlgorithm: unknown != 0
            )
        }

        /// Checks the MAC with `password`; `nil` tries both the empty string and no password,
        /// because writers disagree on which one an "empty" password means.
        func verifyMAC(password: SecretBytes?) -> Bool {
            defer { ERR_clear_error() }
            guard let password, !password.isEmpty else {
                return PKCS12_verify_mac(handle, nil, 0) == 1 || PKCS12_verify_mac(handle, "", 0) == 1
            }
            return password.withCString { PKCS12_verify_mac(handle, $0, $1) == 1 }
        }

        /// Computes a new MAC over the bundle's contents with `password` (in memory only).
        func replaceMAC(password: SecretBytes) {
            _ = password.withCString { PKCS12_set_mac(handle, $0, $1, nil, 0, 1, nil) }
            ERR_clear_error()
        }

        /// Throws ``ExcessiveWork`` when the MAC or an encryption visible without the password
        /// asks for more iterations than ``ExcessiveWork`` allows. Costs no key derivation.
        func checkWork() throws {
            var largest: UInt64 = 0
            var part: Int32 = 0
            var total: UInt64 = 0
            let status = apnsctl_pkcs12_iterations(handle, &largest, &part, &total)
            ERR_clear_error()
            guard status == 0 else { return }
            visibleWork = total
            try ExcessiveWork.check(largest: largest, part: ExcessiveWork.Part(rawValue: part) ?? .mac, total: total)
        }

        /// The iterations counted by ``checkWork()``, which the bags the password reveals add to.
        private var visibleWork: UInt64 = 0

        /// Throws ``ExcessiveWork`` when a key bag inside an encrypted safe does.
        private func checkInnerWork(password: SecretBytes?) throws {
            var largest: UInt64 = 0
            var total: UInt64 = 0
            if let password, !password.isEmpty {
                _ = password.withCString { apnsctl_pkcs12_inner_iterations(handle, $0, $1, &largest, &total) }
            } else {
                // As PKCS12_parse does for an empty password: "" first, then none.
                _ = apnsctl_pkcs12_inner_iterations(handle, "", 0, &largest, &total)
                if largest == 0 { _ = apnsctl_pkcs12_inner_iterations(handle, nil, -1, &largest, &total) }
            }
            ERR_clear_error()
            let sum = visibleWork > UInt64.max - total ? UInt64.max : visibleWork + total
            try ExcessiveWork.check(largest: largest, part: .key, total: sum)
        }

        /// Decrypts the bags. Throws a `DecryptFailure` describing why when it cannot.
        func parse(password: SecretBytes?) throws -> PKCS12Contents {
            var key: OpaquePointer?
            var certificate: OpaquePointer?
            var stack: OpaquePointer?
            try checkInnerWork(password: password)
            ERR_clear_error()
            if !hasMAC, let password, !password.isEmpty {
                // PKCS12_parse insists on a MAC whenever it is given a password. A file without
                // one gets a MAC computed in memory with the candidate password; a wrong
                // password then shows as a decryption failure, which is the only check possible.
                _ = password.withCString { PKCS12_set_mac(handle, $0, $1, nil, 0, 1, nil) }
            }
            let status: Int32
            if let password, !password.isEmpty {
                status = password.withCString { pass, _ in PKCS12_parse(handle, pass, &key, &certificate, &stack) }
            } else {
                // PKCS12_parse itself tries NULL and "" when given an empty password.
                status = PKCS12_parse(handle, "", &key, &certificate, &stack)
            }
            guard status == 1 else {
                throw DecryptFailure(errors: OpenSSL.drainErrors().map(\.text))
            }
            defer {
                if let key { EVP_PKEY_free(key) }
                if let certificate { X509_free(certificate) }
                if let stack { apnsctl_sk_X509_pop_free(stack) }
            }
            var others: [[UInt8]] = []
            var otherHandles: [OpaquePointer] = []
            if let stack {
                for index in 0..<apnsctl_sk_X509_num(stack) {
                    if let item = apnsctl_sk_X509_value(stack, index), let der = OpenSSL.der(of: item) {
                        others.append(der)
                        otherHandles.append(item)
                    }
                }
            }
            // PKCS12_parse returns the certificate whose localKeyId matches the key. When none
            // does (a key that belongs to another certificate), pick the leaf ourselves: the first
            // certificate that is not a CA.
            var leafHandle = certificate
            if leafHandle == nil, !otherHandles.isEmpty {
                let index = otherHandles.firstIndex { X509_check_ca($0) == 0 } ?? 0
                leafHandle = otherHandles[index]
                others.remove(at: index)
            }
            var contents = PKCS12Contents(leaf: leafHandle.flatMap(OpenSSL.der(of:)), others: others)
            if let key {
                contents.privateKey = OpenSSL.pkcs8(of: key)
                if let leafHandle {
                    contents.keyMatches = X509_check_private_key(leafHandle, key) == 1
                }
            }
            ERR_clear_error()
            return contents
        }
    }

    struct DecryptFailure: Error {
        var errors: [String]
        var looksLikeBadDecrypt: Bool {
            errors.contains {
                $0.contains("bad decrypt") || $0.contains("pkcs12 pbe crypt error") || $0.contains("decrypt error")
            }
        }
        var looksUnsupported: Bool {
            errors.contains { $0.contains("unsupported") || $0.contains("unknown") }
        }
    }

    // MARK: Keys and certificates

    static func der(of x509: OpaquePointer) -> [UInt8]? {
        let length = i2d_X509(x509, nil)
        guard length > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var pointer: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            _ = i2d_X509(x509, &pointer)
        }
        return bytes
    }

    /// The PKCS#8 DER encoding of a private key.
    static func pkcs8(of key: OpaquePointer) -> SecretBytes? {
        guard let info = EVP_PKEY2PKCS8(key) else { return nil }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        let length = i2d_PKCS8_PRIV_KEY_INFO(info, nil)
        guard length > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var pointer: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            _ = i2d_PKCS8_PRIV_KEY_INFO(info, &pointer)
        }
        let secret = SecretBytes(bytes)
        for index in bytes.indices { bytes[index] = 0 }
        return secret
    }

    static func withCertificate<R>(_ der: [UInt8], _ body: (OpaquePointer) throws -> R) rethrows -> R? {
        var handle: OpaquePointer?
        der.withUnsafeBufferPointer { buffer in
            var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
            handle = d2i_X509(nil, &pointer, buffer.count)
        }
        ERR_clear_error()
        guard let handle else { return nil }
        defer { X509_free(handle) }
        return try body(handle)
    }

    static func withPrivateKey<R>(_ pkcs8: SecretBytes, _ body: (OpaquePointer) throws -> R) rethrows -> R? {
        let key: OpaquePointer? = pkcs8.withUnsafeBytes { buffer in
            var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &pointer, buffer.count)
        }
        ERR_clear_error()
        guard let key else { return nil }
        defer { EVP_PKEY_free(key) }
        return try body(key)
    }

    /// Type and size of a certificate's public key: ("RSA", 2048), ("EC P-256", 256)...
    static func publicKeyDescription(certificateDER: [UInt8]) -> (type: String, bits: Int)? {
        withCertificate(certificateDER) { x509 -> (String, Int)? in
            guard let key = X509_get0_pubkey(x509) else { return nil }
            return describe(key: key)
        } ?? nil
    }

    static func privateKeyDescription(_ pkcs8: SecretBytes) -> (type: String, bits: Int)? {
        withPrivateKey(pkcs8) { describe(key: $0) }
    }

    static func describe(key: OpaquePointer) -> (String, Int) {
        let bits = Int(EVP_PKEY_get_bits(key))
        let id = EVP_PKEY_get_base_id(key)
        switch id {
        case EVP_PKEY_RSA: return ("RSA", bits)
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            if EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 {
                let group = OpenSSL.string(name)
                let friendly =
                    ["prime256v1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521", "secp256k1": "secp256k1"][group]
                    ?? group
                return ("EC \(friendly)", bits)
            }
            return ("EC", bits)
        case EVP_PKEY_ED25519: return ("Ed25519", bits)
        default:
            let name = OBJ_nid2sn(id).map { String(cString: $0) } ?? "unknown"
            return (name, bits)
        }
    }

    /// Whether `pkcs8` is the private half of the certificate's public key.
    static func keyMatches(certificateDER: [UInt8], privateKey pkcs8: SecretBytes) -> Bool {
        let result =
            withCertificate(certificateDER) { x509 in
                withPrivateKey(pkcs8) { key in X509_check_private_key(x509, key) == 1 } ?? false
            } ?? false
        ERR_clear_error()
        return result
    }

    enum KeyDecodeResult {
        case key(SecretBytes)
        case wrongPassword
        case failed
    }

    /// Decodes one PEM private-key block (PKCS#8, PKCS#1, SEC1, encrypted PKCS#8 or
    /// traditional "Proc-Type: 4,ENCRYPTED") into PKCS#8 DER.
    static func decodePrivateKeyPEM(_ pemText: String, password: SecretBytes?) -> KeyDecodeResult {
        let bytes = Array(pemText.utf8)
        return bytes.withUnsafeBufferPointer { buffer -> KeyDecodeResult in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return .failed }
            defer { BIO_free(bio) }
            ERR_clear_error()
            // With no callback OpenSSL uses the last argument as the passphrase. An empty one,
            // never NULL, keeps OpenSSL from prompting on the terminal by itself.
            let key = (password ?? SecretBytes([])).withCString { pass, _ in
                PEM_read_bio_PrivateKey(bio, nil, nil, UnsafeMutableRawPointer(mutating: pass))
            }
            let errors = drainErrors()
            guard let key else {
                // Asked of the algorithm, not read from the errors: a wrong password can leave
                // valid padding, and the parse error that follows names no decryption.
                if let password {
                    let usable = password.withCString { pass, length in
                        buffer.withMemoryRebound(to: CChar.self) {
                            apnsctl_pem_key_encryption_usable($0.baseAddress, Int32($0.count), pass, length)
                        }
                    }
                    ERR_clear_error()
                    if usable >= 0 { return usable == 1 ? .wrongPassword : .failed }
                }
                let badDecrypt = errors.contains { $0.text.contains("bad decrypt") || $0.text.contains("decrypt") }
                return badDecrypt ? .wrongPassword : .failed
            }
            defer { EVP_PKEY_free(key) }
            return pkcs8(of: key).map(KeyDecodeResult.key) ?? .failed
        }
    }

}
