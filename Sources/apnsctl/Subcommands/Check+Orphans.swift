import Foundation
import PushCredentials

extension Check {
    /// The store's orphaned secrets, when the whole store is checked with its secrets: each is
    /// a result with a finding whose hint names the command that removes them.
    func orphanResults(_ store: CredentialStore) -> [CheckResult] {
        guard credentials.isEmpty, !skipSecrets else { return [] }
        do {
            let hint = "Remove them with `\(ErrorHints.command("remove", "--orphans"))`."
            return try store.orphanedSecrets().map { item in
                var result = CredentialCheck.orphanedSecret(item)
                result.findings = result.findings.map { finding in
                    var finding = finding
                    finding.hint = hint
                    return finding
                }
                return result
            }
        } catch let error as CredentialError
            where [.secretStoreUnavailable, .secretStoreLocked].contains(error.code)
        {
            // Each credential's own result already says the Secret Service could not be asked
            // (secret_unverified): one more "could not check" entry would only repeat it.
            return []
        } catch let error as CredentialError {
            return [.failed(name: "orphaned secrets", origin: "store", error: error.forCommandLine)]
        } catch {
            return [
                .failed(
                    name: "orphaned secrets",
                    origin: "store",
                    error: CredentialError(.secretStoreUnavailable, path: nil, UserFacing.describe(error))
                )
            ]
        }
    }

    /// Credential files the index does not name (an older index.json restored, say), when the
    /// whole store is checked. They need no Secret Service to find.
    func unaccountedResults(_ store: CredentialStore) -> [CheckResult] {
        guard credentials.isEmpty else { return [] }
        return ((try? store.unaccountedFiles()) ?? []).map(CredentialCheck.unaccountedFile)
    }
}
