import Foundation
import PushStore

/// Opens a store folder as whichever store it is. The store module knows nothing of team
/// stores: whoever opens a store (the command line, the exporter, a Swift server) chooses this
/// to have a team store opened as one.
///
/// ```swift
/// let store = await StoreOpener.open(root: CredentialStore.defaultRoot())
/// let credential = try CredentialLoader.load("com.example.app-universal", store: store)
/// ```
public enum StoreOpener {
    /// The store at `root`: a team store when the folder is one (its secrets in age files, every
    /// change committed and pushed), else the plain store with its secrets in the Secret Service.
    public static func open(
        root: URL,
        identityFile: String? = nil,
        notify: @escaping @Sendable (TeamPublication) -> Void = { _ in }
    ) async -> CredentialStore {
        guard TeamStore.isTeamStore(root) else { return CredentialStore(root: root) }
        return await TeamStore(root: root, identityFile: identityFile, notify: notify).credentialStore()
    }
}
