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
    ) async throws -> ImportResult {
        var credential = try CredentialFile.read(path: path, password: password)
        if let keyFile { credential = try credential.pairing(keyFile: keyFile, password: password) }
        return credential.privateKeyPKCS8 == nil
            ? try await completeRequest(credential, alias: alias, replacing: replacing, force: force)
            : try await importCertificate(credential, alias: alias, replacing: replacing, force: force)
    }

    /// Stores a token key file (`AuthKey_KEYID.p8`) with what it is for: the file records only
    /// the key, so the team is required and the topics and environments are the person's word.
    /// A rotation (`replacing`) takes the team, topics and environments of the credential it
    /// replaces for whichever of them is not given.
    public func importTokenKey(
        path: String,
        teamID: String?,
        keyID: String? = nil,
        topics: [String] = [],
        environments: [PushEnvironment] = [],
        alias: String? = nil,
        replacing: String? = nil,
        force: Bool = false
    ) async throws -> ImportResult {
        // The replaced credential's team is read here only to read the key; the import checks
        // the replacement again under the store's lock.
        var replacedTeam: String?
        if let replacing, teamID == nil {
            let index = try await readIndex()
            guard let replaced = index.credentials.first(where: { $0.alias == replacing }) else {
                throw notFound(replacing, in: index)
            }
            replacedTeam = replaced.teamID
        }
        guard let teamID = teamID ?? replacedTeam else {
            throw CredentialError(.teamIDRequired, path: path, "A token key needs the team ID it belongs to.")
        }
        return try await importTokenKey(
            try ProviderKey(path: path, teamID: teamID, keyID: keyID),
            topics: topics,
            environments: environments,
            alias: alias,
            source: path,
            replacing: replacing,
            force: force
        )
    }
}
