import CredentialFormats
import Foundation

extension CredentialStore {
    /// Stores a certificate file: a bundle with its key, a certificate with a separate key file,
    /// or a certificate alone (Apple's aps.cer), which takes the key of the pending request it was
    /// issued for.
    public func importCertificate(
        path: String,
        keyFile: String? = nil,
        password: PasswordSource = .none,
        alias: String? = nil,
        replacing: String? = nil,
        force: Bool = false
    ) throws -> ImportResult {
        var credential = try CredentialFile.read(path: path, password: password)
        if let keyFile { credential = try credential.pairing(keyFile: keyFile, password: password) }
        return credential.privateKeyPKCS8 == nil
            ? try completeRequest(credential, alias: alias, replacing: replacing, force: force)
            : try importCertificate(credential, alias: alias, replacing: replacing, force: force)
    }

    /// Stores a token key file (`AuthKey_KEYID.p8`) with what it is for: the file records only
    /// the key, so the team is required and the topics and environments are the person's word.
    public func importTokenKey(
        path: String,
        teamID: String?,
        keyID: String? = nil,
        topics: [String] = [],
        environments: [PushEnvironment] = [],
        alias: String? = nil,
        replacing: String? = nil
    ) throws -> ImportResult {
        guard let teamID else {
            throw CredentialError(.teamIDRequired, path: path, "A token key needs the team ID it belongs to.")
        }
        return try importTokenKey(
            try ProviderKey(path: path, teamID: teamID, keyID: keyID),
            topics: topics,
            environments: environments,
            alias: alias,
            source: path,
            replacing: replacing
        )
    }
}
