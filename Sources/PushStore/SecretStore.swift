import CredentialFormats
import Foundation

/// Where a credential's secret (a PKCS#12 password or a private key) lives.
///
/// The attributes are chosen so that a person can find the item with `secret-tool`:
///
///     secret-tool lookup application apnsctl store STORE_PATH alias ALIAS
public struct SecretItem: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Codable {
        /// The password of a PKCS#12 bundle kept in the store folder.
        case pkcs12Password = "pkcs12-password"
        /// A certificate's private key (PKCS#8 DER, base64) when the bundle had no password.
        case privateKey = "private-key"
        /// A token-authentication key (PKCS#8 DER of the P-256 key, base64).
        case tokenKey = "token-key"
        /// A team member's age identity, the `AGE-SECRET-KEY-1…` line as age reads it (text).
        case teamIdentity = "team-identity"
        /// A team member's signing key, an OpenSSH private key file as `ssh-keygen -Y sign` reads it (text).
        case signingKey = "signing-key"
    }

    public var store: String
    public var alias: String
    public var kind: Kind
    /// SHA-256 of the certificate (hex, no colons) or the token key's key ID.
    public var identifier: String

    public init(store: String, alias: String, kind: Kind, identifier: String) {
        self.store = store
        self.alias = alias
        self.kind = kind
        self.identifier = identifier
    }

    public var label: String { "apnsctl: \(alias)" }

    var attributes: [String: String] {
        var attributes = ["application": "apnsctl", "store": store, "alias": alias, "kind": kind.rawValue]
        attributes[kind == .tokenKey ? "key-id" : "fingerprint"] = identifier
        return attributes
    }
}

/// The system's secret store. Its calls are awaited: a store that waits (on D-Bus, a program,
/// a server) does so on ``BlockingPool`` or without a thread, never on its caller's.
public protocol SecretStore: Sendable {
    func store(_ secret: SecretBytes, for item: SecretItem) async throws
    func lookup(_ item: SecretItem) async throws -> SecretBytes?
    /// The secrets of many items at once, for a command that reads a whole store. An item left
    /// out of the answer was not read (missing, locked, or its read failed): ask for it alone,
    /// which answers or says why.
    func lookup(_ items: [SecretItem]) async throws -> [SecretItem: SecretBytes]
    /// The batch lookup above and, where the same read finds them, every item of each
    /// store the items belong to (what ``items(store:)`` would list): a check over a whole store
    /// reads its secrets and looks for orphaned ones in one search. A store missing from `listed`
    /// was not listed: ask ``items(store:)``.
    func lookupListing(
        _ items: [SecretItem]
    ) async throws -> (
        secrets: [SecretItem: SecretBytes], listed: [String: [SecretItem]]
    )
    /// Returns whether an item was removed.
    @discardableResult func remove(_ item: SecretItem) async throws -> Bool
    /// Throws, saying why, when the store cannot be used now.
    func checkAvailable() async throws
    /// Every item kept for the store folder `store` (to find secrets no index entry names).
    func items(store: String) async throws -> [SecretItem]
    /// Where an item is kept, as a clause for messages ("in the Secret Service (label …)").
    func placeOf(_ item: SecretItem) -> String
    /// A token key this store holds and never gives back (it signs inside, as Vault's Transit
    /// does): its provider tokens come from the store. Nil when the store keeps the key's bytes
    /// (``lookup(_:)`` gives them), or does not hold it.
    func remoteTokenKey(for item: SecretItem, keyID: String, teamID: String) async throws -> RemoteProviderKey?
}

extension SecretStore {
    /// Item by item, for a store that has no cheaper way; what fails is left out for the caller
    /// to ask again alone.
    public func lookup(_ items: [SecretItem]) async throws -> [SecretItem: SecretBytes] {
        var found: [SecretItem: SecretBytes] = [:]
        for item in Set(items) {
            if let secret = try? await lookup(item) { found[item] = secret }
        }
        return found
    }

    /// The batch lookup alone: a store that lists its items apart lists nothing here.
    public func lookupListing(
        _ items: [SecretItem]
    ) async throws -> (
        secrets: [SecretItem: SecretBytes], listed: [String: [SecretItem]]
    ) {
        (try await lookup(items), [:])
    }

    public func placeOf(_ item: SecretItem) -> String { "in the Secret Service (label \"\(item.label)\")" }

    public func remoteTokenKey(for item: SecretItem, keyID: String, teamID: String) async throws -> RemoteProviderKey? {
        nil
    }
}
