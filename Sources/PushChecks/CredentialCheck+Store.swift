import CredentialFormats
import Foundation
import PushStore

extension CredentialCheck {
    /// A Secret Service item of the store that no index entry names, as a check result.
    public static func orphanedSecret(_ item: SecretItem) -> CheckResult {
        var result = CheckResult.failed(
            name: "\(item.alias) (orphaned secret)",
            origin: "store",
            error: CredentialError(.storeError, "")
        )
        result.error = nil
        result.kind = item.kind == .tokenKey ? .tokenKey : .certificate
        result.sha256 = item.kind == .tokenKey ? nil : item.identifier
        result.keyID = item.kind == .tokenKey ? item.identifier : nil
        result.findings = [
            Finding(
                code: .orphanedSecret,
                severity: .problem,
                message:
                    "The Secret Service holds a secret of this store (\"\(item.label)\", \(item.kind.rawValue)) that no index entry names: an interrupted removal or import left it behind.",
                hint: "Remove the store's orphaned secrets."
            )
        ]
        return result
    }
}

extension CredentialCheck {
    /// A credential file of the store that its index does not name, as a check result.
    public static func unaccountedFile(_ path: String) -> CheckResult {
        var result = CheckResult.failed(
            name: "\((path as NSString).lastPathComponent) (unaccounted file)",
            origin: "store",
            error: CredentialError(.storeError, "")
        )
        result.error = nil
        result.findings = [
            Finding(
                code: .unaccountedFile,
                severity: .problem,
                message:
                    "The store's credentials folder holds \(path), which no index entry names; apnsctl leaves it alone. An index.json restored from an older backup leaves the newer credentials' files like this.",
                hint:
                    "Import that credential again from its original file (the store takes the file back), or move the file out of the store if it is not needed."
            )
        ]
        return result
    }
}
