import CredentialFormats
import Foundation
import PushStore

/// Checks a decrypted secret against what the (public, plain) index says it is for.
///
/// age gives confidentiality, not authenticity: anyone who can push to the repository can write a
/// file encrypted to the members. A key that does not belong to the certificate the index names,
/// a certificate file that is not the one the index names, or a token key whose public key is not
/// the recorded one is therefore refused as tampered instead of being used.
struct TeamIntegrity {
    var root: URL

    func verify(_ secret: SecretBytes, for item: SecretItem) throws {
        let index = try ReportSchema.decoder().decode(
            StoreIndex.self,
            from: Data(StoreFile.read(root: root, relative: "index.json", kind: .storeRecord))
        )
        let file = TeamSecretStore.relativePath(of: item)
        if let request = index.requests?.first(where: { $0.alias == item.alias }) {
            let fingerprint = OpenSSL.publicKeyFingerprint(privateKey: secret)
            guard Self.same(fingerprint, request.publicKeyFingerprint) else {
                throw tampered(item, file, "its key is not the one of the pending request the index names")
            }
            return
        }
        guard let credential = index.credentials.first(where: { $0.alias == item.alias }) else {
            throw tampered(item, file, "no index entry names it")
        }
        switch item.kind {
        case .teamIdentity, .signingKey:
            throw tampered(item, file, "a member's own key has no place among the store's secrets")
        case .tokenKey:
            guard let keyID = credential.keyID, let teamID = credential.teamID,
                let key = try? ProviderKey(keyID: keyID, teamID: teamID, pkcs8: secret),
                Self.same(key.publicKeyFingerprint, credential.publicKeyFingerprint)
            else { throw tampered(item, file, "its key's public half is not the one the index records") }
        case .privateKey:
            let certificate = try self.certificate(of: credential, item: item, file: file)
            guard Self.same(OpenSSL.publicKeyFingerprint(privateKey: secret), certificate.publicKeyFingerprint) else {
                throw tampered(item, file, "its private key does not belong to the certificate the index names")
            }
        case .pkcs12Password:
            _ = try self.certificate(of: credential, item: item, file: file)
            guard let bundle = credential.bundleFile else { throw tampered(item, file, "the index names no bundle") }
            let opened = try CredentialFile.decode(
                try StoreFile.read(root: root, relative: bundle, kind: .credential),
                path: bundle,
                password: .fixed(secret)
            )
            guard Self.same(opened.certificate.sha256, credential.sha256), opened.privateKey?.matchesCertificate == true
            else { throw tampered(item, file, "the bundle's certificate or key is not the one the index names") }
        }
    }

    /// The stored certificate, which must be the one whose fingerprint the index records.
    private func certificate(of credential: StoredCredential, item: SecretItem, file: String) throws -> PushCertificate
    {
        guard let relative = credential.certificateFile else {
            throw tampered(item, file, "the index names no certificate file")
        }
        let bytes = try StoreFile.read(root: root, relative: relative, kind: .credential)
        guard let read = try? CredentialFile.decode(bytes, path: relative, password: .none) else {
            throw tampered(item, file, "the certificate the index names cannot be read")
        }
        guard Self.same(read.certificate.sha256, credential.sha256) else {
            throw CredentialError(
                .tampered,
                path: relative,
                "The certificate file of \(item.alias) is not the certificate the index names (SHA-256 \(credential.sha256 ?? "none")); it was replaced outside apnsctl, so the credential is refused as tampered.",
                hint:
                    "Look at the repository's history (git log -- \(relative)) and restore the file, or import the credential again.",
                alias: item.alias
            )
        }
        return read.certificate
    }

    static func same(_ left: String?, _ right: String?) -> Bool {
        func normal(_ value: String?) -> String? { value?.replacingOccurrences(of: ":", with: "").lowercased() }
        guard let left = normal(left), let right = normal(right) else { return false }
        return left == right
    }

    private func tampered(_ item: SecretItem, _ file: String, _ why: String) -> CredentialError {
        CredentialError(
            .tampered,
            path: file,
            "The secret of \(item.alias) was decrypted, but \(why): it was changed outside apnsctl, so the credential is refused as tampered.",
            hint:
                "Look at the repository's history (git log -- \(file)) to see who changed it, restore it, or import the credential again.",
            alias: item.alias
        )
    }
}
