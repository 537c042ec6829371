import Foundation

extension CredentialStore {
    /// What removing an alias removed.
    public enum AliasRemoval: Sendable {
        /// A pending certificate request, and whether its private key was still in the Secret Service.
        case request(PendingRequest, removedSecret: Bool)
        /// A credential: its entry, files and secret (or, without an entry, its orphaned secrets).
        case credential(Removal)
    }

    /// Removes what an alias names: a pending request with its key, else a credential.
    public func remove(named alias: String) async throws -> AliasRemoval {
        if try await pendingRequest(named: alias) != nil {
            let removed = try await removeRequest(alias: alias)
            return .request(removed.request, removedSecret: removed.removedSecret)
        }
        return .credential(try await remove(alias: alias))
    }
}
