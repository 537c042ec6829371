import CredentialFormats
import Foundation
import PushCore

/// What a store reads is checked against its index: a certificate, a bundle or a key whose
/// fingerprint is not the one the index entry records was replaced outside apnsctl (in a
/// folder, in Vault, in a team's repository alike), and is refused as tampered instead of
/// being used to send as another app.
extension CredentialStore {
    /// `file`, read from `name` for `credential`, holds the certificate the index names. (A key
    /// that does not belong to it is a `key_mismatch`, as it always was.)
    func checkIndexed(_ file: CredentialFile, of credential: StoredCredential, name: String) throws -> CredentialFile {
        guard let recorded = credential.sha256 else { return file }
        if !Self.sameFingerprint(file.certificate.sha256, recorded) {
            throw Self.tampered(
                credential,
                name: name,
                "holds the certificate with SHA-256 \(file.certificate.sha256), not the one the index names (SHA-256 \(recorded))"
            )
        }
        return file
    }

    /// A token key's public-key fingerprint (``ProviderKey/publicKeyFingerprint``), of the key
    /// read from `place`, is the one the index records.
    func checkIndexed(publicKeyFingerprint found: String, of credential: StoredCredential, place: String) throws {
        guard let recorded = credential.publicKeyFingerprint else { return }
        guard Self.sameFingerprint(found, recorded) else {
            throw Self.tampered(
                credential,
                name: place,
                "holds the key with public-key SHA-256 \(found), not the one the index names (\(recorded))"
            )
        }
    }

    static func sameFingerprint(_ left: String, _ right: String) -> Bool {
        func normal(_ value: String) -> String { value.replacingOccurrences(of: ":", with: "").lowercased() }
        return normal(left) == normal(right)
    }

    private static func tampered(_ credential: StoredCredential, name: String, _ why: String) -> CredentialError {
        CredentialError(
            .tampered,
            path: name,
            "\(name), read for \(credential.alias), \(why): it was replaced outside apnsctl, so the credential is refused as tampered and nothing was sent with it.",
            hint:
                "Find who replaced it (the store's history or audit log), restore its earlier version, or remove \(credential.alias) and import the credential again.",
            alias: credential.alias
        )
    }
}
