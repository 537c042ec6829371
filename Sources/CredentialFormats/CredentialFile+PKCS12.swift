import Foundation
import SwiftASN1

extension CredentialFile {
    // MARK: PKCS#12

    /// Whether `password` decrypts every bag of a bundle whose MAC it does not verify: then the
    /// password is right and the file was damaged. Works on a copy: the check replaces the MAC.
    static func decryptsDespiteMAC(_ bytes: [UInt8], password: SecretBytes) -> Bool {
        guard let copy = OpenSSL.PKCS12File(der: bytes) else { return false }
        copy.replaceMAC(password: password)
        return (try? copy.parse(password: password)) != nil
    }

    static func decodePKCS12(_ bytes: [UInt8], path: String, password: PasswordSource) throws -> CredentialFile {
        guard let file = OpenSSL.PKCS12File(der: bytes) else {
            throw CredentialError(
                .corrupt,
                path: path,
                "The file is damaged: it starts like a PKCS#12 bundle but OpenSSL cannot decode its structure.",
                hint:
                    "Export the bundle again (Keychain Access: select certificate and key, File > Export Items, .p12)."
            )
        }
        guard let raw = file.protection() else {
            throw CredentialError(
                .corrupt,
                path: path,
                "The PKCS#12 bundle's contents cannot be decoded.",
                hint: "Export the bundle again."
            )
        }
        // Before anything that derives a key from a password: the MAC check with the empty
        // password below is already as many iterations as the file asks.
        try file.checkWork()
        let protection = describe(raw)
        if raw.hasUnknownAlgorithm {
            var names: [String] = []
            for name in raw.mac + raw.certificates + raw.keys
            where name.first?.isNumber == true && !names.contains(name) { names.append(name) }
            throw CredentialError(
                .unknownEncryption,
                path: path,
                "The bundle is encrypted with an algorithm OpenSSL does not know (\(names.joined(separator: ", "))).",
                hint:
                    "Export it again with common settings, e.g. `openssl pkcs12 -export` (AES-256) or from Keychain Access."
            )
        }
        if protection.usesLegacyAlgorithms && !OpenSSL.legacyProviderLoaded {
            throw CredentialError(
                .legacyProviderUnavailable,
                path: path,
                "This bundle uses \(protection.certificates) / \(protection.key), which OpenSSL 3 reads only with its legacy provider, and that provider could not be loaded.",
                hint: OpenSSL.legacyProviderHint
            )
        }

        // Find the password. The empty password is tried first so unprotected bundles open without a prompt.
        var secret: SecretBytes?
        if file.hasMAC {
            // A password known up front (a stored bundle's, from the secret store) is tried
            // first: one key derivation, where the empty password's two come first otherwise
            // (docs/performance.md, "check over a store"). Only the bundle's own password
            // verifies its MAC, so the outcome is the one the order below reaches; when it does
            // not verify, everything below runs as before.
            if let known = password.known, !known.isEmpty, file.verifyMAC(password: known) {
                secret = known
            } else if !file.verifyMAC(password: nil) {
                var retry = false
                while true {
                    guard
                        let candidate = try password(
                            PasswordRequest(path: path, what: "PKCS#12 bundle", isRetry: retry)
                        )
                    else {
                        throw CredentialError(
                            .passwordRequired,
                            path: path,
                            "The bundle is password-protected and no password was given.",
                            hint: passwordOptionsHint
                        )
                    }
                    if file.verifyMAC(password: candidate) {
                        secret = candidate
                        break
                    }
                    if retry || !canRetry(password) {
                        // A MAC that fails is a wrong password or a damaged file; only when the
                        // password still decrypts every bag is the file proven damaged.
                        if Self.decryptsDespiteMAC(bytes, password: candidate) {
                            throw CredentialError(
                                .corrupt,
                                path: path,
                                "The file is damaged: the password given decrypts its contents, but its integrity check (MAC) fails, so it was changed after it was exported.",
                                hint: "Export or download the bundle again; do not use this copy."
                            )
                        }
                        throw CredentialError(
                            .wrongPassword,
                            path: path,
                            "Wrong password or damaged file: the bundle's integrity check (MAC) fails with the password given.",
                            hint:
                                "Use the password chosen when the bundle was exported; if it is right, the file was changed after export: export it again."
                        )
                    }
                    retry = true
                }
            }
        }

        let contents: OpenSSL.PKCS12Contents
        do {
            contents = try file.parse(password: secret)
        } catch let failure as OpenSSL.DecryptFailure {
            if !file.hasMAC, secret == nil, raw.isEncrypted, !failure.looksUnsupported {
                // With no MAC the password can only be checked by decrypting: the empty one failed,
                // with a decryption error or, when the wrong key happened to leave valid padding,
                // with a parse error of what it decrypted to. Neither says the file is damaged.
                guard let candidate = try password(PasswordRequest(path: path, what: "PKCS#12 bundle", isRetry: false))
                else {
                    throw CredentialError(
                        .passwordRequired,
                        path: path,
                        "The bundle is password-protected and no password was given.",
                        hint: passwordOptionsHint
                    )
                }
                do {
                    return try finish(try file.parse(password: candidate), candidate)
                } catch let second as OpenSSL.DecryptFailure where !second.looksUnsupported {
                    // Again either error: a wrong password as often as not ends in a parse error.
                    throw CredentialError(
                        .wrongPassword,
                        path: path,
                        "Wrong password: the bundle has no integrity check (MAC), and decrypting it with the password given fails.",
                        hint:
                            "Use the password chosen when the bundle was exported; if it is right, the file was changed after export: export it again."
                    )
                }
            }
            if failure.looksUnsupported {
                throw CredentialError(
                    .unknownEncryption,
                    path: path,
                    "OpenSSL cannot decrypt this bundle's encryption (\(protection.certificates) / \(protection.key)): \(failure.errors.last.map(UserFacing.sanitize) ?? "unsupported").",
                    hint: protection.usesLegacyAlgorithms
                        ? OpenSSL.legacyProviderHint : "Export it again with common settings."
                )
            }
            throw CredentialError(
                .corrupt,
                path: path,
                "The bundle's contents are damaged (\(failure.errors.last.map(UserFacing.sanitize) ?? "decryption failed")).",
                hint: "Export the bundle again."
            )
        }
        return try finish(contents, secret)

        func finish(_ contents: OpenSSL.PKCS12Contents, _ secret: SecretBytes?) throws -> CredentialFile {
            guard let leafDER = contents.leaf else {
                throw CredentialError(
                    .noCertificate,
                    path: path,
                    "The bundle holds no certificate\(contents.privateKey != nil ? ", only a private key" : "").",
                    hint: "Export the certificate together with its key (in Keychain Access select both)."
                )
            }
            let leaf = try parseCertificate(leafDER, path: path)
            let chain = try contents.others.map { try parseCertificate($0, path: path) }
            let summary = contents.privateKey.map { key -> PrivateKeySummary in
                var summary = summarize(key: key, certificate: leaf)
                if let matches = contents.keyMatches { summary.matchesCertificate = matches }
                return summary
            }
            return CredentialFile(
                path: path,
                format: .pkcs12,
                certificate: leaf,
                chain: chain,
                privateKey: summary,
                protection: protection,
                privateKeyPKCS8: contents.privateKey,
                password: secret,
                contents: bytes
            )
        }
    }

    static let passwordOptionsHint =
        "Give the password it was exported with."

    static func canRetry(_ source: PasswordSource) -> Bool { source.isInteractive }

    static func describe(_ raw: OpenSSL.PKCS12Protection) -> PKCS12Protection {
        func friendly(_ names: [String]) -> String {
            let mapped = names.map { name -> String in
                switch name {
                case "pbeWithSHA1And40BitRC2-CBC": return "RC2-40 (PBE-SHA1)"
                case "pbeWithSHA1And128BitRC2-CBC": return "RC2-128 (PBE-SHA1)"
                case "pbeWithSHA1And3-KeyTripleDES-CBC": return "3DES (PBE-SHA1)"
                case "pbeWithSHA1And2-KeyTripleDES-CBC": return "2-key 3DES (PBE-SHA1)"
                case "pbeWithSHA1And128BitRC4": return "RC4-128 (PBE-SHA1)"
                case "pbeWithSHA1And40BitRC4": return "RC4-40 (PBE-SHA1)"
                case "none": return "none"
                case "sha1": return "SHA-1"
                case "sha256": return "SHA-256"
                case "sha384": return "SHA-384"
                case "sha512": return "SHA-512"
                default:
                    if name.hasPrefix("PBES2/") {
                        let parts = name.split(separator: "/")
                        if parts.count == 4 {
                            let prf = parts[2].replacingOccurrences(of: "hmacWith", with: "HMAC-")
                            return "\(parts[3].uppercased()) (PBES2, \(parts[1].uppercased())-\(prf))"
                        }
                    }
                    return name
                }
            }
            var unique: [String] = []
            for name in mapped where !unique.contains(name) { unique.append(name) }
            return unique.isEmpty ? "none" : unique.joined(separator: ", ")
        }
        let all = raw.certificates + raw.keys
        let legacy = all.contains {
            $0.contains("RC2") || $0.contains("RC4") || $0.contains("des-cbc")
                || $0.contains("DES-CBC") && !$0.contains("TripleDES")
        }
        return PKCS12Protection(
            mac: friendly(raw.mac),
            certificates: friendly(raw.certificates),
            key: friendly(raw.keys),
            usesLegacyAlgorithms: legacy
        )
    }
}
