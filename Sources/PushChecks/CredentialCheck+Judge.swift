import CredentialFormats
import Foundation
import PushStore

/// Judges one credential: a stored alias (with its key from the Secret Service unless told not
/// to), a certificate file, or a token key file. One judge serves a whole check, so that a Secret
/// Service found out of reach is not asked again for every credential.
public final class CheckJudge {
    public let store: CredentialStore
    public let expectations: CheckExpectations
    public let password: PasswordSource
    public let skipSecrets: Bool
    /// Token key files: the team and key ID a person gave (a `.p8` records neither).
    public let teamID: String?
    public let keyID: String?
    /// Once the Secret Service is found out of reach, it is not asked again.
    private var secretServiceDown: CredentialError?

    public init(
        store: CredentialStore,
        expectations: CheckExpectations,
        password: PasswordSource = .none,
        skipSecrets: Bool = false,
        teamID: String? = nil,
        keyID: String? = nil
    ) {
        self.store = store
        self.expectations = expectations
        self.password = password
        self.skipSecrets = skipSecrets
        self.teamID = teamID
        self.keyID = keyID
    }

    /// The credential judged against the expectations; never throws: what could not be judged is
    /// a result with an error.
    public func check(_ reference: CredentialReference) async -> CheckResult {
        let name: String
        switch reference {
        case .stored(let credential): name = credential.alias
        case .file(let path): name = path
        }
        var result: CheckResult
        do {
            switch reference {
            case .file(let path) where TokenKeyFile.isTokenKeyPath(path):
                result = try checkTokenKeyFile(path)
            case .file(let path):
                let password = password
                let file = try await BlockingPool.run { try CredentialFile.read(path: path, password: password) }
                result = CredentialCheck.certificate(
                    file,
                    name: path,
                    origin: "file",
                    keyVerified: true,
                    expectations: expectations
                )
            case .stored(let credential) where credential.kind == .tokenKey:
                result = await checkStoredTokenKey(credential)
            case .stored(let credential):
                result = try await checkStoredCertificate(credential)
            }
        } catch let error as CredentialError {
            result = .failed(name: name, origin: reference.origin, error: error)
        } catch {
            result = .failed(
                name: name,
                origin: reference.origin,
                error: CredentialError(.corrupt, path: name, "\(error)")
            )
        }
        result.expectedTopic = expectations.topic
        return result
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
            TokenKeyFacts(file, teamID: teamID),
            keyPresent: nil,
            expectations: expectations
        )
    }

    private func checkStoredTokenKey(_ credential: StoredCredential) async -> CheckResult {
        var present: Bool?
        var unverified: CredentialError?
        var tampered: CredentialError?
        var missing: CredentialError?
        if !skipSecrets {
            if let down = secretServiceDown {
                unverified = down
            } else {
                do {
                    // A key its store never gives back is present when the store holds it.
                    if try await store.remoteTokenKey(of: credential) == nil {
                        _ = try await store.tokenKey(of: credential)
                    }
                    present = true
                } catch let error as CredentialError where error.code == .secretNotFound {
                    present = false
                    missing = error
                } catch let error as CredentialError where Self.isUnreachable(error) {
                    secretServiceDown = error
                    unverified = error
                } catch let error as CredentialError where CredentialCheck.isUnverifiable(error) {
                    unverified = error
                } catch let error as CredentialError where error.code == .tampered {
                    tampered = error
                } catch {
                    // An incomplete entry (no team ID) is reported by its metadata finding.
                }
            }
        }
        var result = CredentialCheck.tokenKey(credential, keyPresent: present, expectations: expectations)
        if let unverified { result.findings.append(CredentialCheck.secretUnverified(unverified)) }
        if let tampered { result.findings.append(CredentialCheck.secretTampered(tampered)) }
        if let missing, let index = result.findings.firstIndex(where: { $0.code == .secretMissing }) {
            // Where the key should be, in the store's own words (the Secret Service, an age file).
            result.findings[index].message = missing.message
        }
        return result
    }

    private func checkStoredCertificate(_ credential: StoredCredential) async throws -> CheckResult {
        var unreadable: Finding?
        if !skipSecrets, secretServiceDown == nil {
            do {
                return CredentialCheck.certificate(
                    try await store.identity(of: credential),
                    name: credential.alias,
                    origin: "store",
                    keyVerified: true,
                    expectations: expectations
                )
            } catch let error as CredentialError where Self.isUnreachable(error) {
                secretServiceDown = error
            } catch let error as CredentialError where CredentialCheck.isUnverifiable(error) {
                unreadable = CredentialCheck.secretUnverified(error)
            } catch let error as CredentialError where error.code == .tampered {
                unreadable = CredentialCheck.secretTampered(error)
            }
        }
        // What the stored certificate file says, without its key.
        var result = CredentialCheck.certificate(
            try await store.certificate(of: credential),
            name: credential.alias,
            origin: "store",
            keyVerified: false,
            expectations: expectations
        )
        if !skipSecrets, let down = secretServiceDown {
            result.findings.append(CredentialCheck.secretUnverified(down))
        }
        if let unreadable { result.findings.append(unreadable) }
        return result
    }

    /// Told that the Secret Service could not be asked (by a batch read before the first
    /// credential): it is not asked again, as after a credential's own lookup found that.
    func knowUnreachable(_ error: CredentialError) {
        if secretServiceDown == nil { secretServiceDown = error }
    }

    /// The same judge for other expectations (another app's topic), sharing what it learnt of the Secret Service.
    public func with(expectations: CheckExpectations) -> CheckJudge {
        let judge = CheckJudge(
            store: store,
            expectations: expectations,
            password: password,
            skipSecrets: skipSecrets,
            teamID: teamID,
            keyID: keyID
        )
        judge.secretServiceDown = secretServiceDown
        return judge
    }

    /// Whether the Secret Service could not be asked at all (not running, or locked).
    public static func isUnreachable(_ error: CredentialError) -> Bool {
        error.code == .secretStoreUnavailable || error.code == .secretStoreLocked
    }
}
