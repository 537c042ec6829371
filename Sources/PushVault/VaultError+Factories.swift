import Foundation

extension VaultError {
    /// The server could not be reached (refused, no route, name not found) or did not answer
    /// within `seconds`.
    @inline(never)
    public static func unreachable(
        address: String,
        path: String? = nil,
        reason: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> VaultError {
        VaultError(
            .unreachable,
            "Vault at \(address) cannot be reached: \(reason).",
            hint: "Check VAULT_ADDR and that the server is running and reachable from here.",
            subject: Subject(address: address, path: path),
            file: file,
            line: line
        )
    }

    /// The server is sealed.
    @inline(never)
    public static func sealed(
        address: String,
        path: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    )
        -> VaultError
    {
        VaultError(
            .sealed,
            "Vault at \(address) is sealed: it can read, write and sign nothing until it is unsealed.",
            hint: "An operator unseals it (with the unseal keys, or its auto-unseal mechanism).",
            subject: Subject(address: address, path: path),
            file: file,
            line: line
        )
    }

    /// The token's policies do not grant `capability` on `path`.
    @inline(never)
    public static func permissionDenied(
        address: String,
        path: String,
        capability: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> VaultError {
        VaultError(
            .permissionDenied,
            "Permission denied: the token's policies do not grant \"\(capability)\" on \(path).",
            hint: "Add a policy with path \"\(path)\" { capabilities = [\"\(capability)\"] } to the token's role.",
            subject: Subject(address: address, path: path, capability: capability),
            file: file,
            line: line
        )
    }

    /// A change of a store refused to a token whose policies only read it (a reader's or the
    /// exporter's): the change wants a writer's token, not a reader's policy widened.
    @inline(never)
    public static func readOnlyToken(
        address: String,
        path: String,
        capability: String,
        store: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> VaultError {
        VaultError(
            .permissionDenied,
            "Permission denied: this token may read the store \(store) but not change it (its policies do not grant \"\(capability)\" on \(path)); nothing was changed.",
            hint:
                "Run the command with a writer's token (a token with the apnsctl-writer policy of docs/vault-policies/writer.hcl, in VAULT_TOKEN or from vault login); leave the reader's policy as it is, so that servers cannot change the store.",
            subject: Subject(address: address, path: path, capability: capability),
            file: file,
            line: line
        )
    }

    /// No token in any of the places looked at.
    @inline(never)
    public static func tokenMissing(address: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(
            .tokenMissing,
            "No Vault token was given.",
            hint:
                "Set VAULT_TOKEN or VAULT_TOKEN_FILE (Vault Agent's sink file), VAULT_ROLE_ID with VAULT_SECRET_ID for AppRole, or log in with the vault CLI (~/.vault-token).",
            subject: Subject(address: address),
            file: file,
            line: line
        )
    }

    /// The token is expired, revoked or mistyped.
    @inline(never)
    public static func tokenInvalid(
        address: String,
        path: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> VaultError {
        VaultError(
            .tokenInvalid,
            "The Vault token is not valid: it expired, was revoked, or is mistyped.",
            hint: "Get a new token (log in again, or check that Vault Agent is renewing its sink file).",
            subject: Subject(address: address, path: path),
            file: file,
            line: line
        )
    }

    /// AppRole login refused.
    @inline(never)
    public static func loginFailed(
        address: String,
        path: String,
        reason: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> VaultError {
        VaultError(
            .loginFailed,
            "AppRole login at \(path) was refused: \(reason).",
            hint: "Check the role ID and secret ID (a secret ID may be used up or expired).",
            subject: Subject(address: address, path: path),
            file: file,
            line: line
        )
    }

    /// The mount is KV version 1.
    @inline(never)
    public static func kvVersion1(
        address: String,
        mount: String,
        file: String = #fileID,
        line: UInt = #line
    )
        -> VaultError
    {
        VaultError(
            .kvVersion1,
            "The secrets engine at \(mount)/ is KV version 1: it keeps no versions and has no check-and-set.",
            hint: "Use a KV version 2 mount (vault secrets enable -version=2 -path=\(mount) kv), or upgrade this one.",
            subject: Subject(address: address, path: mount),
            file: file,
            line: line
        )
    }

    /// No Transit engine at `mount`.
    @inline(never)
    public static func transitNotMounted(
        address: String,
        mount: String,
        path: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> VaultError {
        VaultError(
            .transitNotMounted,
            "No Transit secrets engine is mounted at \(mount)/.",
            hint: "Enable it (vault secrets enable -path=\(mount) transit) or give the right mount.",
            subject: Subject(address: address, path: path),
            file: file,
            line: line
        )
    }

    /// Another writer won a check-and-set write.
    @inline(never)
    public static func casMismatch(
        address: String,
        path: String,
        expected: Int,
        file: String = #fileID,
        line: UInt = #line
    ) -> VaultError {
        let what =
            expected == 0 ? "the entry was to be created, but it exists" : "version \(expected) is no longer the latest"
        return VaultError(
            .casMismatch,
            "Another writer changed \(path) first (check-and-set parameter did not match: \(what)).",
            hint: "Read the entry again and decide on its new contents.",
            subject: Subject(address: address, path: path),
            file: file,
            line: line
        )
    }

    /// Nothing at `path`.
    @inline(never)
    public static func notFound(
        address: String,
        path: String,
        file: String = #fileID,
        line: UInt = #line
    )
        -> VaultError
    {
        VaultError(
            .notFound,
            "Nothing is stored at \(path).",
            hint: nil,
            subject: Subject(address: address, path: path),
            file: file,
            line: line
        )
    }

    /// Vault refused the request, with its own words.
    @inline(never)
    public static func rejected(
        address: String,
        path: String,
        status: Int,
        reason: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> VaultError {
        VaultError(
            .rejected,
            "Vault refused the request to \(path) (HTTP \(status)): \(reason).",
            hint: nil,
            subject: Subject(address: address, path: path),
            file: file,
            line: line
        )
    }

    /// The answer is not what Vault sends.
    @inline(never)
    public static func badResponse(
        address: String,
        path: String?,
        reason: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> VaultError {
        VaultError(
            .badResponse,
            "The answer from \(address) is not what Vault sends: \(reason).",
            hint: "Check that VAULT_ADDR names a Vault or OpenBao server, not a proxy or another service.",
            subject: Subject(address: address, path: path),
            file: file,
            line: line
        )
    }

    /// A setting that cannot be used.
    @inline(never)
    public static func invalidConfiguration(
        address: String,
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> VaultError {
        VaultError(
            .invalidConfiguration,
            message,
            hint: hint,
            subject: Subject(address: address),
            file: file,
            line: line
        )
    }
}
