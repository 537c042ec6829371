import Foundation

extension CredentialCheck {
    /// A Secret Service item of the store that no index entry names, as a check result.
    public static func orphanedSecret(_ item: SecretItem) -> CheckResult {
        var result = CheckResult.failed(
            name: "\(item.alias) (orphaned secret)",
            origin: "store",
            error: CredentialError(.storeError, path: nil, "")
        )
        result.error = nil
        result.kind = item.kind == .tokenKey ? .tokenKey : .certificate
        result.sha256 = item.kind == .tokenKey ? nil : item.identifier
        result.keyId = item.kind == .tokenKey ? item.identifier : nil
        result.findings = [
            Finding(
                code: "orphaned_secret",
                severity: .problem,
                message:
                    "The Secret Service holds a secret of this store (\"\(item.label)\", \(item.kind.rawValue)) that no index entry names: an interrupted removal or import left it behind.",
                hint: "Remove the store's orphaned secrets."
            )
        ]
        return result
    }
}
