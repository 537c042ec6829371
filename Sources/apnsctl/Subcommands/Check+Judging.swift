import Foundation
import PushCredentials

/// Judges one credential for `check`: a stored alias (with its key from the Secret Service
/// unless told not to), a certificate file, or a token key file.
final class CheckJudge {
    let store: CredentialStore
    let expectations: CheckExpectations
    let password: PasswordSource
    let skipSecrets: Bool
    let teamID: String?
    let keyID: String?
    /// Once the Secret Service is found out of reach, it is not asked again.
    private var secretServiceDown: CredentialError?

    init(
        store: CredentialStore,
        expectations: CheckExpectations,
        password: PasswordSource,
        skipSecrets: Bool,
        teamID: String?,
        keyID: String?
    ) {
        self.store = store
        self.expectations = expectations
        self.password = password
        self.skipSecrets = skipSecrets
        self.teamID = teamID
        self.keyID = keyID
    }

    func check(_ reference: CredentialReference) -> CheckResult {
        let name: String
        switch reference {
        case .stored(let credential): name = credential.alias
        case .file(let path): name = path
        }
        do {
            switch reference {
            case .file(let path) where TokenKeyFile.isTokenKeyPath(path):
                return try checkTokenKeyFile(path)
            case .file(let path):
                let file = try CredentialFile.read(path: path, password: password)
                return CredentialCheck.certificate(
                    file,
                    name: path,
                    origin: "file",
                    keyVerified: true,
                    expectations: expectations
                )
            case .stored(let credential) where credential.kind == .tokenKey:
                return checkStoredTokenKey(credential)
            case .stored(let credential):
                return try checkStoredCertificate(credential)
            }
        } catch let error as CredentialError {
            return .failed(name: name, origin: reference.origin, error: error.forCommandLine)
        } catch {
            return .failed(
                name: name,
                origin: reference.origin,
                error: CredentialError(.corrupt, path: name, "\(error)")
            )
        }
    }

    private func checkTokenKeyFile(_ path: String) throws -> CheckResult {
        if let teamID, !ProviderKey.isIdentifier(teamID) {
            throw CredentialError(
                .invalidTeamID,
                path: path,
                "The team ID \"\(teamID)\" is not 10 upper-case letters and digits."
            )
        }
        if let keyID, !ProviderKey.isIdentifier(keyID) {
            throw CredentialError(
                .invalidKeyID,
                path: path,
                "The key ID \"\(keyID)\" is not 10 upper-case letters and digits."
            )
        }
        let file = try TokenKeyFile(path: path, keyID: keyID)
        return CredentialCheck.tokenKey(
            TokenKeyFacts(file, teamId: teamID),
            keyPresent: nil,
            expectations: expectations
        )
    }

    private func checkStoredTokenKey(_ credential: StoredCredential) -> CheckResult {
        var present: Bool?
        var unverified: CredentialError?
        if !skipSecrets {
            if let down = secretServiceDown {
                unverified = down
            } else {
                do {
                    _ = try store.tokenKey(of: credential)
                    present = true
                } catch let error as CredentialError where error.code == .secretNotFound {
                    present = false
                } catch let error as CredentialError where Self.isUnreachable(error) {
                    secretServiceDown = error
                    unverified = error
                } catch {
                    // An incomplete entry (no team ID) is reported by its metadata finding.
                }
            }
        }
        var result = CredentialCheck.tokenKey(credential, keyPresent: present, expectations: expectations)
        if let unverified { result.findings.append(CredentialCheck.secretUnverified(unverified)) }
        return result
    }

    private func checkStoredCertificate(_ credential: StoredCredential) throws -> CheckResult {
        if !skipSecrets, secretServiceDown == nil {
            do {
                return CredentialCheck.certificate(
                    try store.identity(of: credential),
                    name: credential.alias,
                    origin: "store",
                    keyVerified: true,
                    expectations: expectations
                )
            } catch let error as CredentialError where Self.isUnreachable(error) {
                secretServiceDown = error
            }
        }
        // What the stored certificate file says, without its key.
        var result = CredentialCheck.certificate(
            try store.certificate(of: credential),
            name: credential.alias,
            origin: "store",
            keyVerified: false,
            expectations: expectations
        )
        if !skipSecrets, let down = secretServiceDown {
            result.findings.append(CredentialCheck.secretUnverified(down))
        }
        return result
    }

    static func isUnreachable(_ error: CredentialError) -> Bool {
        error.code == .secretStoreUnavailable || error.code == .secretStoreLocked
    }
}

/// `check --topic T` with no credential named: the stored credentials for T's app are judged;
/// the others are not.
struct CheckSelection {
    struct Skipped: Encodable {
        var name: String
        var judged: Bool
        var reason: String

        enum CodingKeys: String, CodingKey {
            case name = "credential"
            case judged, reason
        }
    }

    var topic: String
    /// The credentials for the topic's app, and token keys that record no topics (which may
    /// serve every app of their team).
    var candidates: [StoredCredential]
    /// Credentials for other apps: not judged.
    var others: [StoredCredential]

    init(topic: String, stored: [StoredCredential]) {
        self.topic = topic
        let related = { (credential: StoredCredential) in
            TopicScope.relates(credential.topics, to: topic)
                || (credential.kind == .tokenKey && credential.topics.isEmpty)
        }
        candidates = stored.filter(related)
        others = stored.filter { !related($0) }
    }

    /// Every credential not chosen, with why: judged and found unfit, or for another app.
    func skipped(judged results: [CheckResult]) -> [Skipped] {
        let unfit = results.filter { !$0.fit }.map { result in
            let why =
                result.error.map { "could not be checked: \($0.message)" }
                ?? result.findings.filter { $0.severity == .problem }.map(\.message).joined(separator: " ")
            return Skipped(name: result.name, judged: true, reason: why)
        }
        let unrelated = others.map { credential in
            let topics = credential.topics.isEmpty ? "no topic" : credential.topics.joined(separator: ", ")
            return Skipped(name: credential.alias, judged: false, reason: "for \(topics), not for \(topic)")
        }
        return unfit + unrelated
    }
}
