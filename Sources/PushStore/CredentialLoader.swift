import CredentialFormats
import Foundation

/// Loads the credential a person names: a stored alias, a certificate file read with a
/// password, or a `.p8` token key with its team ID (and key ID, unless the file name has it).
///
/// ```swift
/// let stored = try await CredentialLoader.load("com.example.app-universal", store: store)
/// let file = try await CredentialLoader.load("app.p12", store: store, password: .environment("P12_PASSWORD"))
/// ```
public struct CredentialLoader: Sendable {
    public var store: CredentialStore
    public var password: PasswordSource
    public var teamID: String?
    public var keyID: String?

    public init(store: CredentialStore, password: PasswordSource = .none, teamID: String? = nil, keyID: String? = nil) {
        self.store = store
        self.password = password
        self.teamID = teamID
        self.keyID = keyID
    }

    /// Loads `argument` (an alias of `store`, else a file) in one call. The store `apnsctl` uses
    /// is at ``CredentialStore/defaultRoot(explicit:environment:)``; PushTeam's `StoreOpener`
    /// opens it as a team store when it is one.
    public static func load(
        _ argument: String,
        store: CredentialStore,
        password: PasswordSource = .none,
        teamID: String? = nil,
        keyID: String? = nil
    ) async throws -> LoadedCredential {
        try await CredentialLoader(store: store, password: password, teamID: teamID, keyID: keyID).load(argument)
    }

    public func load(_ argument: String) async throws -> LoadedCredential {
        switch try await CredentialReference.resolve(argument, store: store) {
        case .stored(let stored):
            return try await load(stored)
        case .file(let path) where TokenKeyFile.isTokenKeyPath(path):
            guard let teamID else {
                throw CredentialError(
                    .teamIDRequired,
                    path: path,
                    "A token key file needs its team ID.",
                    hint: "Give the key's team ID (Apple Developer portal > Membership details)."
                )
            }
            let keyID = keyID
            let key = try await BlockingPool.run { try ProviderKey(path: path, teamID: teamID, keyID: keyID) }
            return LoadedCredential(name: path, key: key)
        case .file(let path):
            let password = password
            let file = try await BlockingPool.run { try CredentialFile.read(path: path, password: password) }
            return try LoadedCredential(name: path, file: file)
        }
    }

    /// Loads a credential of the store's index: its secret comes from the Secret Service (or
    /// the team store's age file).
    public func load(_ stored: StoredCredential) async throws -> LoadedCredential {
        var loaded: LoadedCredential
        if stored.kind == .tokenKey, let remote = try await store.remoteTokenKey(of: stored) {
            loaded = LoadedCredential(
                name: stored.alias,
                remoteKey: remote,
                environments: stored.environments,
                topics: stored.topics
            )
        } else if stored.kind == .tokenKey {
            loaded = LoadedCredential(
                name: stored.alias,
                key: try await store.tokenKey(of: stored),
                environments: stored.environments,
                topics: stored.topics
            )
        } else {
            loaded = try LoadedCredential(name: stored.alias, file: try await store.identity(of: stored))
        }
        loaded.isStored = true
        return loaded
    }
}
