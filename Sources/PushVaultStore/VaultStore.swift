import CredentialFormats
import Foundation
import PushStore
import PushVault

/// A credential store in Vault or OpenBao, named `vault:MOUNT/PREFIX` (`vault:secret/apnsctl`):
/// its index and files in the KV version 2 mount MOUNT under PREFIX (``VaultMedium``), its
/// secrets beside them and its token keys in Transit (``VaultSecretStore``).
///
/// ```swift
/// let store = try VaultStore.open("vault:secret/apnsctl")   // VAULT_ADDR, VAULT_TOKEN, …
/// let credential = try await CredentialLoader.load("com.example.app-universal", store: store)
/// ```
public enum VaultStore {
    /// The scheme that names a store in Vault.
    public static let scheme = "vault:"
    /// The prefix when the location names a mount only (`vault:secret`).
    public static let defaultPrefix = "apnsctl"
    /// Where token keys are imported when `APNSCTL_VAULT_TRANSIT` names no other mount.
    public static let defaultTransitMount = "transit"

    /// Whether `location` names a store in Vault rather than a folder.
    public static func isVaultLocation(_ location: String) -> Bool { location.hasPrefix(scheme) }

    /// The mount and prefix `location` names; throws, saying what is wrong, for one that cannot be used.
    public static func parse(_ location: String) throws -> (mount: String, prefix: String) {
        let rest = location.dropFirst(scheme.count).trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_."))
        let valid =
            !rest.isEmpty
            && parts.allSatisfy { part in
                !part.isEmpty && part != "." && part != ".." && part.unicodeScalars.allSatisfy(allowed.contains)
            }
        guard isVaultLocation(location), valid else {
            throw CredentialError(
                .invalidArgument,
                "The store \(location) is not a Vault location: give vault:MOUNT/PREFIX, its parts made of letters, digits, '-', '_' and '.'.",
                hint:
                    "For example vault:secret/apnsctl: KV version 2 mounted at secret/, the store's entries under apnsctl/."
            )
        }
        return (parts[0], parts.count > 1 ? parts.dropFirst().joined(separator: "/") : defaultPrefix)
    }

    /// Opens the store `location` with the server, token and CA the environment gives, as
    /// Vault's own clients read them (docs/vault.md). Nothing is asked of the server yet.
    public static func open(
        _ location: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> CredentialStore {
        let (mount, prefix) = try parse(location)
        let client: VaultClient
        do {
            client = try VaultClient(configuration: .fromEnvironment(environment))
        } catch let error as VaultError {
            throw error.reportable
        }
        let transit = environment["APNSCTL_VAULT_TRANSIT"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultTransitMount
        let secrets = VaultSecretStore(client: client, kvMount: mount, prefix: prefix, transitMount: transit)
        return CredentialStore(medium: VaultMedium(kv: client.kv(mount: mount), prefix: prefix), secrets: secrets)
    }
}
